/* writer.c — the background writer of the file-writing pipeline stages (writer.h). */
#include "writer.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"

void writer_init(writer *w, const writer_ops *ops, void *self, app *a)
{
    memset(w, 0, sizeof *w);
    w->ops = ops;
    w->self = self;
    w->a = a;
    future_init(&w->wake);
    list_init(&w->room_waiters);
}

void writer_clear(writer *w)
{
    task_free(w->task);
    w->task = NULL;
    future_clear(&w->wake);
    free(w->error);
    w->error = NULL;
}

static void resolve(future *f)
{
    if (!future_done(f))
        future_set_result(f, (coro_value){NULL, 0});
}

void writer_wake(writer *w)
{
    resolve(&w->wake);
}

const char *writer_error(const writer *w)
{
    return w->error;
}

static void set_error(writer *w, const coro_error *err)
{
    if (!w->error && err->kind != CORO_CANCELLED)
        w->error = xstrdup(err->msg);
}

/* ---- a stage's operations, or its rows' ---- */

static writer_batch *rows_take(writer_rows *r, bool closing);
static void batch_free(writer_batch *b);

static void *take(writer *w)
{
    if (w->ops->take)
        return w->ops->take(w->self, w->closing);
    writer_batch *b = rows_take(w->rows, w->closing);
    if (!b)
        return NULL;
    writer_rows_job *j = xmalloc(sizeof *j);
    j->self = w->self;
    j->b = b;
    return j;
}

static void rows_job_free(void *arg)
{
    writer_rows_job *j = arg;
    batch_free(j->b);
    free(j);
}

/* Two batches wait for the disk already. */
static bool full(const writer *w)
{
    return w->ops->full ? w->ops->full(w->self) : w->rows->nfull >= 2;
}

/* ---- room: process_item waits while too much waits for the disk ---- */

typedef struct {
    coro co;
    writer *w;
    future wake;    /* its own: resolved once, by wake_room */
    list_node link; /* in w->room_waiters while it waits */
} room_frame;

/* A job was written: every frame waiting for room is woken, each on its own future, and
 * looks again (one that finds the writer still full waits anew, on a future made anew).
 * (One future shared by all, made anew by the first woken while the others' wakeups
 * were still to run, woke them on a pending future: they raised "future cancelled",
 * and a worker ended with its URL never done.) The waiters are taken out first: a
 * frame woken may wait again, on the list, before the others are woken. */
static void wake_room(writer *w)
{
    list_node woken;
    list_init(&woken);
    while (!list_empty(&w->room_waiters)) {
        list_node *n = w->room_waiters.next;
        list_remove(n);
        list_push_back(&woken, n);
    }
    while (!list_empty(&woken)) {
        room_frame *f = list_entry(woken.next, room_frame, link);
        list_remove(&f->link);
        resolve(&f->wake);
    }
}

/* ---- the writer (a Task on the loop) ---- */

typedef struct {
    coro co;
    writer *w;
    void *job;   /* in the pool, while fut runs */
    future *fut; /* the pool job awaited, and its cleanup */
    void (*cleanup)(void *arg);
} writer_frame;

static int writer_body(coro *co)
{
    writer_frame *f = (writer_frame *)co;
    writer *w = f->w;
    CORO_BEGIN(co);
    for (;;) {
        while (!(f->job = take(w)) && !w->closing) {
            future_clear(&w->wake);
            future_init(&w->wake);
            AWAIT_FUTURE(co, &w->wake);
        }
        if (!f->job)
            break; /* closing, and nothing is left */
        f->fut = defer_to_thread(w->a->pool, w->ops->write, f->job);
        f->cleanup = w->ops->job_free ? w->ops->job_free : rows_job_free;
        AWAIT_FUTURE_CATCH(co, f->fut);
        if (!co->err && w->ops->written)
            w->ops->written(w->self, f->job);
        defer_release(f->fut, f->cleanup);
        f->fut = NULL;
        f->job = NULL;
        wake_room(w);
        if (co->err) {
            set_error(w, co->err);
            CORO_RAISE_ERR(co); /* nothing more is written */
        }
    }
    f->fut = defer_to_thread(w->a->pool, w->ops->close, w->self);
    f->cleanup = NULL;
    AWAIT_FUTURE_CATCH(co, f->fut);
    defer_release(f->fut, NULL);
    f->fut = NULL;
    if (co->err) {
        set_error(w, co->err);
        CORO_RAISE_ERR(co);
    }
    CORO_END(co);
}

/* Cancelled while a job runs: the job finishes on its own and frees itself. */
static void writer_finally(coro *co)
{
    writer_frame *f = (writer_frame *)co;
    defer_release(f->fut, f->cleanup);
}

static const coro_def writer_def = {"writer", __FILE__, writer_body, writer_finally,
                                    sizeof(writer_frame)};

/* ---- open: the files in the pool, then the writer ---- */

typedef struct {
    coro co;
    writer *w;
    future *fut;
} open_frame;

static int open_body(coro *co)
{
    open_frame *f = (open_frame *)co;
    CORO_BEGIN(co);
    f->fut = defer_to_thread(f->w->a->pool, f->w->ops->open, f->w->self);
    AWAIT_FUTURE(co, f->fut);
    {
        writer *w = f->w;
        if (w->ops->opened)
            w->ops->opened(w->self);
        writer_frame *wf = (writer_frame *)coro_new(&writer_def);
        wf->w = w;
        w->task = task_new(w->a->loop, &wf->co, w->ops->name);
        w->task->report_errors = 0; /* said once, by room or close */
        writer_wake(w);             /* what came before open (state's roots) */
    }
    CORO_END(co);
}

