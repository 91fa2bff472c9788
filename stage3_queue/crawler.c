/* crawler.c — crawl-queue: the chapter's final crawler, "Coordinating Coroutines".
 *
 * A Crawler puts its roots in a joinable Queue, starts max_tasks worker coroutines at
 * once (coroutines are cheap), and waits on the queue's join. Each worker loops
 * forever: get a (url, max_redirect) pair, fetch it, task_done. fetch is stage 2's
 * coroutine (stage2_generators/fetch.c): retries, then the shared crawl core records
 * the response and, through put_url, puts each new link or redirect target back in
 * the queue — the redirect join happens there, against seen_urls. When join returns,
 * crawl cancels the workers, which are all waiting in get.
 *
 * HTTP goes through libcurl's multi interface by default (the chapter's aiohttp:
 * connection reuse, gzip, HTTPS); --transport raw runs the same workers over
 * stage 2's socket coroutines.
 *
 * Stage 3 is also where the crawler grows an engine (engine.h): with downloader
 * middlewares or item pipeline stages enabled, a worker hands each URL to
 * engine_handle instead of calling fetch itself. With none, this is the chapter's
 * crawler line for line (its Queue's get/task_done/join are spelled q_get, ... here).
 *
 * With --frontier redis://..., the Queue is redisqueue.h's: the same put_nowait, get,
 * task_done and join over Redis Streams, shared with every other process of the crawl
 * (docs/scale.md). The in-memory Queue stays the default; the q_* functions below pick.
 *
 * With a politeness flag (--per-host, --delay, ...), the Queue is hostqueue.h's: a FIFO
 * per host and a heap of the hosts that may start a request, so that get never hands
 * a worker a URL it would have to wait for; and the engine gets the politeness
 * middleware (polite.h), which tries URLs again through that Queue.
 */
#include <stdio.h>
#include <stdlib.h>

#include "alloc.h"
#include "crawler.h"
#include "fetch.h"
#include "hostqueue.h"
#include "polite.h"
#include "progress.h"
#include "sitemaps.h"
#include "queue.h"
#include "redisqueue.h"
#include "settings.h"
#include "state.h"
#include "task.h"

struct crawler {
    app *a;
    engine *engine;
    queue q;
    rqueue *rq;              /* --frontier: the Queue on Redis instead of q */
    hostqueue *hq;           /* politeness: the polite Queue instead of q */
    task **workers;
};

/* The Queue's four operations, in memory or on Redis. */
static void q_put_nowait(crawler *cr, const char *url, int max_redirect)
{
    if (cr->rq)
        rqueue_put_nowait(cr->rq, url, max_redirect);
    else if (cr->hq)
        hostqueue_put_nowait(cr->hq, url, max_redirect);
    else
        queue_put_nowait(&cr->q, url, max_redirect);
}

static coro *q_get(crawler *cr)
{
    return cr->rq ? rqueue_get(cr->rq) : cr->hq ? hostqueue_get(cr->hq) : queue_get(&cr->q);
}

/* Redis must know which entry is done, and the polite Queue which host: its URL's. */
static void q_task_done(crawler *cr, const char *url)
{
    if (cr->rq)
        rqueue_task_done(cr->rq, url);
    else if (cr->hq)
        hostqueue_task_done(cr->hq, url);
    else
        queue_task_done(&cr->q);
}

static coro *q_join(crawler *cr)
{
    return cr->rq ? rqueue_join(cr->rq) : cr->hq ? hostqueue_join(cr->hq) : queue_join(&cr->q);
}

static size_t q_qsize(const void *ctx)
{
    const crawler *cr = ctx;
    return cr->rq ? rqueue_qsize(cr->rq) : cr->hq ? hostqueue_qsize(cr->hq) : queue_qsize(&cr->q);
}

static size_t q_unfinished(const crawler *cr)
{
    return cr->rq ? rqueue_unfinished(cr->rq)
                  : cr->hq ? cr->hq->base.unfinished_tasks : cr->q.unfinished_tasks;
}

/* Politeness asked for: the polite Queue, and its middleware last in the chain (its
 * process_response runs first). */
static void be_polite(crawler *cr)
{
    const settings *o = settings_of(cr->a);
    hostqueue_config cfg = {.per_host = o->per_host,
                            .per_ip = o->per_ip,
                            .delay = o->delay,
                            .random_delay = o->random_delay,
                            .max_crawl_delay = o->max_crawl_delay,
                            .autothrottle = o->autothrottle,
                            .target_concurrency = o->target_concurrency,
                            .max_delay = o->delay > 60 ? o->delay : 60};
    cr->hq = xmalloc(sizeof *cr->hq);
    hostqueue_init(cr->hq, cr->a->loop, cr->a->dns, &cfg);
    engine_set_hosts(cr->engine, cr->hq);
    downloader_middleware mw = polite_middleware(cr->engine, cr->hq);
    engine_add_middleware(cr->engine, &mw);
}

