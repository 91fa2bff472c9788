/* threadpool.c — see threadpool.h. A job goes through three lists:
 *
 *   backlog    submitted, waiting for room in the queue   loop thread only, no lock
 *   queue      at most queue_max, taken by the threads     under the lock
 *   finished   its work is over; call_from_thread calls   under the lock
 *
 * and the loop, woken through the selector's self-pipe, takes the whole finished list
 * at once, tops the queue up from the backlog and runs the done callbacks.
 */
#include "threadpool.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "list.h"

typedef enum { JOB_WORK, JOB_CALL } job_kind;

typedef struct job {
    list_node node;
    job_kind kind;
    pool_fn fn;        /* JOB_WORK: the work, on a thread; JOB_CALL: on the loop */
    pool_done_fn done; /* JOB_WORK: on the loop afterwards; NULL for call_in_thread */
    void *arg;
} job;

struct threadpool {
    selector *loop;
    pthread_t *threads;
    int nthreads;
    size_t queue_max;

    pthread_mutex_t lock;      /* guards the five fields below */
    pthread_cond_t work_ready; /* the queue has a job, or the pool is stopping */
    list_node queue;
    size_t nqueued;
    list_node finished;
    bool wake_sent; /* a wake-up byte is on its way: none needed now */
    bool stopping;

    list_node backlog; /* loop thread only */
    size_t pending;    /* loop thread only: submitted, done not yet run */
};

/* ---- the threads ---------------------------------------------------------------- */

/* Hand j to the loop: one wake-up byte per batch, not per job. */
static void post_finished(threadpool *p, job *j)
{
    pthread_mutex_lock(&p->lock);
    list_push_back(&p->finished, &j->node);
    bool wake = !p->wake_sent;
    p->wake_sent = true;
    pthread_mutex_unlock(&p->lock);
    if (wake)
        selector_wakeup(p->loop);
}

