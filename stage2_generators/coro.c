/* coro.c — frames, awaiting, raising: the machinery behind the macros in coro.h. */
#include "coro.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "future.h"
#include "task.h"

coro *coro_new(const coro_def *def)
{
    coro *co = calloc(1, def->frame_size);
    if (co)
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
    if (co->waiting && co->task)
        future_remove_done_callback(co->waiting, task_wakeup_, co->task);
    co->waiting = NULL;
    if (co->def->finally)
        co->def->finally(co);
    coro_error_free(co->err);
    free(co);
}

int coro_resume(coro *co)
{
    return co->def->body(co);
}

/* ---- errors ---- */

coro_error *coro_error_new(coro_error_kind kind, int errnum, const char *fmt, ...)
{
    coro_error *e = calloc(1, sizeof *e);
    if (!e)
        abort();
    e->kind = kind;
    e->errnum = errnum;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&e->msg, fmt, ap) < 0)
        e->msg = NULL;
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
        snprintf(buf, len, "%s: [Errno %d] %s", coro_error_class(e), e->errnum,
                 e->msg ? e->msg : "");
    else
        snprintf(buf, len, "%s: %s", coro_error_class(e), e->msg ? e->msg : "");
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
    e->tb = calloc(n, sizeof *e->tb);
    if (!e->tb)
        return;
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

int coro_await_child_(coro *co, coro *child, int line)
{
    (void)line;
    if (!child)
        return coro_raise_(co, coro_error_new(CORO_ERROR, 0, "out of memory"));
    child->parent = co;
    child->task = co->task;
    if (coro_resume(child) == CORO_SUSPENDED)
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
int coro_await_future_(coro *co, future *f, int line)
{
    (void)line;
    task *t = co->task;
    if (!co->waiting) {
        /* First arrival: a resolved future goes straight on; else wait for it. */
        if (!future_done(f) && !(t && t->cancelling)) {
            co->waiting = f;
            future_add_done_callback(f, task_wakeup_, t);
            return CORO_SUSPENDED;
        }
    } else {
        /* Resumed. If the future is still pending, a cancel woke us. */
        if (!future_done(f))
            future_remove_done_callback(f, task_wakeup_, t);
        co->waiting = NULL;
    }
    if (t && t->cancelling) {
        t->cancelling = 0;
        return coro_raise_(co, coro_error_new(CORO_CANCELLED, 0, "task cancelled"));
    }
    switch (f->state) {
    case FUTURE_DONE:
        co->value = f->result;
        return CORO_FINISHED;
    case FUTURE_FAILED: {
        const coro_error *src = f->error;
        return coro_raise_(co, coro_error_new(src->kind, src->errnum, "%s",
                                              src->msg ? src->msg : ""));
    }
    default:
        return coro_raise_(co, coro_error_new(CORO_CANCELLED, 0, "future cancelled"));
    }
}
/* EXERCISE stage2-await: END */

int coro_check_(coro *co, int catching)
{
    return co->err && !catching;
}
