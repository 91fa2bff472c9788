/* xpath.c — libxml2's HTML parse and XPath for spiders (xpath.h). */
#include "xpath.h"

#include <libxml/HTMLparser.h>
#include <libxml/HTMLtree.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

struct xpath_doc {
    htmlDocPtr doc;
    xmlXPathContextPtr ctx;
};

/* libxml2 reports XPath errors through the process-wide handlers: kept here for err
 * instead of printed (the loop thread is the only one that evaluates). */
static char last_error[256];

static void keep_error(void *ctx, const xmlError *e)
{
    (void)ctx;
    if (e && e->message && !last_error[0]) {
        snprintf(last_error, sizeof last_error, "%s", e->message);
        size_t n = strlen(last_error);
        while (n > 0 && (last_error[n - 1] == '\n' || last_error[n - 1] == ' '))
            last_error[--n] = '\0';
    }
}

static void quiet(void)
{
    last_error[0] = '\0';
    xmlSetStructuredErrorFunc(NULL, (xmlStructuredErrorFunc)keep_error);
}

xpath_doc *xpath_parse(const char *body, size_t len, const char *charset, const char *url)
{
    xpath_doc *d = xcalloc(1, sizeof *d);
    quiet();
    if (len > 0 && len <= (size_t)INT32_MAX)
        d->doc = htmlReadMemory(body, (int)len, url, charset,
                                HTML_PARSE_RECOVER | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING
                                    | HTML_PARSE_NONET | HTML_PARSE_COMPACT);
    if (!d->doc)
        d->doc = htmlNewDocNoDtD(NULL, NULL);
    if (!d->doc || !(d->ctx = xmlXPathNewContext(d->doc)))
        alloc_oom(0);
    return d;
}

void xpath_doc_free(xpath_doc *d)
{
    if (!d)
        return;
    xmlXPathFreeContext(d->ctx);
    xmlFreeDoc(d->doc);
    free(d);
}

static void say(const char *expr, char *err, size_t errlen)
{
    snprintf(err, errlen, "bad XPath '%s': %s", expr,
             last_error[0] ? last_error : "it does not compile");
}

int xpath_check(const char *expr, char *err, size_t errlen)
{
    quiet();
    xmlXPathCompExprPtr c = xmlXPathCompile((const xmlChar *)expr);
    if (!c) {
        say(expr, err, errlen);
        return -1;
    }
    xmlXPathFreeCompExpr(c);
    return 0;
}

/* One string to fn: 1 when fn says stop. */
static int give(xmlChar *s, int (*fn)(void *, const char *, size_t), void *ctx)
{
    if (!s)
        alloc_oom(0);
    int stop = fn(ctx, (const char *)s, strlen((const char *)s));
    xmlFree(s);
    return stop;
}

int xpath_eval(xpath_doc *d, const char *expr, int (*fn)(void *ctx, const char *s, size_t len),
               void *ctx, char *err, size_t errlen)
{
    quiet();
    xmlXPathObjectPtr r = xmlXPathEvalExpression((const xmlChar *)expr, d->ctx);
    if (!r) {
        say(expr, err, errlen);
        return -1;
    }
    if (r->type == XPATH_NODESET) {
        xmlNodeSetPtr ns = r->nodesetval;
        for (int i = 0; ns && i < ns->nodeNr; i++)
            if (give(xmlXPathCastNodeToString(ns->nodeTab[i]), fn, ctx))
                break;
    } else {
        give(xmlXPathCastToString(r), fn, ctx);
    }
    xmlXPathFreeObject(r);
    return 0;
}
