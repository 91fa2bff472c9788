/* test_coro.c — stage 2's machinery, checked against the chapter's generator examples:
 * gen_fn awaiting two futures and returning "done", caller_fn delegating to it (yield
 * from), errors raised through the chain with their traceback, a caught error, an
 * already-resolved future (footnote 9), a Task awaited as a Future, cancellation,
 * run_until_complete, task_dump, and the Future's done-callbacks.
 *
 * Every test runs on a real selector with a guard timer that stops the loop and fails
 * the test rather than let it hang. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coro.h"
#include "future.h"
#include "selector.h"
#include "task.h"

#include "loopguard.h"

/* __FILE__ as the generators target's -fmacro-prefix-map makes it. */
#define THIS_FILE "tests/unit/test_coro.c"

/* A check that, when it fails, says what the test observed: the exercise grader's
 * hints (docs/exercises/stage2-await/grade.conf, stage2-task_step's) are chosen by
 * these words, not by a line number. */
#define expect_that(cond, ...)                                                                     \
    do {                                                                                           \
        if (!(cond))                                                                               \
            fail_msg(__VA_ARGS__);                                                                 \
    } while (0)

static const char *state_name(future_state s)
{
    static const char *const names[] = {"pending", "done", "failed", "cancelled"};
    return (unsigned)s < 4 ? names[s] : "?";
}

static selector *loop;

/* What the coroutines saw, for the tests to check after their frames are gone. */
static struct {
    const char *got1, *got2; /* values sent in at the two awaits */
    const char *rv;          /* caller_fn: the return value of its yield from */
    int gen_resumes, gen_finally;
    int caller_resumes, caller_finally;
    int caught;
    coro_error_kind caught_kind;
    char caught_msg[64];
    int sleeper_resumes, sleeper_woke, sleeper_finally;
    int eager_resumes;
} rec;

static int setup(void **state)
{
    (void)state;
    loop = guarded_loop_new(5000);
    memset(&rec, 0, sizeof rec);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    task_free_all();
    guarded_loop_free(loop);
    loop = NULL;
    return 0;
}

static void run_task(task *t)
{
    int rc = run_until_complete(loop, t);
    expect_that(!guarded_loop_hit(),
                "the guard timer stopped the loop: the task never finished (its future %s, its "
                "coroutine %s)",
                state_name(task_future(t)->state), t->coro ? "still alive" : "gone");
    expect_that(rc == 0, "run_until_complete returned %d: the loop stopped, the task unfinished",
                rc);
    expect_that(future_done(task_future(t)),
                "the task's future is still pending after the loop ran");
}

/* Resolve a future from the loop, noting where the task's frames stood just before
 * the value was sent in. */
typedef struct {
    future *f;
    const char *value;
    task *t;
    int fired;
    int outer_lasti, inner_lasti;
} resolver;

static void resolve_later(selector *s, void *arg)
{
    (void)s;
    resolver *r = arg;
    r->fired = 1;
    if (r->t && r->t->coro) {
        r->outer_lasti = coro_lasti(r->t->coro);
        r->inner_lasti = r->t->coro->child ? coro_lasti(r->t->coro->child) : -1;
    }
    future_set_result(r->f, (coro_value){(void *)r->value, 0});
}

static void resolve_in(uint64_t ms, resolver *r)
{
    assert_non_null(selector_call_later(loop, ms, resolve_later, r));
}

/* ---- gen_fn: result = yield 1; ...; result2 = yield 2; return 'done' ------------- */

enum { GEN_NORMAL, GEN_RAISE, GEN_YIELD_RAISE };

typedef struct {
    future *f1, *f2;
    int mode;
} gen_args;

typedef struct {
    coro co;
    gen_args a;
} gen_frame;

static int gen_await1_line, gen_await2_line, gen_raise_line, gen_uhoh_line;

static int gen_body(coro *co)
{
    gen_frame *f = (gen_frame *)co;
    rec.gen_resumes++;
    CORO_BEGIN(co);
    if (f->a.mode == GEN_RAISE) {
        gen_raise_line = __LINE__ + 1;
        CORO_RAISE(co, CORO_ERROR, 0, "my error");
    }
    gen_await1_line = __LINE__ + 1;
    AWAIT_FUTURE(co, f->a.f1); /* result = yield 1 */
    rec.got1 = co->value.p;
    if (f->a.mode == GEN_YIELD_RAISE) {
        gen_uhoh_line = __LINE__ + 1;
        CORO_RAISE(co, CORO_ERROR, 0, "uh oh");
    }
    gen_await2_line = __LINE__ + 1;
    AWAIT_FUTURE(co, f->a.f2); /* result2 = yield 2 */
    rec.got2 = co->value.p;
    CORO_RETURN(co, "done", 0);
    CORO_END(co);
}

static void gen_finally(coro *co)
{
    (void)co;
    rec.gen_finally++;
}

static const coro_def gen_def = {"gen_fn", __FILE__, gen_body, gen_finally, sizeof(gen_frame)};

static coro *gen_new(const gen_args *a)
{
    gen_frame *f = (gen_frame *)coro_new(&gen_def);
    assert_non_null(f);
    f->a = *a;
    return &f->co;
}

/* ---- caller_fn: rv = yield from gen_fn() ---------------------------------------- */

typedef struct {
    coro co;
    gen_args a;
    int catch_errors;
} caller_frame;

static int caller_await_line, caller_catch_line;

static int caller_body(coro *co)
{
    caller_frame *f = (caller_frame *)co;
    rec.caller_resumes++;
    CORO_BEGIN(co);
    if (f->catch_errors) {
        caller_catch_line = __LINE__ + 1;
        AWAIT_CATCH(co, gen_new(&f->a)); /* try: yield from gen_fn() */
        if (co->err) {                   /* except Exception as exc: */
            rec.caught = 1;
            rec.caught_kind = co->err->kind;
            snprintf(rec.caught_msg, sizeof rec.caught_msg, "%s", co->err->msg);
            coro_error_free(co->err);
            co->err = NULL;
            CORO_RETURN(co, "recovered", 2);
        }
    } else {
        caller_await_line = __LINE__ + 1;
        AWAIT(co, gen_new(&f->a)); /* rv = yield from gen_fn() */
    }
    rec.rv = co->value.p;
    CORO_RETURN(co, co->value.p, 1);
    CORO_END(co);
}

static void caller_finally(coro *co)
{
    (void)co;
    rec.caller_finally++;
}

static const coro_def caller_def = {"caller_fn", __FILE__, caller_body, caller_finally,
                                    sizeof(caller_frame)};

static coro *caller_new(const gen_args *a, int catch_errors)
{
    caller_frame *f = (caller_frame *)coro_new(&caller_def);
    assert_non_null(f);
    f->a = *a;
    f->catch_errors = catch_errors;
    return &f->co;
}

/* ---- sleeper_fn: waits on a future no one resolves; parent_fn awaits it ---------- */

typedef struct {
    coro co;
    future *never;
} sleeper_frame;

static int sleeper_body(coro *co)
{
    sleeper_frame *f = (sleeper_frame *)co;
    rec.sleeper_resumes++;
    CORO_BEGIN(co);
    AWAIT_FUTURE(co, f->never);
    rec.sleeper_woke = 1;
    CORO_END(co);
}

static void sleeper_finally(coro *co)
{
    (void)co;
    rec.sleeper_finally++;
}

