/* threadpool.h — a fixed pool of threads for the work that cannot wait on the
 * selector: a blocking call such as getaddrinfo, a database write. Twisted's reactor
 * thread pool, with its names:
 *
 *   call_in_thread(pool, fn, arg)           reactor.callInThread: fn(arg) on a pool
 *                                           thread, nothing comes back
 *   threadpool_submit(pool, work, done, arg)
 *                                           work(arg) on a pool thread, then
 *                                           done(arg, true) on the loop thread: the
 *                                           base of deferToThread (the
 *                                           coroutines' defer_to_thread makes it a
 *                                           Future)
 *   call_from_thread(pool, fn, arg)         reactor.callFromThread: fn(arg) on the loop
 *                                           thread, called from any thread
 *
 * call_from_thread is the only way from another thread into the loop. It goes through
 * the selector's self-pipe (selector_wakeup): one descriptor for every thread and every
 * message, which the loop already watches for signals.
 *
 * THE QUEUE IS BOUNDED; THE LOOP NEVER WAITS. The threads take jobs from a queue of at
 * most queue_max jobs. The loop thread must not block, so a job submitted while that
 * queue is full waits in the loop's own backlog, a FIFO only the loop thread touches;
 * each time jobs finish, the loop moves jobs from the backlog into the queue. No job is
 * refused or lost; the backlog is as long as the caller makes it (as a FIFO of URLs
 * is), and threadpool_pending counts it.
 *
 * ORDER. done(arg) runs after work(arg) has returned, and sees everything work wrote.
 * The loop runs done callbacks and call_from_thread calls in the order the threads
 * finished or called: a job's call_from_thread calls run before its done; one thread's
 * calls keep their order; with one thread, done callbacks keep the submission order.
 *
 * LIVENESS. Each job holds the loop (selector_hold) from submission until its done
 * has run, so selector_run does not end while a job is out. A call_from_thread from a
 * thread that is not running a pool job needs the loop to be kept running by
 * something else.
 *
 * SHUTDOWN. threadpool_free waits for the jobs that are running (a thread cannot be
 * stopped in the middle of a call), runs the done callbacks of the finished ones and
 * any call_from_thread still waiting, then cancels the jobs that never started: their
 * done(arg, false) runs instead (call_in_thread jobs are dropped). Then every thread
 * has been joined. (Twisted's pool runs the queued jobs first; ours does not, so that
 * an interrupted crawl with lookups queued ends at once.)
 *
 * Threads of the pool block every signal: SIGINT and SIGTERM reach the loop thread.
 */
#ifndef CRAWL_THREADPOOL_H
#define CRAWL_THREADPOOL_H

#include <stdbool.h>
#include <stddef.h>

#include "selector.h"

typedef struct threadpool threadpool;

typedef void (*pool_fn)(void *arg);
/* ran is false when the pool was freed before the job started. */
typedef void (*pool_done_fn)(void *arg, bool ran);

/* nthreads (1 to THREADPOOL_MAX_THREADS) threads, a queue of queue_max (> 0) jobs.
 * One pool per selector (it takes the selector's wake-up function). On failure
 * returns NULL with a one-line message in err. */
threadpool *threadpool_new(selector *loop, int nthreads, size_t queue_max, char *err,
                           size_t errlen);
#define THREADPOOL_MAX_THREADS 1024
/* Shut down (see above) and free. On the loop thread, not from inside a done callback
 * or call_from_thread call. Accepts NULL. */
void threadpool_free(threadpool *p);

/* Loop thread only. */
void call_in_thread(threadpool *p, pool_fn fn, void *arg);
void threadpool_submit(threadpool *p, pool_fn work, pool_done_fn done, void *arg);

/* Any thread, including the loop's and the pool's own. Not after threadpool_free. */
void call_from_thread(threadpool *p, pool_fn fn, void *arg);

/* Loop thread: jobs submitted whose done has not run yet (backlog, queue, running,
 * finished); the threads. */
size_t threadpool_pending(const threadpool *p);
int threadpool_threads(const threadpool *p);

#endif
