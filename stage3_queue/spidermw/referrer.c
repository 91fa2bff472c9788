/* referrer.c — the referrer spider middleware (referrer.h). It answers at once. */
#include "referrer.h"

#include "alloc.h"

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