static const coro_def sleeper_def = {"sleeper_fn", __FILE__, sleeper_body, sleeper_finally,
                                     sizeof(sleeper_frame)};

static coro *sleeper_new(future *never)
{
    sleeper_frame *f = (sleeper_frame *)coro_new(&sleeper_def);
    assert_non_null(f);
    f->never = never;
    return &f->co;
}

typedef struct {
    coro co;
    future *never;
    int reraise;
} parent_frame;

static int parent_body(coro *co)
{
    parent_frame *f = (parent_frame *)co;
    CORO_BEGIN(co);
    AWAIT_CATCH(co, sleeper_new(f->never));
    if (co->err) {
        rec.caught = 1;
        rec.caught_kind = co->err->kind;
        snprintf(rec.caught_msg, sizeof rec.caught_msg, "%s", co->err->msg);
        if (f->reraise)
            CORO_RAISE_ERR(co);
        coro_error_free(co->err);
        co->err = NULL;
    }
    CORO_RETURN(co, "cleaned up", 0);
    CORO_END(co);
}

static const coro_def parent_def = {"parent_fn", __FILE__, parent_body, NULL, sizeof(parent_frame)};

static coro *parent_new(future *never, int reraise)
{
    parent_frame *f = (parent_frame *)coro_new(&parent_def);
    assert_non_null(f);
    f->never = never;
    f->reraise = reraise;
    return &f->co;
}

/* ---- self_cancel_fn: cancels its own Task, then waits --------------------------- */

typedef struct {
    coro co;
    future *never;
} self_cancel_frame;

static int self_cancel_body(coro *co)
{
    self_cancel_frame *f = (self_cancel_frame *)co;
    rec.sleeper_resumes++;
    CORO_BEGIN(co);
    task_cancel(co->task); /* from inside its own step: the Task is running */
    AWAIT_FUTURE(co, f->never);
    rec.sleeper_woke = 1;
    CORO_END(co);
}

static const coro_def self_cancel_def = {"self_cancel_fn", __FILE__, self_cancel_body,
                                         sleeper_finally, sizeof(self_cancel_frame)};

/* ---- stubborn_fn: catches a cancellation and waits again (4 times at most) ------- */

typedef struct {
    coro co;
    future *never;
    int waits;
} stubborn_frame;

static int stubborn_body(coro *co)
{
    stubborn_frame *f = (stubborn_frame *)co;
    CORO_BEGIN(co);
    for (f->waits = 0; f->waits < 4; f->waits++) { /* bounded: a test never spins */
        AWAIT_FUTURE_CATCH(co, f->never);
        if (co->err) {
            rec.caught++;
            rec.caught_kind = co->err->kind;
            snprintf(rec.caught_msg, sizeof rec.caught_msg, "%s", co->err->msg);
            coro_error_free(co->err);
            co->err = NULL;
        }
    }
    CORO_END(co);
}

static const coro_def stubborn_def = {"stubborn_fn", __FILE__, stubborn_body, sleeper_finally,
                                      sizeof(stubborn_frame)};

/* ---- eager_fn: awaits two futures that are already resolved ---------------------- */

typedef struct {
    coro co;
    future *f1, *f2;
    long long sum;
} eager_frame;

static int eager_body(coro *co)
{
    eager_frame *f = (eager_frame *)co;
    rec.eager_resumes++;
    CORO_BEGIN(co);
    AWAIT_FUTURE(co, f->f1);
    f->sum = co->value.n;
    AWAIT_FUTURE(co, f->f2);
    f->sum += co->value.n;
    CORO_RETURN(co, NULL, f->sum);
    CORO_END(co);
}

static const coro_def eager_def = {"eager_fn", __FILE__, eager_body, NULL, sizeof(eager_frame)};

/* ---- awaiter_fn: awaits another Task as a Future --------------------------------- */

typedef struct {
    coro co;
    task *other;
    int free_other; /* free the awaited task as soon as it is done */
} awaiter_frame;

static int awaiter_body(coro *co)
{
    awaiter_frame *f = (awaiter_frame *)co;
    CORO_BEGIN(co);
    AWAIT_FUTURE_CATCH(co, task_future(f->other));
    if (f->free_other) {
        task_free(f->other);
        f->other = NULL;
    }
    if (co->err) {
        rec.caught = 1;
        rec.caught_kind = co->err->kind;
        snprintf(rec.caught_msg, sizeof rec.caught_msg, "%s", co->err->msg);
        coro_error_free(co->err);
        co->err = NULL;
        CORO_RETURN(co, "saw the error", -1);
    }
    CORO_RETURN(co, co->value.p, co->value.n + 100);
    CORO_END(co);
}

static const coro_def awaiter_def = {"awaiter_fn", __FILE__, awaiter_body, NULL,
                                     sizeof(awaiter_frame)};

static coro *awaiter_new(task *other, int free_other)
{
    awaiter_frame *f = (awaiter_frame *)coro_new(&awaiter_def);
    assert_non_null(f);
    f->other = other;
    f->free_other = free_other;
    return &f->co;
}

static char *read_memstream(void (*fill)(FILE *, const void *), const void *arg)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    assert_non_null(m);
    fill(m, arg);
    fclose(m);
    return buf;
}

static void fill_traceback(FILE *m, const void *e)
{
    coro_error_print(e, m);
}
static void fill_dump(FILE *m, const void *t)
{
    task_dump(t, m);
}

/* ---- tests: generators ------------------------------------------------------------ */

static void test_file_is_relative(void **state)
{
    (void)state;
    /* The generators target exports -fmacro-prefix-map, so tracebacks name files
     * relative to the source tree. */
    assert_string_equal(__FILE__, THIS_FILE);
}

/* gen.send(None) -> 1; gen.send('hello') -> 2; gen.send('goodbye') -> StopIteration:
 * done — one step at a time, with f_lasti after each. */
static void test_gen_fn_step_by_step(void **state)
{
    (void)state;
    future f1, f2;
    future_init(&f1);
    future_init(&f2);
    gen_args a = {&f1, &f2, GEN_NORMAL};
    coro *gen = gen_new(&a);
    assert_int_equal(coro_lasti(gen), 0); /* f_lasti == -1: not begun */

    task *t = task_new(loop, gen, "gen");
    assert_non_null(t);
    assert_int_equal(rec.gen_resumes, 0); /* making the task runs nothing */
    assert_int_equal(coro_lasti(gen), 0);

    assert_true(selector_run_once(loop, 0) >= 1); /* the task's first step */
    expect_that(rec.gen_resumes == 1,
                "the task's first step resumed the coroutine %d times, want once", rec.gen_resumes);
    expect_that(
        t->coro && !future_done(task_future(t)),
        "after its first step the task is %s, its coroutine %s: the first AWAIT_FUTURE, on a "
        "pending future, did not wait",
        state_name(task_future(t)->state), t->coro ? "alive" : "gone");
    int lasti1 = coro_lasti(gen);
    assert_int_equal(lasti1, gen_await1_line); /* paused at the first yield */
    expect_that(f1.ncb == 1,
                "the coroutine waits on a future that has %zu done-callback(s), want 1: nothing "
                "will step the task when it resolves",
                (size_t)f1.ncb);

    future_set_result(&f1, (coro_value){"hello", 0}); /* gen.send('hello') */
    expect_that(rec.gen_resumes == 2,
                "resolving the future it waits on resumed the coroutine %d time(s), want once",
                rec.gen_resumes - 1);
    expect_that(rec.got1 && strcmp(rec.got1, "hello") == 0,
                "the coroutine got \"%s\" at the await, want the future's result \"hello\"",
                rec.got1 ? rec.got1 : "(null)");
    assert_null(rec.got2);
    int lasti2 = coro_lasti(gen);
    assert_int_equal(lasti2, gen_await2_line);
    assert_int_not_equal(lasti1, lasti2);
    assert_false(future_done(task_future(t)));

    future_set_result(&f2, (coro_value){"goodbye", 0}); /* gen.send('goodbye') */
    assert_int_equal(rec.gen_resumes, 3);
    assert_string_equal(rec.got2, "goodbye");
    assert_int_equal(task_future(t)->state, FUTURE_DONE);
    assert_string_equal(task_future(t)->result.p, "done"); /* StopIteration: done */
    assert_null(t->coro);
    assert_int_equal(rec.gen_finally, 1);

    task_free(t);
    assert_int_equal(task_live_count(), 0);
    future_clear(&f1);
    future_clear(&f2);
}

