/* future.h — the chapter's Future: a result that is not there yet.
 *
 * A future starts pending and is resolved once: set_result, set_error, or cancel.
 * Everyone who asked with add_done_callback is then called back, in order. A
 * coroutine waits for one with AWAIT_FUTURE (coro.h); when it is already resolved
 * the coroutine goes straight on (the chapter's footnote 9 names that deficiency of
 * its sketch; this Future does not have it).
 *
 * A future is usually a member of the frame of the coroutine that made it, so it
 * lives exactly as long as the wait.
 */
#ifndef CRAWL_FUTURE_H
#define CRAWL_FUTURE_H

#include "coro.h"

typedef enum { FUTURE_PENDING, FUTURE_DONE, FUTURE_FAILED, FUTURE_CANCELLED } future_state;

typedef void (*future_cb)(future *f, void *arg);

typedef struct future_callback {
    future_cb fn;
    void *arg;
} future_callback;

struct future {
    future_state state;
    coro_value result;
    coro_error *error;     /* owned while FAILED or CANCELLED */
    future_callback cb[2]; /* almost every future has one or two callbacks... */
    future_callback *more; /* ...the rest go here */
    size_t ncb, cap_more;
};

void future_init(future *f);
/* Free what the future owns (its error, its callback list). */
void future_clear(future *f);
/* Call fn(f, arg) when f is resolved; at once if it already is. */
void future_add_done_callback(future *f, future_cb fn, void *arg);
/* Forget a callback added earlier (the first one matching fn and arg). */
void future_remove_done_callback(future *f, future_cb fn, void *arg);
/* Resolve. A future resolves once; resolving it again is ignored. */
void future_set_result(future *f, coro_value v);
void future_set_error(future *f, coro_error *e); /* takes ownership of e */
void future_cancel(future *f);
static inline int future_done(const future *f)
{
    return f->state != FUTURE_PENDING;
}

#endif
