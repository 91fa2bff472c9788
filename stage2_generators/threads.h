/* threads.h — Twisted's threads.deferToThread on the chapter's Future: run a blocking
 * function on the thread pool (common/loop/threadpool.h) and get its result as a
 * Future, resolved on the loop thread, that a coroutine awaits like any other.
 *
 *   static coro_value count_rows(void *arg, coro_error **err);   // on a pool thread
 *
 *   f->rows = defer_to_thread(a->pool, count_rows, f->db);
 *   AWAIT_FUTURE(co, f->rows);         // the loop runs on; co->value is the result
 *   ...
 *   // in the frame's finally:
 *   defer_release(f->rows, NULL);
 *
 * The work returns a coro_value ({pointer, number}) or raises by setting *err to an
 * error made with coro_error_new, which the awaiting coroutine gets as its exception
 * (an OSError with errno, say). It runs on another thread: it may touch arg and
 * thread-safe library calls, nothing of the loop, the crawl or the coroutines.
 *
 * The Future belongs to the caller until defer_release, and arg to the job until the
 * work is over: a coroutine cancelled while it waits releases the Future in its
 * finally, and the job, still running, frees the rest when it ends — cleanup(arg), if
 * not NULL, runs then, on the loop thread. So keep what the work allocates in arg (a
 * pointer result of a job released before it finished is not seen by anyone). When
 * the pool shuts down before the job started, the Future is cancelled.
 */
#ifndef CRAWL_THREADS_H
#define CRAWL_THREADS_H

#include "coro.h"
#include "future.h"
#include "threadpool.h"

typedef coro_value (*thread_work_fn)(void *arg, coro_error **err);

/* Loop thread. Never NULL: the job waits in the pool's backlog when its queue is full. */
future *defer_to_thread(threadpool *p, thread_work_fn work, void *arg);
/* The caller is done with the Future (resolved or not); cleanup(arg) runs once the
 * work is over too — now, or when it ends. Accepts NULL. */
void defer_release(future *f, void (*cleanup)(void *arg));

#endif
