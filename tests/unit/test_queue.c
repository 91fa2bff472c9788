/* test_queue.c — stage 3's joinable Queue (stage3_queue/queue.c): put_nowait counts
 * unfinished tasks, get waits for an item, task_done counts them down, and join waits
 * until the count is zero — woken from the loop, never from inside task_done. The last
 * test is the crawler's pattern: workers that get, sometimes put, and task_done, and a
 * coroutine that joins.
 *
 * Every test runs on a real selector with a guard timer (guard.h), as test_coro does. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coro.h"
#include "future.h"
#include "queue.h"
#include "selector.h"
#include "task.h"

#include "loopguard.h"
#include "request_check.h"

static selector *loop;
static queue q;

/* A check that, when it fails, says what the test observed: the exercise grader's
 * hints (docs/exercises/stage3-queue/grade.conf) are chosen by these words. */
#define expect_that(cond, ...)                                                                     \
    do {                                                                                           \
        if (!(cond))                                                                               \
            fail_msg(__VA_ARGS__);                                                                 \
    } while (0)

/* join's task is still waiting, as it must with N item(s) unfinished; WHEN: at what. */
#define expect_join_waits(t, when)                                                                 \
    expect_that(!future_done(task_future(t)),                                                      \
                "join finished %s, with %zu item(s) unfinished: the future it awaited "            \
                "was already resolved",                                                            \
                when, q.unfinished_tasks)

static int setup(void **state)
{
    (void)state;
    loop = guarded_loop_new(5000);
    queue_init(&q, loop);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    task_free_all();
    queue_clear(&q);
    guarded_loop_free(loop);
    loop = NULL;
    return 0;
}

/* put_nowait of a URL as a root's: 10 redirects, depth 0, no referrer, no callback. */
static void put(const char *url)
{
    crawl_request r = {url, 10, 0, NULL, NULL};
    queue_put_nowait(&q, &r);
}

static void stop_cb(selector *s, void *arg)
{
    (void)arg;
    selector_stop(s);
}

/* Let the loop run for ms milliseconds: whatever is scheduled or waiting gets its turn. */
static void spin(uint64_t ms)
{
    assert_non_null(selector_call_later(loop, ms, stop_cb, NULL));
    selector_run(loop);
    assert_false(guarded_loop_hit());
}

static void run_task(task *t)
{
    int rc = run_until_complete(loop, t);
    expect_that(!guarded_loop_hit(),
                "the guard timer stopped the loop: join still waited with %zu item(s) "
                "unfinished; nothing woke it",
                q.unfinished_tasks);
    expect_that(rc == 0, "run_until_complete returned %d: the loop stopped, the task unfinished",
                rc);
    expect_that(future_done(task_future(t)),
                "the task's future is still pending after the loop ran");
}

static task *start_join(void)
{
    coro *co = queue_join(&q);
    assert_non_null(co);
    task *t = task_new(loop, co, "join");
    assert_non_null(t);
    return t;
}

static void assert_join_succeeded(task *t)
{
    assert_true(future_done(task_future(t)));
    expect_that(task_future(t)->state == FUTURE_DONE, "join ended %s, not done: %s",
                task_future(t)->state == FUTURE_FAILED ? "with an error" : "cancelled",
                task_future(t)->error ? task_future(t)->error->msg : "");
}

/* ---- task_done and join -------------------------------------------------------------- */

/* Nothing was ever put: join has nothing to wait for. */
static void test_join_with_nothing_put(void **state)
{
    (void)state;
    task *t = start_join();
    run_task(t);
    assert_join_succeeded(t);
}

/* put_nowait counts; task_done counts down, once per call. */
static void test_task_done_counts_down(void **state)
{
    (void)state;
    put("http://a/");
    put("http://b/");
    put("http://c/");
    assert_int_equal(q.unfinished_tasks, 3);
    queue_task_done(&q);
    assert_int_equal(q.unfinished_tasks, 2);
    queue_task_done(&q);
    queue_task_done(&q);
    assert_int_equal(q.unfinished_tasks, 0);
}

/* join waits while any item is unfinished — taken or not — and finishes after the
 * last task_done. */
