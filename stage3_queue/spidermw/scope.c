/* scope.c — the scope spider middleware (scope.h): process_spider_output drops the
 * requests no --include pattern matches. It answers at once. */
#include "scope.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "log.h"
#include "spider.h"

typedef struct scope_mw {
    regex_t *include;
    size_t n;
} scope_mw;

static bool in_scope(const scope_mw *m, const char *url)
{
    for (size_t i = 0; i < m->n; i++)
        if (regexec(&m->include[i], url, 0, NULL, 0) == 0)
            return true;
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
            spider_drop(out, i);
        }
    }
    return NULL;
}

static void scope_free(void *self)
{
    scope_mw *m = self;
    for (size_t i = 0; i < m->n; i++)
        regfree(&m->include[i]);
    free(m->include);
    free(m);
}

spider_middleware scope_middleware(const char *const *include, size_t n)
{
    scope_mw *m = xcalloc(1, sizeof *m);
    m->include = xcalloc(n ? n : 1, sizeof *m->include);
    for (size_t i = 0; i < n; i++)
        if (regcomp(&m->include[m->n], include[i], REG_EXTENDED | REG_NOSUB) == 0)
            m->n++;
    return (spider_middleware){.name = "scope",
                               .self = m,
                               .process_spider_output = process_spider_output,
                               .free = scope_free};
}