/* The crawl core's add_url: seen_urls already has it; the queue gets it. */
static void put_url(void *ctx, const char *url, int max_redirect)
{
    crawler *cr = ctx;
    q_put_nowait(cr, url, max_redirect);
}

/* engine_unpark's task_done: a parked URL's visit is over. */
static void unparked(void *ctx, const char *url)
{
    q_task_done(ctx, url);
}

/* ---- work: get, fetch, task_done, forever ---- */

typedef struct {
    coro co;
    crawler *cr;
    char *url;
    int max_redirect;
} work_frame;

static int work_body(coro *co)
{
    work_frame *f = (work_frame *)co;
    CORO_BEGIN(co);
    for (;;) {
        AWAIT(co, q_get(f->cr));
        f->url = co->value.p;
        f->max_redirect = (int)co->value.n;

        /* Download the page and put its new links in the queue. */
        if (engine_plain(f->cr->engine)) {
            AWAIT(co, fetch(f->cr->a, f->url, f->max_redirect, put_url, f->cr));
        } else {
            AWAIT(co, engine_handle(f->cr->engine, f->url, f->max_redirect));
            if (co->value.n == ENGINE_PARKED) { /* engine_unpark calls task_done */
                free(f->url);
                f->url = NULL;
                continue;
            }
        }
        /* Done only once its record is written: after a failed write (or pipeline
         * stage) the crawl stops, and this URL stays unacknowledged — to do. */
        if (engine_failed(f->cr->engine))
            break;
        q_task_done(f->cr, f->url);      /* its record is written */
        free(f->url);
        f->url = NULL;
    }
    CORO_END(co);
}

static void work_finally(coro *co)
{
    free(((work_frame *)co)->url);
}

static const coro_def work_def = {"work", __FILE__, work_body, work_finally,
                                  sizeof(work_frame)};

static coro *work(crawler *cr)
{
    work_frame *f = (work_frame *)coro_new(&work_def);
    f->cr = cr;
    return &f->co;
}

/* ---- crawl: open the pipeline, start the workers, join the queue, cancel ---- */

typedef struct {
    coro co;
    crawler *cr;
} crawl_frame;

static int crawl_body(coro *co)
{
    crawl_frame *f = (crawl_frame *)co;
    crawler *cr = f->cr;
    int n = cr->a->opt.max_tasks;
    CORO_BEGIN(co);
    if (!engine_plain(cr->engine)) {
        AWAIT(co, engine_open(cr->engine));
        if (co->value.n < 0)
            CORO_RETURN(co, NULL, -1);
    }
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "work-%d", i);
        cr->workers[i] = task_new(cr->a->loop, work(cr), name);
    }

    /* --sitemaps: seed from the roots' sitemaps while the workers crawl (join must not
     * end the crawl before the last sitemap is read). */
    if (settings_of(cr->a)->sitemaps)
        AWAIT(co, sitemaps_seed(cr->engine));

    /* When all work is done, exit. */
    AWAIT(co, q_join(cr));
    for (int i = 0; i < n; i++)
        task_cancel(cr->workers[i]);
    if (cr->rq && rqueue_error(cr->rq))
        CORO_RETURN(co, NULL, -1);           /* Redis failed: said after the crawl */
    CORO_END(co);
}

static const coro_def crawl_def = {"crawl", __FILE__, crawl_body, NULL, sizeof(crawl_frame)};

/* After the crawl (or an interruption): close the pipeline, on the loop, so that what
 * its stages hold is written before the report. */
static int close_engine(crawler *cr)
{
    if (engine_plain(cr->engine))
        return 0;
    selector_uninterrupt(cr->a->loop);      /* a second signal still ends the process */
    task *t = task_new(cr->a->loop, engine_close(cr->engine), "close");
    int r = run_until_complete(cr->a->loop, t);
    task_free(t);
    return r == 0 ? 0 : -1;
}

/* The in-memory Queues, freed (the Redis one goes after the last acknowledgements). */
static void free_queues(crawler *cr)
{
    queue_clear(&cr->q);
    if (cr->hq)
        hostqueue_clear(cr->hq);
    free(cr->hq);
}