/* task_start_now: the first step runs in the caller (the chapter's Task.__init__), the
 * one task_new scheduled is dropped, and a second call does nothing. */
static void count_done(future *f, void *arg)
{
    (void)f;
    (*(int *)arg)++;
}

static void test_task_start_now(void **state)
{
    (void)state;
    future f1, f2;
    future_init(&f1);
    future_init(&f2);
    gen_args a = {&f1, &f2, GEN_NORMAL};
    size_t timers = selector_timer_count(loop); /* the test's guard */
    task *t = task_new(loop, gen_new(&a), "now");
    assert_int_equal(rec.gen_resumes, 0);
    assert_int_equal(selector_timer_count(loop), timers + 1); /* call_soon(step) */
    task_start_now(t);
    assert_int_equal(rec.gen_resumes, 1); /* stepped here, not by the loop */
    assert_int_equal(coro_lasti(t->coro), gen_await1_line);
    assert_int_equal(selector_timer_count(loop), timers); /* that step is gone */
    selector_run_once(loop, 0);
    task_start_now(t);
    assert_int_equal(rec.gen_resumes, 1); /* neither stepped it again */
    future_set_result(&f1, (coro_value){"hello", 0});
    future_set_result(&f2, (coro_value){"goodbye", 0});
    assert_string_equal(task_future(t)->result.p, "done");
    task_free(t);

    /* Finished within task_start_now: its done-callbacks have run and a detached task
     * is freed by the time the call returns. */
    gen_args r = {&f1, &f2, GEN_RAISE};
    int done = 0;
    t = task_new(loop, gen_new(&r), "fails at once");
    t->report_errors = 0;
    future_add_done_callback(task_future(t), count_done, &done);
    task_detach(t);
    task_start_now(t);
    assert_int_equal(done, 1);
    assert_int_equal(task_live_count(), 0);
    future_clear(&f1);
    future_clear(&f2);
}

/* The same, driven by the loop: timers resolve the futures. */
static void test_gen_fn_driven_by_task(void **state)
{
    (void)state;
    future f1, f2;
    future_init(&f1);
    future_init(&f2);
    gen_args a = {&f1, &f2, GEN_NORMAL};
    task *t = task_new(loop, gen_new(&a), NULL);
    assert_string_equal(t->name, "gen_fn");
    resolver r1 = {&f1, "hello", t, 0, 0, 0}, r2 = {&f2, "goodbye", t, 0, 0, 0};
    resolve_in(10, &r1);
    resolve_in(30, &r2);

    run_task(t);
    assert_true(r1.fired && r2.fired);
    assert_int_equal(r1.outer_lasti, gen_await1_line);
    assert_int_equal(r2.outer_lasti, gen_await2_line);
    assert_int_not_equal(r1.outer_lasti, r2.outer_lasti);
    assert_string_equal(rec.got1, "hello");
    assert_string_equal(rec.got2, "goodbye");
    assert_int_equal(rec.gen_resumes, 3);
    assert_int_equal(task_future(t)->state, FUTURE_DONE);
    assert_string_equal(task_future(t)->result.p, "done");

    task_free(t);
    assert_int_equal(task_live_count(), 0);
    future_clear(&f1);
    future_clear(&f2);
}

/* caller_fn: rv = yield from gen. Its lasti stays at the yield from while gen moves
 * from one yield to the next; gen's return value becomes the caller's co->value. */
static void test_caller_delegates_with_await(void **state)
{
    (void)state;
    future f1, f2;
    future_init(&f1);
    future_init(&f2);
    gen_args a = {&f1, &f2, GEN_NORMAL};
    coro *caller = caller_new(&a, 0);
    task *t = task_new(loop, caller, "caller");
    resolver r1 = {&f1, "hello", t, 0, 0, 0}, r2 = {&f2, "goodbye", t, 0, 0, 0};
    resolve_in(10, &r1);
    resolve_in(30, &r2);

    assert_true(selector_run_once(loop, 0) >= 1);
    assert_int_equal(coro_lasti(caller), caller_await_line);
    assert_non_null(caller->child);
    assert_ptr_equal(caller->child->parent, caller); /* f_back */
    assert_ptr_equal(caller->child->task, t);
    assert_ptr_equal(caller->child->waiting, &f1);
    assert_null(caller->waiting);

    run_task(t);
    assert_int_equal(r1.outer_lasti, caller_await_line);
    assert_int_equal(r2.outer_lasti, caller_await_line); /* hasn't advanced */
    assert_int_equal(r1.inner_lasti, gen_await1_line);
    assert_int_equal(r2.inner_lasti, gen_await2_line); /* the child has */
    assert_string_equal(rec.got1, "hello");            /* values flow through */
    assert_string_equal(rec.got2, "goodbye");
    assert_string_equal(rec.rv, "done"); /* return value of yield-from */
    assert_int_equal(rec.caller_resumes, 3);
    assert_int_equal(rec.gen_resumes, 3);
    assert_int_equal(rec.gen_finally, 1);
    assert_int_equal(rec.caller_finally, 1);
    assert_int_equal(task_future(t)->state, FUTURE_DONE);
    assert_string_equal(task_future(t)->result.p, "done");
    assert_int_equal(task_future(t)->result.n, 1);

    task_free(t);
    assert_int_equal(task_live_count(), 0);
    future_clear(&f1);
    future_clear(&f2);
}

/* def gen_fn(): raise Exception('my error') — through caller_fn to the task, with a
 * traceback naming both frames. */
static void test_error_propagates_with_traceback(void **state)
{
    (void)state;
    gen_args a = {NULL, NULL, GEN_RAISE};
    task *t = task_new(loop, caller_new(&a, 0), "caller");
    t->report_errors = 0;

    run_task(t);
    future *tf = task_future(t);
    assert_int_equal(tf->state, FUTURE_FAILED);
    assert_non_null(tf->error);
    assert_int_equal(tf->error->kind, CORO_ERROR);
    assert_string_equal(tf->error->msg, "my error");
    assert_string_equal(coro_error_class(tf->error), "Exception");
    char line[128];
    assert_string_equal(coro_error_line(tf->error, line, sizeof line), "Exception: my error");
    assert_null(rec.rv); /* the caller did not go on */
    assert_int_equal(rec.gen_finally, 1);
    assert_int_equal(rec.caller_finally, 1);

    char want[512];
    snprintf(want, sizeof want,
             "Traceback (most recent call last):\n"
             "  File \"" THIS_FILE "\", line %d, in caller_fn\n"
             "  File \"" THIS_FILE "\", line %d, in gen_fn\n"
             "Exception: my error\n",
             caller_await_line, gen_raise_line);
    char *got = read_memstream(fill_traceback, tf->error);
    assert_string_equal(got, want);
    free(got);

    task_free(t);
    assert_int_equal(task_live_count(), 0);
}

