/* test_threadpool.c — the loop layer's thread pool (common/loop/threadpool.h), linked
 * against crawl_loop alone: work runs on pool threads and done on the loop thread, in
 * order; call_from_thread from many threads at once; a job keeps the loop alive and its
 * wake-up ends the loop's wait (every backend); shutdown with jobs running and queued
 * (each done exactly once, every thread joined); and 100,000 jobs through a queue of
 * 64, none lost.
 *
 * No loop here can hang: a watchdog thread stops the loop (selector_stop is safe from
 * another thread) and the test fails if it had to. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "guard.h"
#include "selector.h"
#include "threadpool.h"

static const char *backend = "epoll";

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* Threads of this process: /proc/self/task has one entry per thread. */
static int thread_count(void)
{
    DIR *d = opendir("/proc/self/task");
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* ---- a watchdog: stops the loop from another thread if a test runs too long ---- */

static struct {
    pthread_t th;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool cancelled, fired;
    selector *loop;
    uint64_t ms;
} dog = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};

static void *dog_main(void *arg)
{
    (void)arg;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)(dog.ms / 1000);
    until.tv_nsec += (long)(dog.ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&dog.lock);
    int rc = 0;
    while (!dog.cancelled && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&dog.cond, &dog.lock, &until);
    if (!dog.cancelled) {
        dog.fired = true;
        selector_stop(dog.loop);
    }
    pthread_mutex_unlock(&dog.lock);
    return NULL;
}

static void watchdog_start(selector *s, uint64_t ms)
{
    dog.cancelled = dog.fired = false;
    dog.loop = s;
    dog.ms = test_guard_ms(ms);
    assert_int_equal(pthread_create(&dog.th, NULL, dog_main, NULL), 0);
}

/* Returns whether it fired. */
static bool watchdog_stop(void)
{
    pthread_mutex_lock(&dog.lock);
    dog.cancelled = true;
    pthread_cond_signal(&dog.cond);
    pthread_mutex_unlock(&dog.lock);
    pthread_join(dog.th, NULL);
    return dog.fired;
}

static selector *new_loop(void)
{
    char err[256] = "";
    selector *s = selector_new(backend, err, sizeof err);
    if (!s)
        fail_msg("selector_new(%s): %s", backend, err);
    return s;
}

static threadpool *new_pool(selector *s, int nthreads, size_t queue_max)
{
    char err[256] = "";
    threadpool *p = threadpool_new(s, nthreads, queue_max, err, sizeof err);
    if (!p)
        fail_msg("threadpool_new: %s", err);
    return p;
}

/* Run the loop until it returns by itself (no descriptors, timers or jobs left). */
static void run_to_end(selector *s, uint64_t limit_ms)
{
    watchdog_start(s, limit_ms);
    assert_int_equal(selector_run(s), 0);
    if (watchdog_stop())
        fail_msg("the loop ran past %llu ms", (unsigned long long)limit_ms);
}

/* ---- work on a pool thread, done on the loop thread, in order ---- */

#define NORDER 2000

typedef struct {
    int index;
    pthread_t worked_on;
    int payload; /* written by work, read by done: no lock, no atomic */
} order_job;

static pthread_t loop_thread;
static int done_order[NORDER], ndone;

static void order_work(void *arg)
{
    order_job *j = arg;
    j->worked_on = pthread_self();
    j->payload = j->index * 3 + 1;
}

static void order_done(void *arg, bool ran)
{
    order_job *j = arg;
    assert_true(ran);
    assert_true(pthread_equal(pthread_self(), loop_thread));
    assert_false(pthread_equal(j->worked_on, loop_thread));
    assert_int_equal(j->payload, j->index * 3 + 1); /* done sees what work wrote */
    done_order[ndone++] = j->index;
}

/* One thread: the done callbacks come back in the order the jobs were submitted, the
 * queue of 8 overflowing into the loop's backlog on the way. */
