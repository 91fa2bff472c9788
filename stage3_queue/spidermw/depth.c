/* depth.c — the depth spider middleware (depth.h): records say "depth"; with a limit,
 * process_spider_output drops the requests past it and counts their URLs. It answers
 * at once: nothing to wait for. */
#include "depth.h"

#include <stdlib.h>

#include "alloc.h"
#include "fpset.h"
#include "extension.h"

typedef struct depth_mw {
    crawl *c;
    int max_depth;
    fpset *dropped; /* the URLs dropped (8 bytes each), each counted once */
} depth_mw;

static coro *process_spider_output(void *self, const spider_response *resp, spider_outputs *out)
{
    (void)resp;
    depth_mw *m = self;
    for (size_t i = out->n; i-- > 0;) {
        const spider_output *o = &out->v[i];
        if (o->kind != SPIDER_REQUEST || o->request->depth <= m->max_depth)
            continue;
        if (fpset_add(m->dropped, o->request->url))
            crawl_count(m->c, "dropped_depth", 1);
        crawl_skip(m->c, o->request->url, CRAWL_SKIP_DEPTH, o->request->referrer);
        spider_drop(out, i);
    }
    return NULL;
}

static void depth_free(void *self)
{
    depth_mw *m = self;
    fpset_free(m->dropped);
    free(m);
}

spider_middleware depth_middleware(engine *e, int max_depth)
{
    depth_mw *m = xcalloc(1, sizeof *m);
    m->c = engine_app(e)->crawl;
    m->max_depth = max_depth;
    engine_record_fields(e, FETCH_STAT_DEPTH);
    spider_middleware mw = {.name = "depth", .self = m, .free = depth_free};
    if (max_depth >= 0) {
        m->dropped = fpset_new();
        crawl_count(m->c, "dropped_depth", 0); /* said even when none is dropped */
        mw.process_spider_output = process_spider_output;
    }
    return mw;
}

/* ---- the descriptor (extension.h) ---- */

static bool on(const settings *s)
{
    return s->depth;
}

static int make(engine *e, const settings *s, spider_middleware *out, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    *out = depth_middleware(e, s->max_depth);
    return 0;
}

/* The descriptor (extension.h): unless --chapter (or with --max-depth);
 * order 900: it drops the deep links after the requisites took theirs. */
const extension depth_extension = {"depth", EXT_SPIDER_MW, 900, on, .make_spider_middleware = make};
