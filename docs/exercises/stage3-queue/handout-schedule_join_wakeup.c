/* replaces: static void schedule_join_wakeup(rqueue *q) */
/* In a handout the Redis frontier's join polls (rjoin_body): once your queue.c's
 * task_done and join pass, this is where the same wake-up goes. */
static void schedule_join_wakeup(rqueue *q)
{
    (void)q;
}
