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

typedef struct extract {
    const char *const *args;
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
    fputs("{\"url\":", m);
    json_write_string(m, resp->request->url);
    for (size_t i = 0; i < x->n; i++) {
        const char *eq = strchr(x->args[i], '=');
        char *name = xstrndup(x->args[i], (size_t)(eq - x->args[i]));
        char *value = NULL, err[512];
        /* checked: it compiles; it may still fail (over its operations): the field is
         * null and the record says why */
        if (xpath_eval(d, eq + 1, first, &value, err, sizeof err) < 0)
            spider_fail(out, "spider error: --extract %s: %s", name, err);
        fputc(',', m);
        json_write_string(m, name);
        fputc(':', m);
        json_write_string(m, value);
        free(name);
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
    free(self);
}

spider extract_spider(const char *const *args, size_t n)
{
    extract *x = xcalloc(1, sizeof *x);
    x->args = args;
    x->n = n;
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
