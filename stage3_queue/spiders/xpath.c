/* xpath.c — libxml2's HTML parse and XPath for spiders (xpath.h). */
#include "xpath.h"

#include <libxml/HTMLparser.h>
#include <libxml/HTMLtree.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

struct xpath_doc {
    htmlDocPtr doc;
    xmlXPathContextPtr ctx;
    unsigned long ops; /* the last evaluation's operations */
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

/* XPath 1.0's core function library (XPath 1.0, section 4): the only functions an
 * expression may call. libxml2 knows more (and a lookup could add others); an unknown
 * one is an error only when evaluated, so this is checked before. */
static const char *const core[] = {
    "last",
    "position",
    "count",
    "id",
    "local-name",
    "namespace-uri",
    "name",
    "string",
    "concat",
    "starts-with",
    "contains",
    "substring-before",
    "substring-after",
    "substring",
    "string-length",
    "normalize-space",
    "translate",
    "boolean",
    "not",
    "true",
    "false",
    "lang",
    "number",
    "sum",
    "floor",
    "ceiling",
    "round",
};
static const char *const node_types[] = {"comment", "text", "processing-instruction", "node"};

static bool in_list(const char *const *list, size_t n, const char *s, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(list[i]) == len && strncmp(list[i], s, len) == 0)
            return true;
    return false;
}

static bool name_start(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

static bool name_char(unsigned char c)
{
    return name_start(c) || (c >= '0' && c <= '9') || c == '-' || c == '.';
}

/* XPath 1.0's lexical rules (section 3.7) over expr, for what libxml2's compiler lets
 * through: a call of a function outside the core library, and brackets left open
 * (libxml2 2.9 compiles "count(" without a word). after_operand: the token before may
 * end an operand, so that a name is an operator (and, or, div, mod) and * multiplies. */
static int check_tokens(const char *expr, char *err, size_t errlen)
{
    const char *p = expr;
    bool after_operand = false;
    int depth = 0;
    while (*p) {
        unsigned char c = (unsigned char)*p;
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            p++;
        } else if (c == '"' || c == '\'') {
            const char *end = strchr(p + 1, c);
            if (!end)
                return 0; /* the compiler says so */
            p = end + 1;
            after_operand = true;
        } else if ((c >= '0' && c <= '9') || (c == '.' && p[1] >= '0' && p[1] <= '9')) {
            while ((*p >= '0' && *p <= '9') || *p == '.')
                p++;
            after_operand = true;
        } else if (c == '$') {
            for (p++; name_char((unsigned char)*p) || *p == ':'; p++)
                ;
            after_operand = true;
        } else if (name_start(c)) {
            const char *name = p;
            while (name_char((unsigned char)*p))
                p++;
            if (*p == ':' && p[1] == '*') { /* prefix:* */
                p += 2;
                after_operand = true;
                continue;
            }
            if (*p == ':' && p[1] != ':')
                for (p++; name_char((unsigned char)*p); p++)
                    ;
            size_t len = (size_t)(p - name);
            if (after_operand) { /* an operator name */
                after_operand = false;
                continue;
            }
            const char *q = p;
            while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')
                q++;
            if (*q == '(' && !in_list(node_types, 4, name, len)
                && !in_list(core, sizeof core / sizeof *core, name, len)) {
                snprintf(err, errlen,
                         "bad XPath '%s': %.*s() is not a function of XPath 1.0's core library",
                         expr, (int)len, name);
                return -1;
            }
            /* a function or node type (its '(' follows), an axis (its '::'), or a name
             * test */
            after_operand = *q != '(' && !(q[0] == ':' && q[1] == ':');
        } else if (c == '*') {
            p++;
            after_operand = !after_operand; /* multiply, or the name test * */
        } else if (c == ')' || c == ']') {
            if (--depth < 0)
                return 0; /* the compiler says so */
            p++;
            after_operand = true;
        } else if (c == '.') {
            p += p[1] == '.' ? 2 : 1;
            after_operand = true;
        } else {
            if (c == '(' || c == '[')
                depth++;
            p += (c == '/' && p[1] == '/') || (c == ':' && p[1] == ':')
                    || ((c == '!' || c == '<' || c == '>') && p[1] == '=')
                ? 2
                : 1;
            after_operand = false;
        }
    }
    if (depth > 0) {
        snprintf(err, errlen, "bad XPath '%s': a '(' or '[' is not closed", expr);
        return -1;
    }
    return 0;
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
    return check_tokens(expr, err, errlen);
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

unsigned long xpath_ops(const xpath_doc *d)
{
    return d->ops;
}

int xpath_eval(xpath_doc *d, const char *expr, int (*fn)(void *ctx, const char *s, size_t len),
               void *ctx, char *err, size_t errlen)
{
    d->ops = 0;
    if (xpath_check(expr, err, errlen) < 0)
        return -1;
    quiet();
    d->ctx->opLimit = XPATH_OP_LIMIT;
    d->ctx->opCount = 0;
    xmlXPathObjectPtr r = xmlXPathEvalExpression((const xmlChar *)expr, d->ctx);
    d->ops = d->ctx->opCount;
    if (!r) {
        if (d->ops >= XPATH_OP_LIMIT)
            snprintf(err, errlen, "XPath '%s' over its limit of %d operations", expr,
                     XPATH_OP_LIMIT);
        else
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
