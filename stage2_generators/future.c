/* future.c — the chapter's Future: pending, then resolved once; done-callbacks. */
#include "future.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"

void future_init(future *f)
{
    memset(f, 0, sizeof *f);
    f->state = FUTURE_PENDING;
}

void future_clear(future *f)
{
    coro_error_free(f->error);
    free(f->more);
    future_init(f);
}

static future_callback *slot(future *f, size_t i)
{
    return i < 2 ? &f->cb[i] : &f->more[i - 2];
}

void future_add_done_callback(future *f, future_cb fn, void *arg)
{
    if (future_done(f)) {
        fn(f, arg);
        return;
    }
    if (f->ncb >= 2 && f->ncb - 2 == f->cap_more) {
        size_t cap = f->cap_more ? 2 * f->cap_more : 4;
        f->more = xreallocarray(f->more, cap, sizeof *f->more);
        f->cap_more = cap;
    }
    *slot(f, f->ncb++) = (future_callback){fn, arg};
}

void future_remove_done_callback(future *f, future_cb fn, void *arg)
{
    for (size_t i = 0; i < f->ncb; i++) {
        future_callback *c = slot(f, i);
        if (c->fn == fn && c->arg == arg) {
            for (size_t j = i + 1; j < f->ncb; j++)
                *slot(f, j - 1) = *slot(f, j);
            f->ncb--;
            return;
        }
    }
}

/* Call the callbacks. The first of them may free the memory the future lives in (a
 * task resumed by it can finish and free the frame holding the future), so take the
 * list out first and never touch f afterwards. */
static void run_callbacks(future *f)
{
    size_t n = f->ncb;
    future_callback inline_cb[2] = {f->cb[0], f->cb[1]};
    future_callback *more = f->more;
    f->ncb = 0;
    f->more = NULL;
    f->cap_more = 0;
    for (size_t i = 0; i < n; i++) {
        future_callback c = i < 2 ? inline_cb[i] : more[i - 2];
        c.fn(f, c.arg);
    }
    free(more);
}

void future_set_result(future *f, coro_value v)
{
    if (future_done(f))
        return;
    f->state = FUTURE_DONE;
    f->result = v;
    run_callbacks(f);
}

void future_set_error(future *f, coro_error *e)
{
    if (future_done(f)) {
        coro_error_free(e);
        return;
    }
    f->state = e->kind == CORO_CANCELLED ? FUTURE_CANCELLED : FUTURE_FAILED;
    f->error = e;
    run_callbacks(f);
}

void future_cancel(future *f)
{
    if (!future_done(f))
        future_set_error(f, coro_error_new(CORO_CANCELLED, 0, "future cancelled"));
}