/* try: yield from gen_fn() except Exception: 'caught uh oh', and caller_fn goes on. */
static void test_error_caught_by_caller(void **state)
{
    (void)state;
    future f1, f2;
    future_init(&f1);
    future_init(&f2);
    gen_args a = {&f1, &f2, GEN_YIELD_RAISE};
    task *t = task_new(loop, caller_new(&a, 1), "caller");
    resolver r1 = {&f1, "hello", t, 0, 0, 0};
    resolve_in(10, &r1);

    run_task(t);
    assert_int_equal(r1.outer_lasti, caller_catch_line);
    assert_string_equal(rec.got1, "hello");
    assert_true(rec.caught);
    assert_int_equal(rec.caught_kind, CORO_ERROR);
    assert_string_equal(rec.caught_msg, "uh oh");
    assert_int_equal(task_future(t)->state, FUTURE_DONE); /* returned normally */
    assert_string_equal(task_future(t)->result.p, "recovered");
    assert_null(task_future(t)->error);
    assert_int_equal(rec.gen_finally, 1);
    task_free(t);

    /* The same try/except when nothing is raised: the value comes through. */
    memset(&rec, 0, sizeof rec);
    future_clear(&f1);
    future_clear(&f2);
    a.mode = GEN_NORMAL;
    t = task_new(loop, caller_new(&a, 1), "caller");
    r1 = (resolver){&f1, "hello", t, 0, 0, 0};
    resolver r2 = {&f2, "goodbye", t, 0, 0, 0};
    resolve_in(5, &r1);
    resolve_in(10, &r2);
    run_task(t);
    assert_false(rec.caught);
    assert_string_equal(rec.rv, "done");
    assert_string_equal(task_future(t)->result.p, "done");
    task_free(t);

    assert_int_equal(task_live_count(), 0);
    future_clear(&f1);
    future_clear(&f2);
}

/* Footnote 9: awaiting a future that is already resolved goes straight on. */
static void test_resolved_future_does_not_suspend(void **state)
{
    (void)state;
    future f1, f2;
    future_init(&f1);
    future_init(&f2);
    future_set_result(&f1, (coro_value){NULL, 40});
    future_set_result(&f2, (coro_value){NULL, 2});
    eager_frame *ef = (eager_frame *)coro_new(&eager_def);
    assert_non_null(ef);
    ef->f1 = &f1;
    ef->f2 = &f2;
    task *t = task_new(loop, &ef->co, "eager");

    assert_true(selector_run_once(loop, 0) >= 1); /* one step, no more */
    expect_that(rec.eager_resumes == 1 && future_done(task_future(t)),
                "awaiting two futures already resolved, the task is %s after one step (its "
                "coroutine resumed %d times): an await of a resolved future waited",
                state_name(task_future(t)->state), rec.eager_resumes);
    assert_int_equal(task_future(t)->result.n, 42);
    assert_int_equal(f1.ncb, 0); /* nobody hooked onto them */
    assert_int_equal(f2.ncb, 0);

    task_free(t);
    assert_int_equal(task_live_count(), 0);
    future_clear(&f1);
    future_clear(&f2);
}

/* A failed future raises its error at the await, with the awaiting frame's line. */
static void test_failed_future_raises_at_await(void **state)
{
    (void)state;
    future f1, f2;
    future_init(&f1);
    future_init(&f2);
    gen_args a = {&f1, &f2, GEN_NORMAL};
    task *t = task_new(loop, caller_new(&a, 0), "caller");
    t->report_errors = 0;
    assert_true(selector_run_once(loop, 0) >= 1);
    future_set_error(&f1, coro_error_new(CORO_OSERROR, 111, "connect: Connection refused"));

    future *tf = task_future(t);
    expect_that(tf->state == FUTURE_FAILED,
                "the awaited future failed, and the task is %s (got \"%s\"): the error was not "
                "raised at the await",
                state_name(tf->state), rec.got1 ? rec.got1 : "(null)");
    assert_int_equal(tf->error->kind, CORO_OSERROR);
    assert_int_equal(tf->error->errnum, 111);
    char want[512];
    snprintf(want, sizeof want,
             "Traceback (most recent call last):\n"
             "  File \"" THIS_FILE "\", line %d, in caller_fn\n"
             "  File \"" THIS_FILE "\", line %d, in gen_fn\n"
             "OSError: [Errno 111] connect: Connection refused\n",
             caller_await_line, gen_await1_line);
    char *got = read_memstream(fill_traceback, tf->error);
    assert_string_equal(got, want);
    free(got);
    assert_null(rec.got1);

    task_free(t);
    future_clear(&f1);
    future_clear(&f2);
}

/* A Task is a Future: another coroutine awaits it and gets its result. */
static void test_task_as_future(void **state)
{
    (void)state;
    future f1, f2;
    future_init(&f1);
    future_init(&f2);
    gen_args a = {&f1, &f2, GEN_NORMAL};
    task *b = task_new(loop, gen_new(&a), "inner");
    task *w = task_new(loop, awaiter_new(b, 0), "outer");
    resolver r1 = {&f1, "hello", b, 0, 0, 0}, r2 = {&f2, "goodbye", b, 0, 0, 0};
    resolve_in(5, &r1);
    resolve_in(15, &r2);

    run_task(w);
    assert_true(future_done(task_future(b)));
    assert_string_equal(task_future(w)->result.p, "done");
    assert_int_equal(task_future(w)->result.n, 100);

    /* Awaiting a task that is already done goes straight on. */
    task *w2 = task_new(loop, awaiter_new(b, 0), "late");
    assert_true(selector_run_once(loop, 0) >= 1);
    assert_true(future_done(task_future(w2)));
    assert_string_equal(task_future(w2)->result.p, "done");

    task_free(w2);
    task_free(w);
    task_free(b);
    assert_int_equal(task_live_count(), 0);
    future_clear(&f1);
    future_clear(&f2);
}

/* Awaiting a task that fails gives its error; awaiting a cancelled one, a
 * CancelledError. */
static void test_task_as_future_error(void **state)
{
    (void)state;
    gen_args a = {NULL, NULL, GEN_RAISE};
    task *b = task_new(loop, caller_new(&a, 0), "inner");
    b->report_errors = 0;
    task *w = task_new(loop, awaiter_new(b, 0), "outer");
    run_task(w);
    expect_that(rec.caught,
                "the inner task raised \"my error\", its future is %s, and the task awaiting it "
                "caught no error",
                state_name(task_future(b)->state));
    assert_int_equal(rec.caught_kind, CORO_ERROR);
    assert_string_equal(rec.caught_msg, "my error");
    assert_string_equal(task_future(w)->result.p, "saw the error");
    task_free(w);
    task_free(b);

    memset(&rec, 0, sizeof rec);
    future never;
    future_init(&never);
    b = task_new(loop, sleeper_new(&never), "sleeper");
    w = task_new(loop, awaiter_new(b, 0), "outer");
    assert_true(selector_run_once(loop, 0) >= 2);
    task_cancel(b);
    assert_true(future_done(task_future(w)));
    assert_true(rec.caught);
    assert_int_equal(rec.caught_kind, CORO_CANCELLED);
    task_free(w);
    task_free(b);
    assert_int_equal(task_live_count(), 0);
    future_clear(&never);
}

