/* coro.c — frames, awaiting, raising: the machinery behind the macros in coro.h. */
#include "coro.h"

#include <stdarg.h>
#include <stdlib.h>

#include "alloc.h"
#include "future.h"

coro *coro_new(const coro_def *def)
{
    coro *co = xcalloc(1, def->frame_size);
    co->def = def;
    return co;
}

void coro_free(coro *co)
{
    if (!co)
        return;
    /* Unwind innermost first, as a stack would. */
    if (co->child) {
        coro_free(co->child);
        co->child = NULL;
    }
    if (co->def->finally)
        co->def->finally(co);
    coro_error_free(co->err);
    free(co);
}

/* ---- send and throw: what the Task does to the outermost frame ---- */

future *coro_send(coro *co)
{
    if (co->def->body(co) == CORO_FINISHED)
        return NULL;
    return coro_waiting(co);
}

/* The frame that waits is the innermost one: every frame above it is suspended at
 * an AWAIT of its child. */
static coro *innermost(const coro *co)
{
    while (co->child)
        co = co->child;
    return (coro *)co;
}

future *coro_waiting(const coro *co)
{
    return innermost(co)->waiting;
}

void coro_throw(coro *co, coro_error *e)
{
    coro *c = innermost(co);
    coro_error_free(c->err);
    c->err = e; /* coro_await_future_ raises it when the frame resumes */
}

/* ---- errors ---- */

coro_error *coro_error_new(coro_error_kind kind, int errnum, const char *fmt, ...)
{
    coro_error *e = xcalloc(1, sizeof *e);
    e->kind = kind;
    e->errnum = errnum;
    va_list ap;
    va_start(ap, fmt);
    e->msg = xvasprintf(fmt, ap);
    va_end(ap);
    return e;
}

void coro_error_free(coro_error *e)
{
    if (!e)
        return;
    free(e->msg);
    free(e->tb);
    free(e);
}

const char *coro_error_class(const coro_error *e)
{
    switch (e->kind) {
    case CORO_OSERROR: return "OSError";
    case CORO_TIMEOUT: return "TimeoutError";
    case CORO_CANCELLED: return "CancelledError";
    default: return "Exception";
    }
}

const char *coro_error_line(const coro_error *e, char *buf, size_t len)
{
    if (e->kind == CORO_OSERROR && e->errnum)
        snprintf(buf, len, "%s: [Errno %d] %s", coro_error_class(e), e->errnum, e->msg);
    else
        snprintf(buf, len, "%s: %s", coro_error_class(e), e->msg);
    return buf;
}

void coro_error_print(const coro_error *e, FILE *out)
{
    char line[1024];
    fputs("Traceback (most recent call last):\n", out);
    for (size_t i = 0; i < e->ntb; i++)
        fprintf(out, "  File \"%s\", line %d, in %s\n", e->tb[i].file, e->tb[i].line,
                e->tb[i].func);
    fprintf(out, "%s\n", coro_error_line(e, line, sizeof line));
}

/* Snapshot the chain from the outermost frame down to co, so the traceback outlives
 * the frames. A re-raised error keeps the traceback it already has. */
static void take_traceback(coro_error *e, coro *co)
{
    if (e->tb)
        return;
    size_t n = 0;
    for (coro *c = co; c; c = c->parent)
        n++;
    e->tb = xcalloc(n, sizeof *e->tb);
    e->ntb = n;
    size_t i = n;
    for (coro *c = co; c; c = c->parent) {
        i--;
        e->tb[i] = (coro_tb_entry){c->def->file, c->line, c->def->name};
    }
}

int coro_raise_(coro *co, coro_error *e)
{
    take_traceback(e, co);
    coro_error_free(co->err);
    co->err = e;
    return CORO_FINISHED;
}

/* ---- awaiting ---- */

int coro_await_child_(coro *co)
{
    coro *child = co->child;
    child->parent = co;
    child->task = co->task;
    if (child->def->body(child) == CORO_SUSPENDED)
        return CORO_SUSPENDED;
    /* The child returned (StopIteration) or raised: take its value or error. */
    co->value = child->value;
    coro_error_free(co->err);
    co->err = child->err;
    child->err = NULL;
    co->child = NULL;
    coro_free(child);
    return CORO_FINISHED;
}

/* EXERCISE stage2-await: BEGIN (docs/exercises.md) */
int coro_await_future_(coro *co, future *f)
{
    if (!co->waiting) {
        /* First arrival: a resolved future goes straight on; else wait for it. The
         * future goes up the chain to the Task (coro_send), which subscribes. */
        if (!future_done(f)) {
            co->waiting = f;
            return CORO_SUSPENDED;
        }
    } else {
        /* Resumed: the future resolved, or an error was thrown in (coro_throw). */
        co->waiting = NULL;
    }
    if (co->err) {
        coro_error *thrown = co->err;
        co->err = NULL;
        return coro_raise_(co, thrown);
    }
    switch (f->state) {
    case FUTURE_DONE: co->value = f->result; return CORO_FINISHED;
    case FUTURE_FAILED: {
        const coro_error *src = f->error;
        return coro_raise_(co, coro_error_new(src->kind, src->errnum, "%s", src->msg));
    }
    default: return coro_raise_(co, coro_error_new(CORO_CANCELLED, 0, "future cancelled"));
    }
}
/* EXERCISE stage2-await: END */
