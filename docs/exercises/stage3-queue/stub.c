/* queue_task_done and the join coroutine: the counting half of the Queue. The README
 * beside this file (exercise-stage3-queue/README.md) says what they must do. Add any
 * helper you need here. */
void queue_task_done(queue *q)
{
    (void)q;
    /* TODO: as it is, nothing is counted down. */
}

/* join's frame: what the coroutine keeps across an await (queue_join, below, sets
 * q). Add fields if you need them. */
typedef struct {
    coro co;
    queue *q;
} join_frame;

static int join_body(coro *co)
{
    /* TODO: wait until every item put has been marked done. As it is, join raises. */
    return coro_raise_(co, coro_error_new(CORO_ERROR, 0, "join is not written yet"));
}