/* A coroutine that frees the task it awaited, as soon as that task is done: the
 * awaited task's last step must not touch it afterwards (checked under ASan). */
static void test_awaiter_frees_awaited_task(void **state)
{
    (void)state;
    future f1, f2;
    future_init(&f1);
    future_init(&f2);
    gen_args a = {&f1, &f2, GEN_NORMAL};
    task *b = task_new(loop, gen_new(&a), "inner");
    task *w = task_new(loop, awaiter_new(b, 1), "outer");
    assert_true(selector_run_once(loop, 0) >= 2);
    future_set_result(&f1, (coro_value){"hello", 0});
    future_set_result(&f2, (coro_value){"goodbye", 0}); /* b ends; w frees it */
    assert_true(future_done(task_future(w)));
    assert_string_equal(task_future(w)->result.p, "done");
    assert_int_equal(task_live_count(), 1);
    task_free(w);
    assert_int_equal(task_live_count(), 0);

    /* The same through a cancel of a task not yet started. */
    future never;
    future_init(&never);
    b = task_new(loop, sleeper_new(&never), "sleeper");
    w = task_new(loop, awaiter_new(b, 1), "outer");
    /* w must be waiting on b before b is cancelled: run w's first step only. */
    selector_cancel(loop, w->start);
    w->start = NULL;
    task_step(w);
    assert_int_equal(task_future(b)->ncb, 1);
    task_cancel(b); /* w frees b from b's done-callback */
    assert_true(future_done(task_future(w)));
    assert_int_equal(rec.sleeper_resumes, 0);
    assert_int_equal(task_live_count(), 1);
    task_free(w);
    assert_int_equal(task_live_count(), 0);
    future_clear(&f1);
    future_clear(&f2);
    future_clear(&never);
}

/* ---- tests: cancellation ---------------------------------------------------------- */

/* What a cancel left: a sentence for the hints (the stage2 exercises' grade.conf)
 * when the task did not end cancelled at the await, or kept something of its wait.
 * RESUMES: how often the cancel resumed the coroutine, want once. */
static void expect_cancelled(task *t, const future *waited, int resumes, const char *how)
{
    future *tf = task_future(t);
    expect_that(tf->state != FUTURE_PENDING || !t->coro || coro_waiting(t->coro) != waited,
                "cancelled %s, the coroutine went back to waiting on the same future (its task "
                "still pending): the CancelledError thrown in was not raised at the await",
                how);
    expect_that(tf->state != FUTURE_PENDING,
                "cancelled %s, the task is still pending (its coroutine %s): the cancel ended "
                "nothing",
                how, t->coro ? "still alive" : "gone");
    expect_that(resumes == 1,
                "cancelled %s, the coroutine was resumed %d time(s), want once: to raise the "
                "CancelledError where it waits",
                how, resumes);
    expect_that(tf->state == FUTURE_CANCELLED,
                "cancelled %s, the task ended %s (error: %s), want cancelled: the CancelledError "
                "thrown in did not come out of the coroutine as it went in",
                how, state_name(tf->state), tf->error ? coro_error_class(tf->error) : "none");
    expect_that(tf->error && tf->error->kind == CORO_CANCELLED,
                "cancelled %s, the task's error is %s, want CancelledError", how,
                tf->error ? coro_error_class(tf->error) : "none");
    expect_that(!t->coro,
                "cancelled %s, the task ended and still holds its coroutine: "
                "nobody freed the frames",
                how);
    expect_that(waited->ncb == 0,
                "cancelled %s, the task ended and the future it waited on still has %zu "
                "done-callback(s), want 0: its wakeup would step an ended task",
                how, (size_t)waited->ncb);
}

static void test_cancel_at_await_point(void **state)
{
    (void)state;
    future never;
    future_init(&never);
    task *t = task_new(loop, sleeper_new(&never), "sleeper");
    assert_true(selector_run_once(loop, 0) >= 1);
    expect_that(rec.sleeper_resumes == 1,
                "the task's first step resumed the coroutine %d times, want once",
                rec.sleeper_resumes);
    expect_that(never.ncb == 1,
                "the coroutine waits on a future that has %zu done-callback(s), want 1: nothing "
                "will step the task when it resolves",
                (size_t)never.ncb);

    task_cancel(t); /* coro.throw(CancelledError) */
    expect_that(!rec.sleeper_woke,
                "cancelled at its await, the coroutine went on past the await as if the "
                "future had resolved: the CancelledError thrown in was not raised there");
    expect_cancelled(t, &never, rec.sleeper_resumes - 1, "at its await");
    expect_that(rec.sleeper_finally == 1,
                "cancelled at its await, the coroutine's finally ran %d time(s), want once",
                rec.sleeper_finally);
    expect_that(strcmp(coro_error_class(task_future(t)->error), "CancelledError") == 0,
                "cancelled at its await, the task's error prints as %s, want CancelledError",
                coro_error_class(task_future(t)->error));

    task_cancel(t); /* cancelling a finished task does nothing */
    expect_that(rec.sleeper_resumes == 2,
                "cancelling a task already cancelled resumed its coroutine again (%d resumes "
                "in all, want 2)",
                rec.sleeper_resumes);
    task_free(t);
    assert_int_equal(task_live_count(), 0);
    assert_false(future_done(&never));
    future_clear(&never);
}

/* The CancelledError reaches the parent's try/except at its yield from. */
static void test_cancel_seen_by_parent(void **state)
{
    (void)state;
    future never;
    future_init(&never);

    /* Re-raised: the task ends cancelled. */
    task *t = task_new(loop, parent_new(&never, 1), "parent");
    assert_true(selector_run_once(loop, 0) >= 1);
    task_cancel(t);
    expect_that(rec.caught,
                "cancelled while its child waited at an await, the parent's try/except caught "
                "no error (the task is %s)",
                state_name(task_future(t)->state));
    expect_that(rec.caught_kind == CORO_CANCELLED,
                "cancelled while its child waited, the parent caught \"%s\", not the "
                "CancelledError",
                rec.caught_msg);
    expect_that(rec.sleeper_finally == 1,
                "cancelled while its child waited, the child's finally ran %d time(s), want once",
                rec.sleeper_finally);
    expect_that(task_future(t)->state == FUTURE_CANCELLED,
                "cancelled, the parent re-raised the CancelledError and the task ended %s, want "
                "cancelled",
                state_name(task_future(t)->state));
    task_free(t);

    /* Swallowed: the coroutine goes on and returns. */
    memset(&rec, 0, sizeof rec);
    t = task_new(loop, parent_new(&never, 0), "parent");
    assert_true(selector_run_once(loop, 0) >= 1);
    task_cancel(t);
    expect_that(rec.caught && rec.caught_kind == CORO_CANCELLED,
                "cancelled while its child waited, the parent caught %s",
                rec.caught ? rec.caught_msg : "no error");
    expect_that(rec.sleeper_finally == 1,
                "cancelled while its child waited, the child's finally ran %d time(s), want once",
                rec.sleeper_finally);
    future *tf = task_future(t);
    expect_that(tf->state == FUTURE_DONE && tf->result.p && strcmp(tf->result.p, "cleaned up") == 0,
                "the parent swallowed the CancelledError and returned \"cleaned up\", and the "
                "task ended %s (result \"%s\"): a coroutine that catches a cancel may go on and "
                "return a value",
                state_name(tf->state),
                tf->state == FUTURE_DONE && tf->result.p ? (const char *)tf->result.p : "");
    expect_that(never.ncb == 0,
                "cancelled, the task ended and the future its child waited on still has %zu "
                "done-callback(s), want 0",
                (size_t)never.ncb);
    task_free(t);

    assert_int_equal(task_live_count(), 0);
    future_clear(&never);
}

