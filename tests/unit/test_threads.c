/* test_threads.c — defer_to_thread (stage2_generators/threads.h): a coroutine awaits
 * work done on a pool thread and gets its result, or its error as an exception, while
 * the loop goes on; a coroutine cancelled while it waits leaves the job to finish and
 * clean up; 100,000 deferred jobs awaited by 100 tasks, none lost.
 *
 * Every loop runs with a guard timer that stops it and fails the test rather than let
 * it hang. Nothing here measures time: on a loaded 2-core CI box a thread may wait
 * 100 ms or more for a core, so a job that must still run at some point of the loop
 * waits for that point itself (a gate, bounded by GATE_MS), instead of sleeping long
 * enough and hoping. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "coro.h"
#include "future.h"
#include "selector.h"
#include "task.h"
#include "threadpool.h"
#include "threads.h"

#include "loopguard.h"

static selector *loop;
static threadpool *pool;
static pthread_t loop_thread;

static int setup(void **state)
{
    (void)state;
    loop = guarded_loop_new(60000);
    char err[256] = "";
    pool = threadpool_new(loop, 4, 64, err, sizeof err);
    if (!pool)
        fail_msg("threadpool_new: %s", err);
    loop_thread = pthread_self();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    task_free_all();
    threadpool_free(pool);
    guarded_loop_free(loop);
    return 0;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* How long a job waits at its gate before it gives up (and the test fails). */
enum { GATE_MS = 10000 };

/* On a pool thread: wait until *flag reaches want (GATE_MS at most); whether it did. */
static bool wait_for(atomic_int *flag, int want)
{
    for (int i = 0; i < GATE_MS && atomic_load(flag) < want; i++)
        sleep_ms(1);
    return atomic_load(flag) >= want;
}

static void run_task(task *t)
{
    assert_int_equal(run_until_complete(loop, t), 0);
    assert_false(guarded_loop_hit());
}

/* ---- the work functions (on pool threads: no cmocka asserts there) ---- */

typedef struct {
    atomic_int *gate; /* when set, the work blocks until *gate >= gate_at */
    int gate_at;
    bool gate_passed; /* it did (not: GATE_MS went by) */
    long in, out;
    pthread_t ran_on;
    int cleanups; /* loop thread */
    int fail;     /* raise an OSError instead */
} job_arg;

static coro_value slow_square(void *arg, coro_error **err)
{
    job_arg *j = arg;
    j->ran_on = pthread_self();
    if (j->gate)
        j->gate_passed = wait_for(j->gate, j->gate_at);
    if (j->fail) {
        *err = coro_error_new(CORO_OSERROR, ENOENT, "no row %ld", j->in);
        return (coro_value){0};
    }
    j->out = j->in * j->in;
    return (coro_value){j, j->out};
}

static void count_cleanup(void *arg)
{
    job_arg *j = arg;
    assert_true(pthread_equal(pthread_self(), loop_thread));
    j->cleanups++;
}

/* ---- one coroutine awaiting one deferred job ---- */

typedef struct {
    coro co;
    job_arg *job;
    future *result;
    coro_value got;
    int caught;
    coro_error_kind caught_kind;
    int caught_errno;
    char caught_msg[64];
    int finally_ran;
} waiter_frame;

static int waiter_body(coro *co)
{
    waiter_frame *f = (waiter_frame *)co;
    CORO_BEGIN(co);
    f->result = defer_to_thread(pool, slow_square, f->job);
    AWAIT_FUTURE_CATCH(co, f->result);
    if (co->err) {
        f->caught = 1;
        f->caught_kind = co->err->kind;
        f->caught_errno = co->err->errnum;
        snprintf(f->caught_msg, sizeof f->caught_msg, "%s", co->err->msg);
        coro_error_free(co->err);
        co->err = NULL;
    } else {
        f->got = co->value;
    }
    CORO_END(co);
}

static waiter_frame seen; /* copied out in finally: the frame is freed */

static void waiter_finally(coro *co)
{
    waiter_frame *f = (waiter_frame *)co;
    defer_release(f->result, count_cleanup);
    f->finally_ran = 1;
    seen = *f;
}

static const coro_def waiter_def = {"waiter", __FILE__, waiter_body, waiter_finally,
                                    sizeof(waiter_frame)};

static coro *waiter(job_arg *j)
{
    waiter_frame *f = (waiter_frame *)coro_new(&waiter_def);
    assert_non_null(f);
    f->job = j;
    return &f->co;
}

/* The loop goes on while the work blocks: the work waits until a 10 ms ticker on the
 * loop has ticked 5 times (if the loop were blocked, it never would: the gate gives up
 * after GATE_MS). */
static atomic_int ticks;

static void tick(selector *s, void *arg)
{
    (void)arg;
    if (atomic_fetch_add(&ticks, 1) + 1 < 1000)
        selector_call_later(s, 10, tick, NULL);
}

