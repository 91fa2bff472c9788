/* referrer.c — the referrer middlewares (referrer.h). Both answer at once. */
#include "referrer.h"

#include <stdlib.h>
#include <string.h>

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

/* no-referrer-when-downgrade: a referrer, unless it is https and the URL is not. */
static coro *process_request(void *self, request *req, mw_result *out)
{
    (void)self;
    const char *from = req->referrer;
    bool downgrade =
        from && strncmp(from, "https://", 8) == 0 && strncmp(req->url, "https://", 8) != 0;
    if (from && !downgrade && !request_header(req, "Referer"))
        request_add_header(req, "Referer", from);
    mw_continue(out);
    return NULL;
}

downloader_middleware referer_header_middleware(engine *e)
{
    (void)e;
    return (downloader_middleware){.name = "referer", .process_request = process_request};
}