static void test_join_waits_for_every_task_done(void **state)
{
    (void)state;
    put("http://a/");
    put("http://b/");
    task *t = start_join();
    spin(20);
    expect_join_waits(t, "before any task_done");
    queue_task_done(&q);
    spin(20);
    expect_join_waits(t, "after one task_done of two"); /* one left */
    queue_task_done(&q);
    run_task(t);
    assert_join_succeeded(t);
}

/* The waiting join is woken from the loop (call_soon), not from inside task_done:
 * the caller of task_done goes on undisturbed. */
static void test_wakeup_is_scheduled(void **state)
{
    (void)state;
    put("http://a/");
    task *t = start_join();
    spin(10);
    expect_join_waits(t, "before any task_done");
    queue_task_done(&q);
    expect_that(!future_done(task_future(t)), /* not yet: on the next iteration */
                "join's task finished inside queue_task_done: the joiner ran in task_done's "
                "caller, not from the loop");
    run_task(t);
    assert_join_succeeded(t);
}

/* More task_done calls than items: the count stays at zero (asyncio raises
 * ValueError; here it is ignored) and does not wrap round. */
static void test_extra_task_done_is_ignored(void **state)
{
    (void)state;
    queue_task_done(&q);
    expect_that(q.unfinished_tasks == 0,
                "a task_done with nothing unfinished left unfinished_tasks at %zu, not 0",
                q.unfinished_tasks);
    put("http://a/");
    queue_task_done(&q);
    queue_task_done(&q);
    expect_that(q.unfinished_tasks == 0, "one put, two task_done: unfinished_tasks is %zu, not 0",
                q.unfinished_tasks);
    put("http://b/");
    assert_int_equal(q.unfinished_tasks, 1);
    task *t = start_join();
    spin(20);
    expect_join_waits(t, "after the count went to 0 and a new item came"); /* b is unfinished */
    queue_task_done(&q);
    run_task(t);
    assert_join_succeeded(t);
}

/* Every waiting join is woken, not just the first. */
static void test_two_joiners(void **state)
{
    (void)state;
    put("http://a/");
    task *t1 = start_join(), *t2 = start_join();
    spin(10);
    expect_join_waits(t1, "before any task_done");
    expect_join_waits(t2, "before any task_done");
    queue_task_done(&q);
    run_task(t1);
    run_task(t2);
    assert_join_succeeded(t1);
    assert_join_succeeded(t2);
}

/* The queue is reusable: after a join completed, new items make a new join wait. */
static void test_join_again_after_done(void **state)
{
    (void)state;
    put("http://a/");
    task *t1 = start_join();
    spin(10);
    queue_task_done(&q);
    run_task(t1);
    assert_join_succeeded(t1);

    put("http://b/");
    task *t2 = start_join();
    spin(20);
    expect_join_waits(t2, "on a new item, after an earlier join had finished");
    queue_task_done(&q);
    run_task(t2);
    assert_join_succeeded(t2);
}

/* A join cancelled while it waits unwinds cleanly, and the queue still works. */
static void test_cancel_waiting_join(void **state)
{
    (void)state;
    put("http://a/");
    task *t1 = start_join();
    spin(10);
    task_cancel(t1);
    assert_int_equal(task_future(t1)->state, FUTURE_CANCELLED);
    queue_task_done(&q);
    spin(10);
    put("http://b/");
    task *t2 = start_join();
    spin(10);
    expect_join_waits(t2, "on a new item, after an earlier join was cancelled");
    queue_task_done(&q);
    run_task(t2);
    assert_join_succeeded(t2);
}

/* ---- the crawler's pattern: workers and a join ----------------------------------------- */

enum { NWORKERS = 3, NROOTS = 4, CHILDREN = 3 };

static struct {
    int processed;         /* items taken and marked done */
    int processed_at_join; /* what the joiner saw when join returned */
    char seen[64][32];
} crawl_rec;

/* A worker: forever get an item; a root ("r<i>") "links to" CHILDREN children, put
 * before task_done; yield to the loop once (a fetch would), then task_done. */
typedef struct {
    coro co;
    crawl_request *req;
    future pause;
    sel_timer *pause_timer;
} worker_frame;

static void resolve_pause(selector *s, void *arg)
{
    (void)s;
    worker_frame *f = arg;
    f->pause_timer = NULL;
    future_set_result(&f->pause, (coro_value){NULL, 0});
}