static void test_cancel_before_first_step(void **state)
{
    (void)state;
    future never;
    future_init(&never);
    size_t timers = selector_timer_count(loop);
    task *t = task_new(loop, sleeper_new(&never), "sleeper");
    assert_int_equal(selector_timer_count(loop), timers + 1); /* its first step */

    task_cancel(t);
    assert_int_equal(selector_timer_count(loop), timers);
    expect_that(rec.sleeper_resumes == 0,
                "cancelled before its first step, the coroutine was resumed %d time(s), want "
                "never: its body ran",
                rec.sleeper_resumes);
    assert_int_equal(rec.sleeper_finally, 1); /* but the frame was cleaned up */
    assert_int_equal(task_future(t)->state, FUTURE_CANCELLED);
    assert_null(t->coro);

    selector_run_once(loop, 0);
    expect_that(rec.sleeper_resumes == 0,
                "cancelled before its first step, the task was stepped later anyway (its "
                "coroutine resumed %d time(s)): a step of an ended task must do nothing",
                rec.sleeper_resumes);
    task_free(t);
    assert_int_equal(task_live_count(), 0);
    future_clear(&never);
}

/* task_free of a task still waiting cancels it first. */
static void test_free_pending_task_cancels_it(void **state)
{
    (void)state;
    future never;
    future_init(&never);
    task *t = task_new(loop, parent_new(&never, 1), "parent");
    assert_true(selector_run_once(loop, 0) >= 1);
    assert_int_equal(task_live_count(), 1);
    task_free(t);
    expect_that(rec.sleeper_finally == 1 && rec.caught_kind == CORO_CANCELLED,
                "freed while it waited, the task's coroutine %s and its finally ran %d time(s): "
                "task_free cancels a pending task first, and the CancelledError must come out "
                "at the await",
                rec.caught ? "caught an error other than the cancel" : "caught no error",
                rec.sleeper_finally);
    expect_that(never.ncb == 0,
                "freed while it waited, the task left %zu done-callback(s) on the future it "
                "waited on, want 0: its wakeup would step a freed task",
                (size_t)never.ncb);
    assert_int_equal(task_live_count(), 0);

    /* A detached task frees itself when done. */
    future f1, f2;
    future_init(&f1);
    future_init(&f2);
    gen_args a = {&f1, &f2, GEN_NORMAL};
    t = task_new(loop, gen_new(&a), "detached");
    task_detach(t);
    assert_true(selector_run_once(loop, 0) >= 1);
    future_set_result(&f1, (coro_value){"a", 0});
    assert_int_equal(task_live_count(), 1);
    future_set_result(&f2, (coro_value){"b", 0});
    expect_that(task_live_count() == 0,
                "a detached task finished (its future %s) and was not freed: %zu task(s) live, "
                "want 0",
                state_name(task_future(t)->state), task_live_count());
    future_clear(&f1);
    future_clear(&f2);
    future_clear(&never);
}

/* A Task cancelled while its coroutine runs (here by the coroutine itself): the
 * cancel comes from the loop, where the coroutine waits, not by resuming frames that
 * are still on the C stack (which recursed until the stack overflowed). */
static void test_cancel_while_running(void **state)
{
    (void)state;
    future never;
    future_init(&never);
    self_cancel_frame *f = (self_cancel_frame *)coro_new(&self_cancel_def);
    f->never = &never;
    task *t = task_new(loop, &f->co, "self");
    task_start_now(t);
    expect_that(rec.sleeper_resumes == 1,
                "the task's first step resumed the coroutine %d times, want once",
                rec.sleeper_resumes);
    expect_that(!future_done(task_future(t)),
                "a coroutine that cancels its own task and then awaits: the task ended %s "
                "within its first step, want pending until the loop delivers the cancel",
                state_name(task_future(t)->state));
    expect_that(never.ncb == 1,
                "the coroutine waits on a future that has %zu done-callback(s), want 1: nothing "
                "will step the task when it resolves",
                (size_t)never.ncb);
    run_task(t);
    expect_that(!rec.sleeper_woke,
                "cancelled at its await, the coroutine went on past the await as if the "
                "future had resolved: the CancelledError thrown in was not raised there");
    expect_cancelled(t, &never, rec.sleeper_resumes - 1, "by itself, then at its await");
    expect_that(rec.sleeper_finally == 1,
                "cancelled at its await, the coroutine's finally ran %d time(s), want once",
                rec.sleeper_finally);
    task_free(t);
    assert_int_equal(task_live_count(), 0);

    /* Freed before the loop delivers that cancel: the scheduled cancel goes too (a
     * timer left behind would step a freed task; ASan and valgrind would say so). */
    memset(&rec, 0, sizeof rec);
    size_t timers = selector_timer_count(loop);
    f = (self_cancel_frame *)coro_new(&self_cancel_def);
    f->never = &never;
    t = task_new(loop, &f->co, "self");
    task_start_now(t);
    assert_int_equal(selector_timer_count(loop), timers + 1); /* the cancel, soon */
    task_free(t);
    assert_int_equal(selector_timer_count(loop), timers);
    assert_int_equal(rec.sleeper_finally, 1);
    assert_int_equal(never.ncb, 0);
    selector_run_once(loop, 0);
    assert_int_equal(rec.sleeper_resumes, 2); /* task_free's own cancel, no other */
    future_clear(&never);
}

/* A coroutine may swallow its CancelledError and wait again: the Task subscribes to
 * the new wait, and task_free takes that subscription back before freeing the frames. */
static void test_free_task_that_swallows_its_cancel(void **state)
{
    (void)state;
    future never;
    future_init(&never);
    stubborn_frame *f = (stubborn_frame *)coro_new(&stubborn_def);
    f->never = &never;
    task *t = task_new(loop, &f->co, "stubborn");
    assert_true(selector_run_once(loop, 0) >= 1);
    expect_that(never.ncb == 1,
                "the coroutine waits on a future that has %zu done-callback(s), want 1: nothing "
                "will step the task when it resolves",
                (size_t)never.ncb);
    task_cancel(t);
    expect_that(rec.caught == 1 && rec.caught_kind == CORO_CANCELLED,
                "cancelled at its await, the coroutine's try/except caught %d error(s) (the "
                "last: \"%s\"), want the one CancelledError",
                rec.caught, rec.caught_msg);
    expect_that(!future_done(task_future(t)),
                "the coroutine caught its CancelledError and awaited again, and the task ended "
                "%s: a caught cancel does not end the task",
                state_name(task_future(t)->state));
    expect_that(never.ncb == 1,
                "the coroutine caught its CancelledError and awaits again: the future has %zu "
                "done-callback(s), want 1 (subscribed again, once)",
                (size_t)never.ncb);
    task_free(t); /* cancels once more, then frees */
    assert_int_equal(rec.caught, 2);
    assert_int_equal(rec.sleeper_finally, 1);
    expect_that(never.ncb == 0,
                "freed while it waited, the task left %zu done-callback(s) on the future it "
                "waited on, want 0: its wakeup would step a freed task",
                (size_t)never.ncb);
    assert_int_equal(task_live_count(), 0);
    future_set_result(&never, (coro_value){NULL, 0});
    future_clear(&never);
}