static void test_done_in_submission_order(void **state)
{
    (void)state;
    selector *s = new_loop();
    threadpool *p = new_pool(s, 1, 8);
    static order_job jobs[NORDER];
    loop_thread = pthread_self();
    ndone = 0;
    for (int i = 0; i < NORDER; i++) {
        jobs[i] = (order_job){.index = i};
        threadpool_submit(p, order_work, order_done, &jobs[i]);
    }
    assert_int_equal(threadpool_pending(p), NORDER);
    run_to_end(s, 30000);
    assert_int_equal(ndone, NORDER);
    for (int i = 0; i < NORDER; i++)
        assert_int_equal(done_order[i], i);
    assert_int_equal(threadpool_pending(p), 0);
    threadpool_free(p);
    selector_free(s);
}

/* ---- a job's call_from_thread calls run before its done ---- */

#define NCALLJOBS 500

typedef struct {
    threadpool *p;
    int calls_seen; /* loop thread only */
    int done_seen_calls;
} calling_job;

static void count_call(void *arg)
{
    calling_job *j = arg;
    assert_true(pthread_equal(pthread_self(), loop_thread));
    j->calls_seen++;
}

static void calling_work(void *arg)
{
    calling_job *j = arg;
    call_from_thread(j->p, count_call, j);
    call_from_thread(j->p, count_call, j);
}

static void calling_done(void *arg, bool ran)
{
    calling_job *j = arg;
    assert_true(ran);
    j->done_seen_calls = j->calls_seen;
}

static void test_calls_before_done(void **state)
{
    (void)state;
    selector *s = new_loop();
    threadpool *p = new_pool(s, 4, 16);
    static calling_job jobs[NCALLJOBS];
    loop_thread = pthread_self();
    for (int i = 0; i < NCALLJOBS; i++) {
        jobs[i] = (calling_job){.p = p};
        threadpool_submit(p, calling_work, calling_done, &jobs[i]);
    }
    run_to_end(s, 30000);
    for (int i = 0; i < NCALLJOBS; i++) {
        assert_int_equal(jobs[i].calls_seen, 2);
        assert_int_equal(jobs[i].done_seen_calls, 2);
    }
    threadpool_free(p);
    selector_free(s);
}

/* ---- call_from_thread from many threads that are not the pool's ---- */

#define NCALLERS   8
#define CALLS_EACH 20000

typedef struct {
    int thread;
    int seq;
} call_msg;

static struct {
    threadpool *p;
    selector *s;
    int last_seq[NCALLERS]; /* loop thread only */
    long total;
    bool out_of_order;
} calls;

static void take_call(void *arg)
{
    call_msg *m = arg;
    if (m->seq != calls.last_seq[m->thread] + 1)
        calls.out_of_order = true;
    calls.last_seq[m->thread] = m->seq;
    free(m);
    if (++calls.total == (long)NCALLERS * CALLS_EACH)
        selector_release(calls.s); /* the loop may end now */
}

static void *caller_main(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int i = 1; i <= CALLS_EACH; i++) {
        call_msg *m = xmalloc(sizeof *m); /* no cmocka asserts off the main thread */
        *m = (call_msg){t, i};
        call_from_thread(calls.p, take_call, m);
    }
    return NULL;
}

/* Every call arrives once, on the loop thread, and each thread's calls in its order. */
static void test_call_from_many_threads(void **state)
{
    (void)state;
    selector *s = new_loop();
    memset(&calls, 0, sizeof calls);
    calls.s = s;
    calls.p = new_pool(s, 2, 16);
    selector_hold(s); /* these callers are not pool jobs: keep the loop going */
    pthread_t th[NCALLERS];
    for (int i = 0; i < NCALLERS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, caller_main, (void *)(intptr_t)i), 0);
    run_to_end(s, 60000);
    for (int i = 0; i < NCALLERS; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(calls.total, (long)NCALLERS * CALLS_EACH);
    assert_false(calls.out_of_order);
    for (int i = 0; i < NCALLERS; i++)
        assert_int_equal(calls.last_seq[i], CALLS_EACH);
    threadpool_free(calls.p);
    selector_free(s);
}

