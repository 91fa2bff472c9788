/* coro_await_future_: what AWAIT_FUTURE(co, f) calls each time the coroutine arrives
 * at (or is resumed at) the await: the chapter's `yield from future`. Return
 * CORO_SUSPENDED to wait, or CORO_FINISHED with the result in co->value or an error
 * raised. The README beside this file (exercise-stage2-await/README.md) says what it
 * must do. */
int coro_await_future_(coro *co, future *f)
{
    (void)f;
    /* TODO: as it is, every await raises. */
    return coro_raise_(co, coro_error_new(CORO_ERROR, 0, "AWAIT_FUTURE is not written yet"));
}