/* ---- tests: run_until_complete, task_dump ---------------------------------------- */

static void test_run_until_complete_and_dump(void **state)
{
    (void)state;
    future f1, f2;
    future_init(&f1);
    future_init(&f2);
    gen_args a = {&f1, &f2, GEN_NORMAL};
    task *t = task_new(loop, caller_new(&a, 0), "dumpme");
    resolver r1 = {&f1, "hello", t, 0, 0, 0}, r2 = {&f2, "goodbye", t, 0, 0, 0};
    resolve_in(20, &r1);
    resolve_in(40, &r2);
    assert_int_equal(task_live_count(), 1);

    char *got = read_memstream(fill_dump, t);
    assert_string_equal(got,
                        "Task 'dumpme' (pending)\n"
                        "  File \"" THIS_FILE "\", line 0, in caller_fn  <- not started\n");
    free(got);

    assert_true(selector_run_once(loop, 0) >= 1);
    char want[512];
    snprintf(want, sizeof want,
             "Task 'dumpme' (pending)\n"
             "  File \"" THIS_FILE "\", line %d, in caller_fn\n"
             "  File \"" THIS_FILE "\", line %d, in gen_fn  <- waiting on a future\n",
             caller_await_line, gen_await1_line);
    got = read_memstream(fill_dump, t);
    assert_string_equal(got, want);
    free(got);

    run_task(t);
    assert_true(r2.fired);
    got = read_memstream(fill_dump, t);
    assert_string_equal(got, "Task 'dumpme' (done)\n");
    free(got);

    /* Again on a task already done: returns at once, the loop does not run on. */
    resolver late = {&f1, "late", NULL, 0, 0, 0};
    resolve_in(1000, &late);
    assert_int_equal(run_until_complete(loop, t), 0);
    assert_false(late.fired);
    assert_false(guarded_loop_hit());

    task_free(t);
    assert_int_equal(task_live_count(), 0);
    future_clear(&f1);
    future_clear(&f2);
}

static void stop_loop_cb(selector *s, void *arg)
{
    (void)arg;
    selector_stop(s);
}

/* The loop stopping for another reason first: 1, the task still pending. */
static void test_run_until_complete_stopped_early(void **state)
{
    (void)state;
    future never;
    future_init(&never);
    task *t = task_new(loop, sleeper_new(&never), "sleeper");
    assert_non_null(selector_call_later(loop, 10, stop_loop_cb, NULL));
    assert_int_equal(run_until_complete(loop, t), 1);
    assert_false(guarded_loop_hit());
    assert_false(future_done(task_future(t)));
    assert_int_equal(task_future(t)->ncb, 0); /* its stop callback was removed */
    task_free(t);
    assert_int_equal(rec.sleeper_finally, 1);
    assert_int_equal(task_live_count(), 0);
    future_clear(&never);
}

/* The loop failing under the task (its epoll descriptor replaced by /dev/null, so
 * epoll_wait fails): -1, with the backend's message, not a stop. */