/* ---- a job keeps the loop alive, and its end wakes the wait (every backend) ---- */

static int slow_done_count;

static void slow_work(void *arg)
{
    (void)arg;
    sleep_ms(50);
}

static void slow_done(void *arg, bool ran)
{
    (void)arg;
    assert_true(ran);
    slow_done_count++;
}

static void count_in_thread(void *arg)
{
    atomic_fetch_add((atomic_int *)arg, 1);
}

/* Nothing but pool jobs: no descriptor, no timer. The loop waits (it would return at
 * once without the jobs' holds) until the jobs' wake-up ends the wait. */
static void test_job_keeps_loop_alive(void **state)
{
    (void)state;
    static const char *const backends[] = {"epoll", "poll", "select"};
    for (int b = 0; b < 3; b++) {
        backend = backends[b];
        selector *s = new_loop();
        threadpool *p = new_pool(s, 2, 4);
        atomic_int counted = 0;
        slow_done_count = 0;
        threadpool_submit(p, slow_work, slow_done, NULL);
        for (int i = 0; i < 100; i++)
            call_in_thread(p, count_in_thread, &counted);
        double t0 = now_s();
        run_to_end(s, 20000);
        assert_int_equal(slow_done_count, 1);
        assert_int_equal(atomic_load(&counted), 100);
        assert_int_equal(threadpool_pending(p), 0);
        if (now_s() - t0 < 0.045)
            fail_msg("%s: the loop returned before the 50 ms job was over", backend);
        threadpool_free(p);
        selector_free(s);
    }
    backend = "epoll";
}

/* ---- shutdown with jobs running and queued ---- */

#define NSHUT 102

static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool open;
    int running;
    atomic_int freeing;
    int ran[NSHUT], cancelled[NSHUT];
    int order[NSHUT], norder;
} gate = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};

static void gated_work(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&gate.lock);
    gate.running++;
    pthread_cond_broadcast(&gate.cond);
    while (!gate.open)
        pthread_cond_wait(&gate.cond, &gate.lock);
    pthread_mutex_unlock(&gate.lock);
}

static void quick_work(void *arg)
{
    (void)arg;
}

static void shut_done(void *arg, bool ran)
{
    int i = (int)(intptr_t)arg;
    assert_true(pthread_equal(pthread_self(), loop_thread));
    (ran ? gate.ran : gate.cancelled)[i]++;
    gate.order[gate.norder++] = i;
}

/* Opens the gate once both gated jobs run and the test has entered threadpool_free. */
static void *opener_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&gate.lock);
    while (gate.running < 2)
        pthread_cond_wait(&gate.cond, &gate.lock);
    pthread_mutex_unlock(&gate.lock);
    while (!atomic_load(&gate.freeing))
        sleep_ms(1);
    sleep_ms(100); /* threadpool_free is waiting for the two gated jobs by now */
    pthread_mutex_lock(&gate.lock);
    gate.open = true;
    pthread_cond_broadcast(&gate.cond);
    pthread_mutex_unlock(&gate.lock);
    return NULL;
}

/* Two threads held in their first jobs, 4 jobs queued, 96 in the backlog: freeing the
 * pool waits for the two, cancels the hundred (done(arg, false), in order), and leaves
 * no thread behind. */