static void test_result_on_loop_thread(void **state)
{
    (void)state;
    job_arg j = {.gate = &ticks, .gate_at = 5, .in = 12};
    memset(&seen, 0, sizeof seen);
    atomic_store(&ticks, 0);
    selector_call_later(loop, 10, tick, NULL);
    task *t = task_new(loop, waiter(&j), "waiter");
    run_task(t);
    assert_int_equal(seen.caught, 0);
    assert_int_equal(seen.got.n, 144);
    assert_ptr_equal(seen.got.p, &j);
    assert_false(pthread_equal(j.ran_on, loop_thread));
    assert_int_equal(j.cleanups, 1);
    if (!j.gate_passed)
        fail_msg("the loop ticked %d times in %d ms while the work ran: it was blocked",
                 atomic_load(&ticks), GATE_MS);
}

static void test_error_is_raised(void **state)
{
    (void)state;
    job_arg j = {.in = 7, .fail = 1};
    memset(&seen, 0, sizeof seen);
    task *t = task_new(loop, waiter(&j), "waiter");
    run_task(t);
    assert_int_equal(seen.caught, 1);
    assert_int_equal(seen.caught_kind, CORO_OSERROR);
    assert_int_equal(seen.caught_errno, ENOENT);
    assert_string_equal(seen.caught_msg, "no row 7");
    assert_int_equal(j.cleanups, 1);
}

/* Cancelled while the work runs: the coroutine is gone at once; the job finishes on
 * its own and only then cleans up. The work waits for the test's word (after the
 * cancel) however late the cancel timer fires. */
static void stop_when_idle(selector *s, void *arg)
{
    (void)arg;
    if (threadpool_pending(pool) == 0)
        selector_stop(s);
    else
        selector_call_later(s, 5, stop_when_idle, NULL);
}

static void cancel_task(selector *s, void *arg)
{
    (void)s;
    task_cancel(arg);
}

static void test_cancel_while_waiting(void **state)
{
    (void)state;
    static atomic_int go;
    atomic_store(&go, 0);
    job_arg j = {.gate = &go, .gate_at = 1, .in = 3};
    memset(&seen, 0, sizeof seen);
    task *t = task_new(loop, waiter(&j), "waiter");
    selector_call_later(loop, 50, cancel_task, t);
    run_task(t);
    assert_int_equal(seen.caught_kind, CORO_CANCELLED); /* where it awaited */
    assert_int_equal(seen.finally_ran, 1);
    assert_int_equal(j.cleanups, 0); /* the work still holds arg */
    assert_int_equal(threadpool_pending(pool), 1);
    atomic_store(&go, 1);
    selector_call_soon(loop, stop_when_idle, NULL);
    selector_run(loop);
    assert_false(guarded_loop_hit());
    assert_int_equal(threadpool_pending(pool), 0);
    assert_true(j.gate_passed);
    assert_int_equal(j.out, 9); /* it ran to the end */
    assert_int_equal(j.cleanups, 1);
}

/* ---- stress: 100 tasks await 1,000 deferred jobs each ---- */

#define NTASKS    100
#define JOBS_EACH 1000

static long total_sum;
static int tasks_left;

static coro_value plus_one(void *arg, coro_error **err)
{
    (void)err;
    return (coro_value){NULL, (long long)(intptr_t)arg + 1};
}

typedef struct {
    coro co;
    int i;
    long sum;
    future *f;
} chain_frame;

static int chain_body(coro *co)
{
    chain_frame *f = (chain_frame *)co;
    CORO_BEGIN(co);
    for (f->i = 0; f->i < JOBS_EACH; f->i++) {
        f->f = defer_to_thread(pool, plus_one, (void *)(intptr_t)f->i);
        AWAIT_FUTURE(co, f->f);
        f->sum += co->value.n;
        defer_release(f->f, NULL);
        f->f = NULL;
    }
    total_sum += f->sum;
    if (--tasks_left == 0)
        selector_stop(co->task->loop);
    CORO_END(co);
}

static void chain_finally(coro *co)
{
    defer_release(((chain_frame *)co)->f, NULL);
}

static const coro_def chain_def = {"chain", __FILE__, chain_body, chain_finally,
                                   sizeof(chain_frame)};

static void test_stress_100k_deferred(void **state)
{
    (void)state;
    total_sum = 0;
    tasks_left = NTASKS;
    for (int i = 0; i < NTASKS; i++) {
        coro *co = coro_new(&chain_def);
        assert_non_null(co);
        task_detach(task_new(loop, co, "chain"));
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    selector_run(loop);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_false(guarded_loop_hit());
    assert_int_equal(tasks_left, 0);
    /* each task: 1 + 2 + ... + JOBS_EACH */
    assert_int_equal(total_sum, (long)NTASKS * JOBS_EACH * (JOBS_EACH + 1) / 2);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
    print_message("    %d deferred jobs awaited by %d tasks: %.2f s (%.0f jobs/s)\n",
                  NTASKS * JOBS_EACH, NTASKS, secs, NTASKS * JOBS_EACH / secs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_result_on_loop_thread, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_is_raised, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel_while_waiting, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stress_100k_deferred, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