static int newest_epoll_fd(void)
{
    int found = -1; /* the highest: the test's own loop has one too */
    for (int fd = 0; fd < 1024; fd++) {
        char path[64], target[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(path, target, sizeof target - 1);
        if (n > 0) {
            target[n] = 0;
            if (strcmp(target, "anon_inode:[eventpoll]") == 0)
                found = fd;
        }
    }
    return found;
}

static void test_run_until_complete_loop_fails(void **state)
{
    (void)state;
    char err[128];
    selector *s = selector_new("epoll", err, sizeof err);
    assert_non_null(s);
    int epfd = newest_epoll_fd();
    assert_true(epfd >= 0);
    int devnull = open("/dev/null", O_RDONLY);
    assert_true(devnull >= 0);
    assert_int_equal(dup2(devnull, epfd), epfd);
    close(devnull);

    future never;
    future_init(&never);
    task *t = task_new(s, sleeper_new(&never), "sleeper");
    sel_timer *later = selector_call_later(s, 60000, stop_loop_cb, NULL); /* so it waits */
    assert_int_equal(run_until_complete(s, t), -1);
    selector_cancel(s, later);
    assert_false(future_done(task_future(t)));
    assert_int_equal(task_future(t)->ncb, 0);
    assert_non_null(strstr(selector_error(s), "epoll"));
    task_free(t);
    selector_free(s);
    future_clear(&never);
}

/* ---- tests: send and throw without a Task --------------------------------------- */

/* coro_send is the chapter's gen.send: it returns the future the generator yields,
 * the same one twice over a yield from, and NULL once it has returned. The coroutine
 * subscribes to nothing itself: that is the Task's job. */
static void test_send_yields_futures(void **state)
{
    (void)state;
    future f1, f2;
    future_init(&f1);
    future_init(&f2);
    gen_args a = {&f1, &f2, GEN_NORMAL};
    coro *caller = caller_new(&a, 0);

    assert_ptr_equal(coro_send(caller), &f1);
    assert_ptr_equal(coro_waiting(caller), &f1);
    assert_int_equal(f1.ncb, 0); /* nobody subscribed */
    future_set_result(&f1, (coro_value){"hello", 0});
    assert_int_equal(rec.gen_resumes, 1); /* ...so nothing ran */
    assert_ptr_equal(coro_send(caller), &f2);
    assert_string_equal(rec.got1, "hello");
    future_set_result(&f2, (coro_value){"goodbye", 0});
    assert_null(coro_send(caller)); /* StopIteration */
    assert_null(coro_waiting(caller));
    assert_string_equal(caller->value.p, "done");
    assert_null(caller->err);
    coro_free(caller);
    assert_int_equal(rec.gen_finally, 1);
    assert_int_equal(rec.caller_finally, 1);
    future_clear(&f1);
    future_clear(&f2);
}

/* coro_throw is gen.throw: the error is raised at the await where the chain waits,
 * with that frame in the traceback, and a parent may catch it. */
static void test_throw_raises_at_await(void **state)
{
    (void)state;
    future never;
    future_init(&never);
    coro *p = parent_new(&never, 0);
    assert_ptr_equal(coro_send(p), &never);
    coro_throw(p, coro_error_new(CORO_ERROR, 0, "thrown in"));
    assert_int_equal(rec.sleeper_resumes, 1); /* nothing runs until the send */
    assert_null(coro_send(p));
    assert_int_equal(rec.sleeper_resumes, 2);
    assert_false(rec.sleeper_woke);
    assert_true(rec.caught);
    assert_string_equal(rec.caught_msg, "thrown in");
    assert_string_equal(p->value.p, "cleaned up");
    coro_free(p);

    /* Uncaught: it ends the coroutine, traceback through both frames. */
    gen_args a = {&never, NULL, GEN_NORMAL};
    coro *c = caller_new(&a, 0);
    assert_ptr_equal(coro_send(c), &never);
    coro_throw(c, coro_error_new(CORO_OSERROR, 104, "reset"));
    assert_null(coro_send(c));
    assert_non_null(c->err);
    char want[512];
    snprintf(want, sizeof want,
             "Traceback (most recent call last):\n"
             "  File \"" THIS_FILE "\", line %d, in caller_fn\n"
             "  File \"" THIS_FILE "\", line %d, in gen_fn\n"
             "OSError: [Errno 104] reset\n",
             caller_await_line, gen_await1_line);
    char *got = read_memstream(fill_traceback, c->err);
    assert_string_equal(got, want);
    free(got);
    coro_free(c);
    assert_int_equal(never.ncb, 0);
    future_clear(&never);
}

/* ---- tests: Future ----------------------------------------------------------------- */

typedef struct {
    int items[16];
    int n;
} trace;

typedef struct {
    trace *tr;
    int id;
} cb_arg;

static void trace_cb(future *f, void *arg)
{
    (void)f;
    cb_arg *c = arg;
    assert_true(c->tr->n < 16);
    c->tr->items[c->tr->n++] = c->id;
}

static void test_future_callbacks(void **state)
{
    (void)state;
    future f;
    future_init(&f);
    trace tr = {{0}, 0};
    cb_arg args[6];
    for (int i = 0; i < 6; i++) {
        args[i] = (cb_arg){&tr, i + 1};
        future_add_done_callback(&f, trace_cb, &args[i]);
    }
    assert_int_equal(f.ncb, 6);
    future_remove_done_callback(&f, trace_cb, &args[1]); /* an inline one */
    future_remove_done_callback(&f, trace_cb, &args[4]); /* one in the overflow */
    future_remove_done_callback(&f, trace_cb, &args[1]); /* not there: no-op */
    assert_int_equal(f.ncb, 4);
    assert_int_equal(tr.n, 0);

    future_set_result(&f, (coro_value){"first", 1});
    assert_int_equal(f.state, FUTURE_DONE);
    assert_int_equal(tr.n, 4);
    int want[] = {1, 3, 4, 6};
    for (int i = 0; i < 4; i++)
        assert_int_equal(tr.items[i], want[i]);

    /* Resolved once: later results and errors are ignored, callbacks not rerun. */
    future_set_result(&f, (coro_value){"second", 2});
    future_set_error(&f, coro_error_new(CORO_ERROR, 0, "ignored"));
    future_cancel(&f);
    assert_int_equal(f.state, FUTURE_DONE);
    assert_string_equal(f.result.p, "first");
    assert_int_equal(f.result.n, 1);
    assert_null(f.error);
    assert_int_equal(tr.n, 4);

    /* Added after it is done: called at once. */
    cb_arg late = {&tr, 9};
    future_add_done_callback(&f, trace_cb, &late);
    assert_int_equal(tr.n, 5);
    assert_int_equal(tr.items[4], 9);
    future_clear(&f);
    assert_int_equal(f.state, FUTURE_PENDING);
}

static void test_future_error_and_cancel(void **state)
{
    (void)state;
    future f;
    future_init(&f);
    trace tr = {{0}, 0};
    cb_arg a = {&tr, 1};
    future_add_done_callback(&f, trace_cb, &a);
    future_set_error(&f, coro_error_new(CORO_TIMEOUT, 110, "timeout"));
    assert_int_equal(f.state, FUTURE_FAILED);
    assert_int_equal(f.error->kind, CORO_TIMEOUT);
    assert_int_equal(tr.n, 1);
    future_set_result(&f, (coro_value){"no", 0});
    assert_int_equal(f.state, FUTURE_FAILED);
    future_clear(&f);

    future_add_done_callback(&f, trace_cb, &a);
    future_cancel(&f);
    assert_int_equal(f.state, FUTURE_CANCELLED);
    assert_int_equal(f.error->kind, CORO_CANCELLED);
    assert_int_equal(tr.n, 2);
    future_clear(&f);
}

/* The first callback may free the memory the future lives in; the rest still run. */
typedef struct {
    future f;
    int dummy;
} holder;

static void free_holder_cb(future *f, void *arg)
{
    (void)arg;
    free((holder *)f);
}

static void test_future_freed_by_its_callback(void **state)
{
    (void)state;
    holder *h = malloc(sizeof *h);
    assert_non_null(h);
    future_init(&h->f);
    trace tr = {{0}, 0};
    cb_arg args[4];
    future_add_done_callback(&h->f, free_holder_cb, NULL);
    for (int i = 0; i < 4; i++) {
        args[i] = (cb_arg){&tr, i + 1};
        future_add_done_callback(&h->f, trace_cb, &args[i]);
    }
    future_set_result(&h->f, (coro_value){NULL, 0});
    assert_int_equal(tr.n, 4);
    assert_int_equal(tr.items[3], 4);
}

static void test_error_lines(void **state)
{
    (void)state;
    char buf[128];
    coro_error *e = coro_error_new(CORO_OSERROR, 111, "connect: %s", "Connection refused");
    assert_string_equal(coro_error_class(e), "OSError");
    assert_string_equal(coro_error_line(e, buf, sizeof buf),
                        "OSError: [Errno 111] connect: Connection refused");
    char *got = read_memstream(fill_traceback, e);
    assert_string_equal(got,
                        "Traceback (most recent call last):\n"
                        "OSError: [Errno 111] connect: Connection refused\n");
    free(got);
    coro_error_free(e);
    e = coro_error_new(CORO_TIMEOUT, 0, "timeout");
    assert_string_equal(coro_error_line(e, buf, sizeof buf), "TimeoutError: timeout");
    coro_error_free(e);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_file_is_relative),
        T(test_gen_fn_step_by_step),
        T(test_gen_fn_driven_by_task),
        T(test_task_start_now),
        T(test_caller_delegates_with_await),
        T(test_error_propagates_with_traceback),
        T(test_error_caught_by_caller),
        T(test_resolved_future_does_not_suspend),
        T(test_failed_future_raises_at_await),
        T(test_task_as_future),
        T(test_task_as_future_error),
        T(test_awaiter_frees_awaited_task),
        T(test_cancel_at_await_point),
        T(test_cancel_seen_by_parent),
        T(test_cancel_before_first_step),
        T(test_free_pending_task_cancels_it),
        T(test_cancel_while_running),
        T(test_free_task_that_swallows_its_cancel),
        T(test_run_until_complete_and_dump),
        T(test_run_until_complete_stopped_early),
        T(test_run_until_complete_loop_fails),
        T(test_send_yields_futures),
        T(test_throw_raises_at_await),
        T(test_future_callbacks),
        T(test_future_error_and_cancel),
        T(test_future_freed_by_its_callback),
        T(test_error_lines),
    };
    /* env CRAWL_TEST_FILTER: only the cases it matches (a cmocka glob), as the
     * exercise grader runs a case alone again (scripts/exercise.sh, `repeat`). */
    const char *only = getenv("CRAWL_TEST_FILTER");
    if (only && *only)
        cmocka_set_test_filter(only);
    return cmocka_run_group_tests_name("coro", tests, NULL, NULL);
}