static void test_shutdown_with_jobs_queued(void **state)
{
    (void)state;
    int threads_before = thread_count();
    selector *s = new_loop();
    threadpool *p = new_pool(s, 2, 4);
    assert_int_equal(thread_count(), threads_before + 2);
    loop_thread = pthread_self();
    memset(gate.ran, 0, sizeof gate.ran);
    memset(gate.cancelled, 0, sizeof gate.cancelled);
    gate.open = false;
    gate.running = gate.norder = 0;
    atomic_store(&gate.freeing, 0);

    for (int i = 0; i < NSHUT; i++)
        threadpool_submit(p, i < 2 ? gated_work : quick_work, shut_done, (void *)(intptr_t)i);
    pthread_t opener;
    assert_int_equal(pthread_create(&opener, NULL, opener_main, NULL), 0);
    pthread_mutex_lock(&gate.lock);
    while (gate.running < 2)
        pthread_cond_wait(&gate.cond, &gate.lock);
    pthread_mutex_unlock(&gate.lock);

    atomic_store(&gate.freeing, 1);
    threadpool_free(p); /* the loop never ran: every done runs in here */
    pthread_join(opener, NULL);

    for (int i = 0; i < NSHUT; i++)
        assert_int_equal(gate.ran[i] + gate.cancelled[i], 1);
    assert_int_equal(gate.ran[0] + gate.ran[1], 2);
    int cancelled = 0;
    for (int i = 2; i < NSHUT; i++)
        cancelled += gate.cancelled[i];
    assert_int_equal(cancelled, NSHUT - 2);
    /* the two that ran, then the cancelled ones in submission order */
    assert_int_equal(gate.norder, NSHUT);
    for (int i = 2; i < NSHUT; i++)
        assert_int_equal(gate.order[i], i);
    assert_int_equal(thread_count(), threads_before);
    selector_free(s);
}

/* ---- stress: 100,000 jobs through a queue of 64 ---- */

#define NSTRESS 100000

static struct {
    atomic_long worked;
    long done;
    unsigned char *seen;
    long duplicates;
} stress;

static void stress_work(void *arg)
{
    (void)arg;
    atomic_fetch_add(&stress.worked, 1);
}

static void stress_done(void *arg, bool ran)
{
    long i = (long)(intptr_t)arg;
    assert_true(ran);
    if (stress.seen[i]++)
        stress.duplicates++;
    stress.done++;
}

static void test_stress_100k_jobs(void **state)
{
    (void)state;
    selector *s = new_loop();
    threadpool *p = new_pool(s, 4, 64);
    memset(&stress, 0, sizeof stress);
    stress.seen = xcalloc(NSTRESS, 1);
    double t0 = now_s();
    for (long i = 0; i < NSTRESS; i++)
        threadpool_submit(p, stress_work, stress_done, (void *)(intptr_t)i);
    run_to_end(s, 120000);
    double secs = now_s() - t0;
    assert_int_equal(atomic_load(&stress.worked), NSTRESS);
    assert_int_equal(stress.done, NSTRESS);
    assert_int_equal(stress.duplicates, 0);
    for (long i = 0; i < NSTRESS; i++)
        if (stress.seen[i] != 1)
            fail_msg("job %ld: done ran %d times", i, stress.seen[i]);
    print_message("    %d jobs, 4 threads, queue of 64: %.2f s (%.0f jobs/s)\n", NSTRESS, secs,
                  NSTRESS / secs);
    free(stress.seen);
    threadpool_free(p);
    selector_free(s);
}

/* ---- bad arguments ---- */

static void test_bad_sizes(void **state)
{
    (void)state;
    selector *s = new_loop();
    char err[256] = "";
    assert_null(threadpool_new(s, 0, 8, err, sizeof err));
    assert_non_null(strstr(err, "0 threads"));
    assert_null(threadpool_new(s, 2, 0, err, sizeof err));
    assert_null(threadpool_new(s, THREADPOOL_MAX_THREADS + 1, 8, err, sizeof err));
    threadpool_free(NULL);
    selector_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_done_in_submission_order),
        cmocka_unit_test(test_calls_before_done),
        cmocka_unit_test(test_call_from_many_threads),
        cmocka_unit_test(test_job_keeps_loop_alive),
        cmocka_unit_test(test_shutdown_with_jobs_queued),
        cmocka_unit_test(test_stress_100k_jobs),
        cmocka_unit_test(test_bad_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
