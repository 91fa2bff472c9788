/* referrer.c — the referrer spider middleware (referrer.h). It answers at once. */
#include "referrer.h"

#include "alloc.h"
#include "extension.h"

static coro *process_spider_output(void *self, const spider_response *resp, spider_outputs *out)
{
    (void)self;
    for (size_t i = 0; i < out->n; i++) {
        request *r = out->v[i].request;
        if (out->v[i].kind == SPIDER_REQUEST && !r->referrer)
            r->referrer = xstrdup(resp->request->url);
    }
    return NULL;
}

spider_middleware referrer_middleware(engine *e)
{
    engine_record_fields(e, FETCH_STAT_REFERRER);
    return (spider_middleware){.name = "referrer", .process_spider_output = process_spider_output};
}

/* ---- the descriptor (extension.h) ---- */

static bool on(const settings *s)
{
    return s->referrer;
}

static int make(engine *e, const settings *s, spider_middleware *out, char *err, size_t errlen)
{
    (void)s, (void)err, (void)errlen;
    *out = referrer_middleware(e);
    return 0;
}

/* The descriptor (extension.h): unless --chapter; order 700. */
const extension referrer_extension = {"referrer", EXT_SPIDER_MW, 700, on,
                                      .make_spider_middleware = make};