/* What makes the processes of a --frontier crawl one crawl: what --state keeps
 * (crawl_identity), and what the engine and the shared politeness change. */
static char *frontier_identity(const crawl_options *o, const settings *s)
{
    char *base = crawl_identity(o);
    char *id = xasprintf("%signore_robots %d\nper_host %d\ndelay %g\nrandom_delay %d\n",
                         base, s->ignore_robots, s->per_host, s->delay, s->random_delay);
    free(base);
    return id;
}

/* The crawl could not start: free what crawler_run made so far. */
static int not_started(crawler *cr, crawl_frame *main_coro)
{
    rqueue_free(cr->rq);
    free_queues(cr);
    coro_free(&main_coro->co);
    engine_free(cr->engine);
    free(cr->workers);
    return APP_NOT_STARTED;
}

int crawler_run(app *a, engine *(*make_engine)(app *a, crawl_add_fn put, void *ctx))
{
    crawler cr = {.a = a};
    const settings *s = settings_of(a);
    a->dump = task_dump_all;    /* kill -USR1: the task tree, as gdb's `info tasks` */
    cr.workers = xcalloc((size_t)a->opt.max_tasks, sizeof *cr.workers);
    cr.engine = make_engine(a, put_url, &cr);
    crawl_frame *main_coro = (crawl_frame *)coro_new(&crawl_def);
    main_coro->cr = &cr;
    queue_init(&cr.q, a->loop);
    if (s->polite && !s->frontier)
        be_polite(&cr);
    char err[1024];
    if (s->frontier) {
        char *id = frontier_identity(&a->opt, s);
        cr.rq = rqueue_new(a->loop, s->frontier, id, s->claim_after, a->opt.fetched_by, err,
                           sizeof err);
        free(id);
        if (!cr.rq) {
            fprintf(stderr, "crawl-queue: --frontier: %s\n", err);
            return not_started(&cr, main_coro);
        }
        /* Politeness across processes: the cap and the delay hold in Redis. */
        rqueue_politeness(cr.rq, s->per_host, s->delay, s->random_delay);
    }
    if (s->state && state_restore(a, put_url, &cr, err, sizeof err) < 0) {
        fprintf(stderr, "crawl-queue: %s\n", err);
        return not_started(&cr, main_coro);
    }
    /* Every check has passed: now, and not before, the report's file is written. */
    if (app_open_outputs(a) < 0)
        return not_started(&cr, main_coro);
    crawl_add_roots(a->crawl, put_url, &cr);    /* on --resume: seen already */
    /* Parking needs a Queue that takes a URL back as itself: Redis's put drops a URL
     * the crawl has seen. */
    if (!cr.rq)
        engine_set_task_done(cr.engine, unparked);

    engine_set_backlog(cr.engine, q_qsize, &cr);   /* --sitemaps' back-pressure */
    progress *p = progress_start(a, q_qsize, &cr);
    task *t = task_new(a->loop, &main_coro->co, "crawl");
    int status = 0;
    if (run_until_complete(a->loop, t) < 0 && !app_interrupted && !engine_failed(cr.engine)) {
        fprintf(stderr, "crawl-queue: the event loop stopped: %s\n", selector_error(a->loop));
        status = -1;
    }
    if (cr.rq && rqueue_error(cr.rq)) {
        /* A lost connection, say: what was acknowledged stays so; the rest is
         * taken over by the other processes, or by this crawl run again. */
        fprintf(stderr, "crawl-queue: --frontier: %s\n", rqueue_error(cr.rq));
        status = -1;
    } else if (future_done(&t->fut) && t->fut.result.n < 0) {
        status = APP_NOT_STARTED;           /* the pipeline did not open: no fetch */
    }
    progress_stop(p);

    /* Left to do: every URL put and not yet done — queued, being fetched, waiting for
     * a descriptor, or waiting inside the engine (for its host's robots.txt, say); not
     * the robots.txt downloads, which are no URL of the crawl. */
    a->todo = q_unfinished(&cr);
    /* The workers (cancelled where they wait, if interrupted), then the pipeline's
     * close — its stages' own tasks still run — then whatever is left. */
    for (int i = 0; i < a->opt.max_tasks; i++)
        task_free(cr.workers[i]);
    task_free(t);
    if ((close_engine(&cr) < 0 || engine_failed(cr.engine)) && status == 0)
        status = -1;
    engine_free(cr.engine);     /* its stages free their own tasks */
    task_free_all();
    rqueue_free(cr.rq);         /* after the acknowledgements of the last records */
    free_queues(&cr);
    free(cr.workers);
    return status;
}