static int worker_body(coro *co)
{
    worker_frame *f = (worker_frame *)co;
    CORO_BEGIN(co);
    for (;;) {
        AWAIT(co, queue_get(&q));
        f->req = co->value.p;
        future_clear(&f->pause);
        future_init(&f->pause);
        f->pause_timer = selector_call_soon(loop, resolve_pause, f);
        assert_non_null(f->pause_timer);
        AWAIT_FUTURE(co, &f->pause);
        if (f->req->url[0] == 'r') {
            for (int i = 0; i < CHILDREN; i++) {
                char child[32];
                snprintf(child, sizeof child, "c%s.%d", f->req->url + 1, i);
                put(child);
            }
        }
        snprintf(crawl_rec.seen[crawl_rec.processed++], 32, "%s", f->req->url);
        free(f->req);
        f->req = NULL;
        queue_task_done(&q);
    }
    CORO_END(co);
}

static void worker_finally(coro *co)
{
    worker_frame *f = (worker_frame *)co;
    free(f->req);
    if (f->pause_timer)
        selector_cancel(loop, f->pause_timer);
    future_clear(&f->pause);
}

static const coro_def worker_def = {"worker", __FILE__, worker_body, worker_finally,
                                    sizeof(worker_frame)};

typedef struct {
    coro co;
} crawl_frame;

static int crawl_body(coro *co)
{
    CORO_BEGIN(co);
    AWAIT(co, queue_join(&q));
    crawl_rec.processed_at_join = crawl_rec.processed;
    CORO_END(co);
}

static const coro_def crawl_def = {"crawl", __FILE__, crawl_body, NULL, sizeof(crawl_frame)};

static void test_workers_and_join(void **state)
{
    (void)state;
    memset(&crawl_rec, 0, sizeof crawl_rec);
    for (int i = 0; i < NROOTS; i++) {
        char root[8];
        snprintf(root, sizeof root, "r%d", i);
        put(root);
    }
    task *workers[NWORKERS];
    for (int i = 0; i < NWORKERS; i++) {
        worker_frame *w = (worker_frame *)coro_new(&worker_def);
        assert_non_null(w);
        future_init(&w->pause);
        workers[i] = task_new(loop, &w->co, "worker");
        assert_non_null(workers[i]);
    }
    task *crawler = task_new(loop, coro_new(&crawl_def), "crawl");
    assert_non_null(crawler);
    run_task(crawler);
    assert_join_succeeded(crawler);

    int want = NROOTS * (1 + CHILDREN);
    assert_int_equal(crawl_rec.processed_at_join, want); /* join waited for all */
    assert_int_equal(q.unfinished_tasks, 0);
    assert_int_equal(queue_qsize(&q), 0);
    for (int i = 0; i < NWORKERS; i++) { /* parked in get */
        assert_false(future_done(task_future(workers[i])));
        task_cancel(workers[i]);
        assert_int_equal(task_future(workers[i])->state, FUTURE_CANCELLED);
    }
    assert_int_equal(crawl_rec.processed, want);
}

/* ---- what travels with a URL ---------------------------------------------------------- */

/* get hands back each request as it was put: the URL, max_redirect, depth, referrer
 * and callback (absent ones absent), oldest first. */
static void test_request_fields_survive(void **state)
{
    (void)state;
    crawl_request deep = {"http://a/x", 3, 7, "http://a/", "parse_item"};
    crawl_request root = {"http://b/", 10, 0, NULL, NULL};
    queue_put_nowait(&q, &deep);
    queue_put_nowait(&q, &root);
    crawl_request *got[2];
    for (int i = 0; i < 2; i++) {
        task *t = task_new(loop, queue_get(&q), "get");
        run_task(t);
        got[i] = task_future(t)->result.p;
        task_free(t);
    }
    assert_same_request(got[0], &deep);
    assert_same_request(got[1], &root);
    free(got[0]);
    free(got[1]);
}

/* Requests put one after the other share their referrer and callback in the queue
 * (jobq.h): each still comes back with its own, whatever the order. */
