/* itempipeline.c — the item pipeline manager, after Scrapy's ItemPipelineManager
 * (scrapy/pipelines/__init__.py): every stage opened before the first URL and closed
 * after the last; each URL's items, then its record, through the stages in order until
 * one drops it (engine.h has the rules, engine_private.h the managers). */
#include <stdio.h>

#include "engine_private.h"
#include "log.h"

/* ---- open and close ---- */

typedef struct {
    coro co;
    engine *e;
    size_t i;
    bool closing;
    coro *call;
} open_close_frame;

static int open_close_body(coro *co)
{
    open_close_frame *f = (open_close_frame *)co;
    CORO_BEGIN(co);
    for (f->i = 0; f->i < f->e->npipe; f->i++) {
        item_pipeline *p = &f->e->pipe[f->i];
        if (f->closing)
            f->call = p->close ? p->close(p->self) : NULL;
        else
            f->call = p->open ? p->open(p->self, f->e) : NULL;
        if (f->call)
            AWAIT_CATCH(co, f->call);
        if (co->err) {
            if (co->err->kind == CORO_CANCELLED)
                CORO_RAISE_ERR(co);
            char why[1024];
            snprintf(why, sizeof why, "%s the %s failed: %s", f->closing ? "closing" : "opening",
                     f->e->pipe[f->i].name, co->err->msg);
            log_error("crawl-queue: %s", why);
            crawl_fail(f->e->a->crawl, why);
            f->e->failed = true;
            coro_error_free(co->err);
            co->err = NULL;
            if (!f->closing)
                CORO_RETURN(co, NULL, -1); /* no crawl without its pipeline */
        }
    }
    if (!f->closing && f->e->on_open)
        f->e->on_open(f->e->on_open_ctx);
    CORO_END(co);
}

static const coro_def open_close_def = {"pipeline", __FILE__, open_close_body, NULL,
                                        sizeof(open_close_frame)};

coro *itempipeline_open_close(engine *e, bool closing)
{
    open_close_frame *f = (open_close_frame *)coro_new(&open_close_def);
    f->e = e;
    f->closing = closing;
    return &f->co;
}

/* ---- the engine's own downloads ---- */

void itempipeline_download(engine *e, const request *req, const response *r)
{
    for (size_t i = 0; i < e->npipe; i++)
        if (e->pipe[i].process_download)
            e->pipe[i].process_download(e->pipe[i].self, req, r);
}

/* ---- one URL's items and record ---- */

typedef struct {
    coro co;
    url_life *u;
    size_t k;   /* the spider's output going through the stages */
    size_t i;   /* the stage being called */
    coro *call; /* its coroutine, when it gave one */
    bool drop;
    spider_item sitem;
} process_frame;

/* A stage raised: the crawl stops (a lost item is not a finished crawl). */
static void stage_raised(process_frame *f, coro *co)
{
    engine *e = f->u->e;
    char why[1024];
    snprintf(why, sizeof why, "the %s failed on %s: %s", e->pipe[f->i].name, f->u->req->url,
             co->err->msg);
    log_error("crawl-queue: %s", why);
    crawl_fail(e->a->crawl, why);
    e->failed = true;
    selector_stop(e->a->loop);
    coro_error_free(co->err);
    co->err = NULL;
}

/* Stage f->i's method for the spider item f->sitem (items), or for the record. */
static coro *call_stage(process_frame *f, bool items)
{
    item_pipeline *p = &f->u->e->pipe[f->i];
    if (items)
        return p->process_spider_item ? p->process_spider_item(p->self, &f->sitem, &f->drop) : NULL;
    return p->process_item ? p->process_item(p->self, &f->u->it, &f->drop) : NULL;
}

/* The spider's items first, each through the stages that take them, then the record
 * (spider.h's order): --state counts the URL done only after its items (items.h), so a
 * kill -9 between them fetches it again rather than lose them. */
static int process_body(coro *co)
{
    process_frame *f = (process_frame *)co;
    url_life *u = f->u;
    CORO_BEGIN(co);
    /* k < n: the spider's output k, if an item; k == n: the record */
    for (f->k = 0; f->k <= u->out.n; f->k++) {
        if (f->k < u->out.n && u->out.v[f->k].kind != SPIDER_ITEM)
            continue;
        if (f->k < u->out.n)
            f->sitem =
                (spider_item){u->out.v[f->k].item, u->req, u->nitems++, -1, u->it.output_end};
        u->it.request = u->req;
        u->it.response = u->resp;
        f->drop = false;
        for (f->i = 0; f->i < u->e->npipe && !f->drop; f->i++) {
            if ((f->call = call_stage(f, f->k < u->out.n)))
                AWAIT_CATCH(co, f->call);
            if (co->err && co->err->kind == CORO_CANCELLED)
                CORO_RAISE_ERR(co);
            if (co->err) {
                stage_raised(f, co);
                CORO_RETURN(co, NULL, 0);
            }
        }
    }
    CORO_END(co);
}

static const coro_def process_def = {"item_pipeline", __FILE__, process_body, NULL,
                                     sizeof(process_frame)};

coro *itempipeline_process(url_life *u)
{
    process_frame *f = (process_frame *)coro_new(&process_def);
    f->u = u;
    return &f->co;
}
