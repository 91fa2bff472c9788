/* scope.c — the scope spider middleware (scope.h): process_spider_output drops the
 * requests no --include pattern matches. It answers at once. */
#include "scope.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "log.h"
#include "pattern.h"
#include "spider.h"
#include "extension.h"

typedef struct scope_mw {
    pattern **include;
    size_t n;
    crawl *c; /* where a link out of scope is counted (crawl_skip), or NULL */
} scope_mw;

/* A match stopped by a limit (pattern.h) is no match: the link is not followed, the
 * safe side, and a warning says so once per pattern. */
static bool in_scope(const scope_mw *m, const char *url)
{
    for (size_t i = 0; i < m->n; i++) {
        int rc = pattern_match(m->include[i], url);
        if (rc == PATTERN_MATCH)
            return true;
        if (rc == PATTERN_LIMIT && pattern_first_limit(m->include[i]))
            log_warn("scope: --include pattern %zu reached a match limit on a %zu-byte URL:"
                     " such links are not followed (warned once)",
                     i + 1, strlen(url));
    }
    return false;
}

static coro *process_spider_output(void *self, const spider_response *resp, spider_outputs *out)
{
    (void)resp;
    const scope_mw *m = self;
    for (size_t i = out->n; m->n > 0 && i-- > 0;) {
        const request *r = out->v[i].request;
        if (out->v[i].kind != SPIDER_REQUEST
            || (r->callback && strcmp(r->callback, SPIDER_CB_REQUISITE) == 0))
            continue;
        if (!in_scope(m, r->url)) {
            log_debug("scope: %s matches no --include", r->url);
            if (m->c)
                crawl_skip(m->c, r->url, CRAWL_SKIP_NOT_INCLUDED, r->referrer);
            spider_drop(out, i);
        }
    }
    return NULL;
}

static void scope_free(void *self)
{
    scope_mw *m = self;
    for (size_t i = 0; i < m->n; i++)
        pattern_free(m->include[i]);
    free(m->include);
    free(m);
}

int scope_middleware(const char *const *include, size_t n, spider_middleware *out, char *err,
                     size_t errlen)
{
    scope_mw *m = xcalloc(1, sizeof *m);
    m->include = xcalloc(n ? n : 1, sizeof *m->include);
    for (; m->n < n; m->n++) {
        char why[256];
        m->include[m->n] = pattern_compile(include[m->n], why, sizeof why);
        if (!m->include[m->n]) {
            snprintf(err, errlen, "--include: bad regex '%s': %s", include[m->n], why);
            scope_free(m);
            return -1;
        }
    }
    *out = (spider_middleware){.name = "scope",
                               .self = m,
                               .process_spider_output = process_spider_output,
                               .free = scope_free};
    return 0;
}

/* ---- the descriptor (extension.h) ---- */

static bool on(const settings *s)
{
    return s->include.n > 0;
}

/* Every pattern compiles (the command line has checked them), or the crawl does not
 * start: a pattern skipped would widen the scope. */
static int make(engine *e, const settings *s, spider_middleware *out, char *err, size_t errlen)
{
    if (scope_middleware(s->include.v, s->include.n, out, err, errlen) < 0)
        return -1;
    ((scope_mw *)out->self)->c = engine_app(e)->crawl;
    return 0;
}

/* The descriptor (extension.h): --include, order 500 (Scrapy's numbers: it
 * filters the links, not the requisites, which run after it). */
const extension scope_extension = {"scope", EXT_SPIDER_MW, 500, on, .make_spider_middleware = make};
