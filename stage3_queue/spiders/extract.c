/* extract.c — --extract NAME=XPATH as a spider (extract.h). */
#include "extract.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"
#include "report.h"
#include "xpath.h"
#include "extension.h"

/* The item's keys in item()'s order (luajson.c: sorted by their bytes), the page's
 * "url" among them: field i is names[i], its XPath xpaths[i] (NULL: the url). */
typedef struct extract {
    char **names;
    const char **xpaths;
    size_t n;
} extract;

int extract_check(const char *arg, char *err, size_t errlen)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg) {
        snprintf(err, errlen, "--extract '%s': give NAME=XPATH", arg);
        return -1;
    }
    if (eq - arg == 3 && strncmp(arg, "url", 3) == 0) {
        snprintf(err, errlen, "--extract '%s': the name url is the page's own", arg);
        return -1;
    }
    char why[400];
    if (xpath_check(eq + 1, why, sizeof why) < 0) {
        snprintf(err, errlen, "--extract '%s': %s", arg, why);
        return -1;
    }
    return 0;
}

static int first(void *ctx, const char *s, size_t len)
{
    (void)len;
    *(char **)ctx = xstrdup(s);
    return 1;
}

static bool is_html(const response *r)
{
    const char *ct = response_header(r, "Content-Type");
    if (!ct)
        return false;
    size_t n = strcspn(ct, "; \t");
    return (n == 9 && strncasecmp(ct, "text/html", 9) == 0)
        || (n == 21 && strncasecmp(ct, "application/xhtml+xml", 21) == 0);
}

/* The default spider's links, and an item for an HTML page with a 2xx status. */
static coro *extract_parse(void *self, const spider_response *resp, spider_outputs *out)
{
    extract *x = self;
    const response *r = resp->response;
    spider_follow_links(out, resp);
    if (r->status < 200 || r->status > 299 || !is_html(r))
        return NULL;
    char *json = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&json, &len);
    if (!m)
        alloc_oom(0);
    xpath_doc *d = xpath_parse(r->body ? r->body : "", r->body_len, resp->encoding, r->url);
    fputc('{', m);
    for (size_t i = 0; i < x->n; i++) {
        const char *name = x->names[i];
        char *value = NULL, err[512];
        /* checked: it compiles; it may still fail (over its operations): the field is
         * null and the record says why */
        if (!x->xpaths[i])
            value = xstrdup(resp->request->url);
        else if (xpath_eval(d, x->xpaths[i], first, &value, err, sizeof err) < 0)
            spider_fail(out, "spider error: --extract %s: %s", name, err);
        if (i > 0)
            fputc(',', m);
        json_write_string(m, name);
        fputc(':', m);
        json_write_string(m, value);
        free(value);
    }
    fputc('}', m);
    if (fclose(m) != 0)
        alloc_oom(0);
    xpath_doc_free(d);
    spider_emit_item(out, json);
    free(json);
    return NULL;
}

static void extract_free(void *self)
{
    extract *x = self;
    for (size_t i = 0; i < x->n; i++)
        free(x->names[i]);
    free(x->names);
    free(x->xpaths);
    free(x);
}

/* NAME=XPATH's place among the keys: by the names' bytes, as item()'s are sorted; a
 * NAME given twice is one key, the last XPath (as a table's key set twice). */
static void insert_key(extract *x, char *name, const char *xpath)
{
    for (size_t k = 0; k < x->n; k++)
        if (strcmp(x->names[k], name) == 0) {
            x->xpaths[k] = xpath;
            free(name);
            return;
        }
    size_t i = x->n;
    while (i > 0 && strcmp(x->names[i - 1], name) > 0) {
        x->names[i] = x->names[i - 1];
        x->xpaths[i] = x->xpaths[i - 1];
        i--;
    }
    x->names[i] = name;
    x->xpaths[i] = xpath;
    x->n++;
}

spider extract_spider(const char *const *args, size_t n)
{
    extract *x = xcalloc(1, sizeof *x);
    x->names = xcalloc(n + 1, sizeof *x->names);
    x->xpaths = xcalloc(n + 1, sizeof *x->xpaths);
    insert_key(x, xstrdup("url"), NULL);
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr(args[i], '=');
        insert_key(x, xstrndup(args[i], (size_t)(eq - args[i])), eq + 1);
    }
    return (spider){.name = "extract",
                    .self = x,
                    .wants_body = true,
                    .parse = extract_parse,
                    .free = extract_free};
}

/* ---- the descriptor (extension.h) ---- */

static bool on(const settings *s)
{
    return s->extract.n > 0;
}

static int make(engine *e, const settings *s, spider *out, char *err, size_t errlen)
{
    (void)e, (void)err, (void)errlen;
    *out = extract_spider(s->extract.v, s->extract.n);
    return 0;
}

/* The descriptor (extension.h): --extract, order 200. */
const extension extract_extension = {"extract", EXT_SPIDER, 200, on, .make_spider = make};