static void *worker(void *arg)
{
    threadpool *p = arg;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (list_empty(&p->queue) && !p->stopping)
            pthread_cond_wait(&p->work_ready, &p->lock);
        if (p->stopping)
            break; /* what is still queued is cancelled by threadpool_free */
        job *j = list_entry(list_pop_front(&p->queue), job, node);
        p->nqueued--;
        pthread_mutex_unlock(&p->lock);
        j->fn(j->arg);
        post_finished(p, j);
        pthread_mutex_lock(&p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* ---- the loop's side -------------------------------------------------------------- */

/* Move backlog jobs into the queue while it has room. */
static void refill(threadpool *p)
{
    if (list_empty(&p->backlog))
        return;
    pthread_mutex_lock(&p->lock);
    size_t moved = 0;
    while (p->nqueued < p->queue_max && !list_empty(&p->backlog)) {
        list_push_back(&p->queue, list_pop_front(&p->backlog));
        p->nqueued++;
        moved++;
    }
    if (moved == 1)
        pthread_cond_signal(&p->work_ready);
    else if (moved > 1)
        pthread_cond_broadcast(&p->work_ready);
    pthread_mutex_unlock(&p->lock);
}

static void enqueue(threadpool *p, job *j)
{
    p->pending++;
    selector_hold(p->loop);
    list_push_back(&p->backlog, &j->node); /* behind any job already waiting */
    refill(p);
}

/* The job is over: ran or cancelled. */
static void finish(threadpool *p, job *j, bool ran)
{
    p->pending--;
    selector_release(p->loop);
    if (j->done)
        j->done(j->arg, ran);
    free(j);
}

/* The selector's wake-up function: take everything the threads handed over. */
static void run_finished(selector *s, void *arg)
{
    (void)s;
    threadpool *p = arg;
    list_node batch;
    list_init(&batch);
    pthread_mutex_lock(&p->lock);
    while (!list_empty(&p->finished))
        list_push_back(&batch, list_pop_front(&p->finished));
    p->wake_sent = false;
    pthread_mutex_unlock(&p->lock);

    refill(p); /* the threads took jobs, so the queue has room: keep them busy */
    list_node *n;
    while ((n = list_pop_front(&batch))) {
        job *j = list_entry(n, job, node);
        if (j->kind == JOB_CALL) {
            j->fn(j->arg);
            free(j);
        } else {
            finish(p, j, true);
        }
    }
}

/* ---- the API ------------------------------------------------------------------------ */

static job *job_new(job_kind kind, pool_fn fn, pool_done_fn done, void *arg)
{
    job *j = xmalloc(sizeof *j);
    *j = (job){.kind = kind, .fn = fn, .done = done, .arg = arg};
    list_node_init(&j->node);
    return j;
}

void call_in_thread(threadpool *p, pool_fn fn, void *arg)
{
    enqueue(p, job_new(JOB_WORK, fn, NULL, arg));
}

void threadpool_submit(threadpool *p, pool_fn work, pool_done_fn done, void *arg)
{
    enqueue(p, job_new(JOB_WORK, work, done, arg));
}

void call_from_thread(threadpool *p, pool_fn fn, void *arg)
{
    post_finished(p, job_new(JOB_CALL, fn, NULL, arg));
}

size_t threadpool_pending(const threadpool *p)
{
    return p->pending;
}

int threadpool_threads(const threadpool *p)
{
    return p->nthreads;
}

/* Ask the threads to stop after their current job, and join them. */
static void stop_threads(threadpool *p)
{
    pthread_mutex_lock(&p->lock);
    p->stopping = true;
    pthread_cond_broadcast(&p->work_ready);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->nthreads; i++)
        pthread_join(p->threads[i], NULL);
    p->nthreads = 0;
}

static void cancel_all(threadpool *p, list_node *jobs)
{
    list_node *n;
    while ((n = list_pop_front(jobs)))
        finish(p, list_entry(n, job, node), false);
}

static void destroy(threadpool *p)
{
    selector_set_wakeup(p->loop, NULL, NULL);
    pthread_cond_destroy(&p->work_ready);
    pthread_mutex_destroy(&p->lock);
    free(p->threads);
    free(p);
}

void threadpool_free(threadpool *p)
{
    if (!p)
        return;
    stop_threads(p);
    /* Alone now. Callbacks may submit or call again: go round until nothing is left. */
    while (p->pending > 0 || !list_empty(&p->finished)) {
        run_finished(p->loop, p); /* done(arg, true), call_from_thread calls */
        p->nqueued = 0;
        cancel_all(p, &p->queue); /* done(arg, false), in submission order */
        cancel_all(p, &p->backlog);
    }
    destroy(p);
}

threadpool *threadpool_new(selector *loop, int nthreads, size_t queue_max, char *err, size_t errlen)
{
    if (nthreads < 1 || nthreads > THREADPOOL_MAX_THREADS || queue_max == 0) {
        snprintf(err, errlen, "thread pool: %d threads, queue of %zu: out of range", nthreads,
                 queue_max);
        return NULL;
    }
    threadpool *p = xcalloc(1, sizeof *p);
    p->loop = loop;
    p->queue_max = queue_max;
    p->threads = xcalloc((size_t)nthreads, sizeof *p->threads);
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->work_ready, NULL);
    list_init(&p->queue);
    list_init(&p->finished);
    list_init(&p->backlog);
    selector_set_wakeup(loop, run_finished, p);

    /* The threads inherit this mask: signals are for the loop thread. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = 0;
    while (p->nthreads < nthreads) {
        rc = pthread_create(&p->threads[p->nthreads], NULL, worker, p);
        if (rc != 0)
            break;
        char name[16];
        snprintf(name, sizeof name, "pool-%d", p->nthreads);
        pthread_setname_np(p->threads[p->nthreads], name); /* gdb's `info threads` */
        p->nthreads++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        snprintf(err, errlen, "thread pool: cannot start thread %d of %d: %s", p->nthreads + 1,
                 nthreads, strerror(rc));
        stop_threads(p);
        destroy(p);
        return NULL;
    }
    return p;
}