static void open_finally(coro *co)
{
    defer_release(((open_frame *)co)->fut, NULL);
}

static const coro_def open_def = {"writer_open", __FILE__, open_body, open_finally,
                                  sizeof(open_frame)};

coro *writer_open(writer *w, engine *e)
{
    w->a = engine_app(e);
    open_frame *f = (open_frame *)coro_new(&open_def);
    f->w = w;
    return &f->co;
}

static int room_body(coro *co)
{
    room_frame *f = (room_frame *)co;
    writer *w = f->w;
    CORO_BEGIN(co);
    while (full(w) && !w->error && w->task && !future_done(task_future(w->task))) {
        future_clear(&f->wake);
        list_push_back(&w->room_waiters, &f->link);
        AWAIT_FUTURE(co, &f->wake);
    }
    if (w->error)
        CORO_RAISE(co, CORO_ERROR, 0, "%s", w->error);
    CORO_END(co);
}

/* Cancelled (or freed) while it waits: off the list. */
static void room_finally(coro *co)
{
    room_frame *f = (room_frame *)co;
    if (list_linked(&f->link))
        list_remove(&f->link);
    future_clear(&f->wake);
}

static const coro_def room_def = {"writer_room", __FILE__, room_body, room_finally,
                                  sizeof(room_frame)};

coro *writer_room(writer *w)
{
    if (!full(w) && !w->error)
        return NULL; /* at once: the usual case */
    room_frame *f = (room_frame *)coro_new(&room_def);
    f->w = w;
    future_init(&f->wake);
    list_node_init(&f->link);
    return &f->co;
}

/* ---- close: the writer writes what is left, closes the files and ends ---- */

typedef struct {
    coro co;
    writer *w;
} close_frame;

static int close_body(coro *co)
{
    close_frame *f = (close_frame *)co;
    writer *w = f->w;
    CORO_BEGIN(co);
    if (!w->task)
        CORO_RETURN(co, NULL, 0); /* never opened */
    w->closing = true;
    writer_wake(w);
    AWAIT_FUTURE_CATCH(co, task_future(w->task));
    task_free(w->task); /* done: its last done-callback was this resumption */
    w->task = NULL;
    if (co->err && w->error) {
        coro_error_free(co->err);
        co->err = NULL;
        CORO_RAISE(co, CORO_ERROR, 0, "%s", w->error);
    }
    if (co->err)
        CORO_RAISE_ERR(co);
    CORO_END(co);
}

static const coro_def close_def = {"writer_close", __FILE__, close_body, NULL, sizeof(close_frame)};

coro *writer_close(writer *w)
{
    close_frame *f = (close_frame *)coro_new(&close_def);
    f->w = w;
    return &f->co;
}

/* ---- rows in batches ---- */

void writer_rows_init(writer_rows *r, writer *w, size_t size, size_t batch_rows, uint64_t batch_ms,
                      void (*row_free)(void *row))
{
    memset(r, 0, sizeof *r);
    r->w = w;
    w->rows = r;
    r->size = size;
    r->batch_rows = batch_rows;
    r->batch_ms = batch_ms;
    r->row_free = row_free;
}

static void batch_free(writer_batch *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->n; i++)
        b->row_free(writer_batch_row(b, i));
    free(b->rows);
    free(b);
}

void writer_rows_clear(writer_rows *r)
{
    if (r->timer && r->w->a)
        selector_cancel(r->w->a->loop, r->timer);
    r->timer = NULL;
    batch_free(r->filling);
    r->filling = NULL;
    while (r->full) {
        writer_batch *b = r->full;
        r->full = b->next;
        batch_free(b);
    }
    r->full_tail = NULL;
    r->nfull = 0;
}

void *writer_row(writer_rows *r)
{
    if (!r->filling) {
        r->filling = xcalloc(1, sizeof *r->filling);
        r->filling->size = r->size;
        r->filling->row_free = r->row_free;
    }
    writer_batch *b = r->filling;
    if (b->n == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 32;
        b->rows = xreallocarray(b->rows, b->cap, r->size);
    }
    void *row = writer_batch_row(b, b->n++);
    memset(row, 0, r->size);
    return row;
}

/* The filling batch joins the writer's line. */
static void seal(writer_rows *r)
{
    writer_batch *b = r->filling;
    r->filling = NULL;
    if (!b)
        return;
    if (r->full_tail)
        r->full_tail->next = b;
    else
        r->full = b;
    r->full_tail = b;
    r->nfull++;
    writer_wake(r->w);
}

static void on_timer(selector *loop, void *arg)
{
    (void)loop;
    writer_rows *r = arg;
    r->timer = NULL;
    seal(r);
}

void writer_row_added(writer_rows *r)
{
    if (r->filling->n >= r->batch_rows) {
        if (r->timer)
            selector_cancel(r->w->a->loop, r->timer);
        r->timer = NULL;
        seal(r);
    } else if (!r->timer) {
        r->timer = selector_call_later(r->w->a->loop, r->batch_ms, on_timer, r);
    }
}

static writer_batch *rows_take(writer_rows *r, bool closing)
{
    if (closing) {
        if (r->timer)
            selector_cancel(r->w->a->loop, r->timer);
        r->timer = NULL;
        seal(r); /* what is left */
    }
    writer_batch *b = r->full;
    if (!b)
        return NULL;
    r->full = b->next;
    if (!r->full)
        r->full_tail = NULL;
    r->nfull--;
    b->next = NULL;
    return b;
}
