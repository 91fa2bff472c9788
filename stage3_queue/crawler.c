/* crawler.c — crawl-queue: the chapter's final crawler, "Coordinating Coroutines".
 *
 * A Crawler puts its roots in a joinable Queue, starts max_tasks worker coroutines at
 * once (coroutines are cheap), and waits on the queue's join. Each worker loops
 * forever: get a (url, max_redirect) pair — a crawl_request, which carries the URL's
 * depth and referrer too — fetch it, task_done. fetch is stage 2's
 * coroutine (stage2_generators/fetch.c): retries, then the shared crawl core records
 * the response and, through frontier_add, puts each new link or redirect target back in
 * the queue — the redirect join happens there, against seen_urls. When join returns,
 * crawl cancels the workers, which are all waiting in get.
 *
 * HTTP goes through libcurl's multi interface by default (the chapter's aiohttp:
 * connection reuse, gzip, HTTPS); --transport raw runs the same workers over
 * stage 2's socket coroutines.
 *
 * Stage 3 is also where the crawler grows an engine (engine.h): with downloader
 * middlewares or item pipeline stages enabled, a worker hands each URL to
 * engine_handle instead of calling fetch itself. With none (--chapter --ignore-robots),
 * this is the chapter's crawler line for line.
 *
 * The Queue is a Frontier (frontier.h): the polite one (hostqueue.h: a FIFO per host)
 * by default, the chapter's Queue with --chapter, the one on Redis
 * (redisqueue.h, shared with every other process of the crawl) with --frontier. The
 * Crawler calls the same put_nowait, get, task_done and join on each, and never asks
 * which it has. The Queue, the engine's middlewares and pipeline, and the seeds are
 * chosen from one list of descriptors (assembly/registry.c) before the crawl starts.
 */
#include <stdio.h>
#include <stdlib.h>

#include "alloc.h"
#include "crawler.h"
#include "fetch.h"
#include "frontier.h"
#include "log.h"
#include "progress.h"
#include "session.h"
#include "settings.h"
#include "task.h"

struct crawler {
    app *a;
    engine *engine;
    frontier q; /* the Queue: the chapter's, the polite one or Redis's */
    task **workers;
};

static size_t queued(const void *ctx)
{
    return frontier_qsize(ctx);
}

/* engine_unpark's task_done: a parked URL's visit is over. */
static void unparked(void *ctx, const char *url)
{
    frontier_task_done(ctx, url);
}

/* ---- work: get, fetch, task_done, forever ---- */

typedef struct {
    coro co;
    crawler *cr;
    crawl_request *req; /* the URL this worker holds, and what travels with it */
} work_frame;

static int work_body(coro *co)
{
    work_frame *f = (work_frame *)co;
    CORO_BEGIN(co);
    for (;;) {
        AWAIT(co, frontier_get(&f->cr->q));
        f->req = co->value.p;

        /* Download the page and put its new links in the queue. */
        if (engine_plain(f->cr->engine)) {
            AWAIT(co, fetch(f->cr->a, f->req, frontier_add, &f->cr->q));
        } else {
            AWAIT(co, engine_handle(f->cr->engine, f->req));
            if (co->value.n == ENGINE_PARKED) { /* engine_unpark calls task_done */
                free(f->req);
                f->req = NULL;
                continue;
            }
        }
        /* Done only once its record is written: after a failed write (or pipeline
         * stage) the crawl stops, and this URL stays unacknowledged — to do. */
        if (engine_failed(f->cr->engine))
            break;
        frontier_task_done(&f->cr->q, f->req->url); /* its record is written */
        free(f->req);
        f->req = NULL;
    }
    CORO_END(co);
}

static void work_finally(coro *co)
{
    free(((work_frame *)co)->req);
}

static const coro_def work_def = {"work", __FILE__, work_body, work_finally, sizeof(work_frame)};

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

    /* The spider's start requests, when it or a spider middleware has its own (else
     * the roots went in before the crawl, as in the chapter). */
    if (engine_has_start_requests(cr->engine))
        AWAIT(co, engine_start_requests(cr->engine));

    /* Seeds (--sitemaps, say): start URLs from elsewhere, put while the workers crawl
     * (join must not end the crawl before the last one is put). */
    if (engine_has_seeds(cr->engine))
        AWAIT(co, engine_seed(cr->engine));

    /* When all work is done, exit. */
    AWAIT(co, frontier_join(&cr->q));
    for (int i = 0; i < n; i++)
        task_cancel(cr->workers[i]);
    if (frontier_error(&cr->q))
        CORO_RETURN(co, NULL, -1); /* the Queue failed: said after the crawl */
    CORO_END(co);
}