static void test_shared_referrers_kept_apart(void **state)
{
    (void)state;
    const crawl_request put_in[] = {
        {"http://a/1", 10, 1, "http://a/", NULL}, {"http://a/2", 10, 1, "http://a/", NULL},
        {"http://a/3", 9, 1, "http://a/", "cb"},  {"http://b/1", 10, 2, "http://b/", NULL},
        {"http://c/", 10, 0, NULL, NULL},         {"http://a/4", 10, 1, "http://a/", NULL},
        {"http://d/", 10, 0, NULL, "cb"},
    };
    size_t n = sizeof put_in / sizeof put_in[0];
    for (size_t i = 0; i < n; i++)
        queue_put_nowait(&q, &put_in[i]);
    for (size_t i = 0; i < n; i++) {
        task *t = task_new(loop, queue_get(&q), "get");
        run_task(t);
        crawl_request *got = task_future(t)->result.p;
        task_free(t);
        assert_same_request(got, &put_in[i]);
        free(got);
    }
}

/* The packed FIFO itself (jobq.c): 20,000 requests put and taken in bursts, so that
 * the queue empties, refills and spans many chunks; URLs that share long prefixes,
 * none, or are longer than a chunk; referrers and callbacks that change or not;
 * negative, large and small numbers. Each comes back as it went in, in order. */
static void test_jobq_packed_round_trip(void **state)
{
    (void)state;
    enum { N = 20000 };
    static char urls[N][96], refs[N][48];
    char *huge = malloc(70000);
    assert_non_null(huge);
    memset(huge, 'x', 69999);
    memcpy(huge, "http://h/", 9);
    huge[69999] = '\0';
    crawl_request *want = calloc(N, sizeof *want);
    assert_non_null(want);
    unsigned seed = 7;
    for (int i = 0; i < N; i++) {
        seed = seed * 1103515245u + 12345u;
        unsigned v = seed >> 8;
        if (v % 97 == 0)
            snprintf(urls[i], sizeof urls[i], "%s", "x"); /* shares nothing */
        else
            snprintf(urls[i], sizeof urls[i], "http://127.0.0.%u:8080/p/%u%s", v % 3, v % 100000,
                     v % 5 ? "" : "?q=long-ish-query-string");
        snprintf(refs[i], sizeof refs[i], "http://127.0.0.1:8080/p/%d", i / 12);
        want[i] = (crawl_request){i % 1000 == 999 ? huge : urls[i], (int)(v % 21) - 10,
                                  i % 7 == 0 ? 1000000 + i : i % 4, v % 11 ? refs[i] : NULL,
                                  v % 13 == 0 ? "parse_item" : NULL};
    }
    jobq jq;
    jobq_init(&jq);
    int put = 0, taken = 0;
    while (taken < N) {
        seed = seed * 1103515245u + 12345u;
        int burst = (int)((seed >> 8) % 700);
        for (int k = 0; k < burst && put < N; k++)
            jobq_push(&jq, &want[put++]);
        assert_int_equal(jobq_size(&jq), (size_t)(put - taken));
        int drain = (int)((seed >> 16) % 800);
        for (int k = 0; k < drain && taken < put; k++) {
            crawl_request *got = jobq_pop(&jq);
            assert_non_null(got);
            assert_same_request(got, &want[taken++]);
            free(got);
        }
        if (taken == put && put < N)
            assert_null(jobq_pop(&jq));
    }
    assert_null(jobq_pop(&jq));
    for (int i = 0; i < 300; i++) /* left in the queue: jobq_clear frees them */
        jobq_push(&jq, &want[i]);
    jobq_clear(&jq);
    assert_int_equal(jobq_size(&jq), 0);
    free(want);
    free(huge);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_join_with_nothing_put),
        T(test_task_done_counts_down),
        T(test_join_waits_for_every_task_done),
        T(test_wakeup_is_scheduled),
        T(test_extra_task_done_is_ignored),
        T(test_two_joiners),
        T(test_join_again_after_done),
        T(test_cancel_waiting_join),
        T(test_workers_and_join),
        T(test_request_fields_survive),
        T(test_shared_referrers_kept_apart),
        T(test_jobq_packed_round_trip),
    };
    /* env CRAWL_TEST_FILTER: only the cases it matches (a cmocka glob), as the
     * exercise grader runs a case alone again (scripts/exercise.sh, `repeat`). */
    const char *only = getenv("CRAWL_TEST_FILTER");
    if (only && *only)
        cmocka_set_test_filter(only);
    return cmocka_run_group_tests_name("queue", tests, NULL, NULL);
}