static const coro_def crawl_def = {"crawl", __FILE__, crawl_body, NULL, sizeof(crawl_frame)};

/* After the crawl (or an interruption): close the pipeline, on the loop, so that what
 * its stages hold is written before the report. */
static int close_engine(crawler *cr)
{
    if (engine_plain(cr->engine))
        return 0;
    selector_uninterrupt(cr->a->loop); /* a second signal still ends the process */
    task *t = task_new(cr->a->loop, engine_close(cr->engine), "close");
    int r = run_until_complete(cr->a->loop, t);
    task_free(t);
    return r == 0 ? 0 : -1;
}

int crawler_run(app *a, const extension *const *rows, size_t nrows)
{
    crawler cr = {.a = a};
    char err[1024];
    a->dump = task_dump_all;       /* kill -USR1: the task tree, as gdb's `info tasks` */
    a->summary = progress_summary; /* after the report: counts, time, where it went */
    if (session_open(a) < 0)       /* --proxy, --cookies, --cookie: its line said why */
        return APP_NOT_STARTED;
    /* The Queue and the engine the options ask for (--state --resume has put back the
     * URLs of the earlier runs). */
    if (registry_assemble(a, rows, nrows, &cr.q, &cr.engine, err, sizeof err) < 0) {
        fprintf(stderr, "crawl-queue: %s\n", err);
        return APP_NOT_STARTED;
    }
    cr.workers = xcalloc((size_t)a->opt.max_tasks, sizeof *cr.workers);
    crawl_frame *main_coro = (crawl_frame *)coro_new(&crawl_def);
    main_coro->cr = &cr;
    /* Parking needs a Queue that takes a URL back as itself (frontier.h). */
    if (frontier_takes_back(&cr.q))
        engine_set_task_done(cr.engine, unparked);
    /* Every check has passed (--state's, --frontier's, in the registry's makers): now,
     * and not before, the report's file is written. */
    if (app_open_outputs(a) < 0) {
        coro_free(&main_coro->co);
        engine_free(cr.engine);
        frontier_free(&cr.q);
        free(cr.workers);
        return APP_NOT_STARTED;
    }
    if (settings_of(a)->insecure)
        log_warn("crawl-queue: --insecure: TLS certificates are not checked; anyone on the "
                 "way can read and change what is fetched");
    if (!engine_has_start_requests(cr.engine))
        crawl_add_roots(a->crawl, frontier_add, &cr.q); /* on --resume: seen already */

    progress *p = progress_start(a, queued, &cr.q);
    task *t = task_new(a->loop, &main_coro->co, "crawl");
    int status = 0;
    if (run_until_complete(a->loop, t) < 0 && !app_interrupted && !engine_failed(cr.engine)) {
        fprintf(stderr, "crawl-queue: the event loop stopped: %s\n", selector_error(a->loop));
        status = -1;
    }
    if (frontier_error(&cr.q)) {
        /* The Queue failed (Redis's lost connection, say): what it acknowledged stays
         * so; the rest is taken over by other processes, or by this crawl run again. */
        fprintf(stderr, "crawl-queue: %s\n", frontier_error(&cr.q));
        status = -1;
    } else if (future_done(&t->fut) && t->fut.result.n < 0) {
        status = APP_NOT_STARTED; /* the pipeline did not open: no fetch */
    }
    progress_stop(p);

    /* Left to do: every URL put and not yet done — queued, being fetched, waiting for
     * a descriptor, or waiting inside the engine (for its host's robots.txt, say); not
     * the robots.txt downloads, which are no URL of the crawl. */
    a->todo = frontier_unfinished(&cr.q);
    /* The workers (cancelled where they wait, if interrupted), then the pipeline's
     * close — its stages' own tasks still run — then whatever is left. */
    for (int i = 0; i < a->opt.max_tasks; i++)
        task_free(cr.workers[i]);
    task_free(t);
    if ((close_engine(&cr) < 0 || engine_failed(cr.engine)) && status == 0)
        status = -1;
    engine_free(cr.engine); /* its stages free their own tasks */
    /* The cookies, interrupted or not; not when nothing was fetched (a refusal). */
    if (status != APP_NOT_STARTED && session_close(a) < 0 && status == 0)
        status = -1;
    task_free_all();
    frontier_free(&cr.q); /* Redis's: after the acknowledgements of the last records */
    free(cr.workers);
    return status;
}
