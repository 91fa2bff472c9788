/* writer.h — the background writer of the item pipeline stages that write files: the
 * SQLite store (store.c), --state (state.c) and the WARC archive (warc.c).
 *
 * The item pipeline runs on the loop thread, and files block: so a stage collects what
 * it will write on the loop, and a writer Task hands one job at a time to the thread
 * pool (defer_to_thread, the article's deferToThread and adbapi). One job is written at
 * a time (a file, or one SQLite connection, used by one thread at a time).
 * process_item never waits for the disk unless the stage says too much is already
 * waiting (ops->full): then it awaits room — back-pressure instead of unbounded memory.
 *
 *   writer_open    open the file(s) in the pool (ops->open), then start the writer
 *   the writer     wait until the stage has a job (ops->take), write it in the pool
 *                  (ops->write), tell the stage (ops->written), wake who waits for room
 *   writer_room    what process_item returns: NULL, or a coroutine that waits for room
 *   writer_close   the writer writes what is left (take with closing), closes the files
 *                  in the pool (ops->close) and ends
 *
 * The first failed write (or open, or close) ends the writer: nothing more is written,
 * and writer_room and writer_close raise it, in one line.
 *
 * Stages that write rows (store, state) gather them into batches with writer_rows: a
 * batch goes to the writer when it has batch_rows rows, or batch_ms after its first.
 */
#ifndef CRAWL_WRITER_H
#define CRAWL_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "future.h"
#include "list.h"
#include "threads.h"

typedef struct writer_ops {
    const char *name;           /* its Tasks' names: "store_writer"... */
    thread_work_fn open;        /* pool: open the file(s); arg: self */
    void (*opened)(void *self); /* loop, after open; NULL: nothing */
    /* loop: the next job, or NULL for none (closing: what is left, too) */
    void *(*take)(void *self, bool closing);
    thread_work_fn write;                   /* pool: write one job */
    void (*written)(void *self, void *job); /* loop, after write succeeded; NULL */
    void (*job_free)(void *job);            /* loop: a job written, or not */
    bool (*full)(const void *self);         /* loop: process_item must wait */
    /* take, job_free and full NULL: the stage's writer_rows give the jobs, each a
     * writer_rows_job, and two batches waiting is full. */
    thread_work_fn close; /* pool: close the file(s); arg: self */
} writer_ops;

typedef struct writer {
    const writer_ops *ops;
    void *self; /* the stage */
    app *a;
    task *task;
    future wake;            /* the writer waits here for a job */
    list_node room_waiters; /* of writer_room's frames: each waits on a future of its own */
    bool closing;
    char *error;              /* the first write that failed */
    struct writer_rows *rows; /* the stage's rows, if it writes rows */
} writer;

/* a: NULL until writer_open, unless the stage gathers rows before (state's roots). */
void writer_init(writer *w, const writer_ops *ops, void *self, app *a);
/* The Task and the futures (cancelling a write still running: the job frees itself). */
void writer_clear(writer *w);
/* The stage has a job for take. */
void writer_wake(writer *w);
/* The first error, or NULL. */
const char *writer_error(const writer *w);

/* The stage's open, process_item's result, and its close. */
coro *writer_open(writer *w, engine *e);
coro *writer_room(writer *w);
coro *writer_close(writer *w);

/* ---- rows in batches (store, state) ---- */

typedef struct writer_batch {
    void *rows; /* n rows of size bytes */
    size_t n, cap, size;
    void (*row_free)(void *row);
    struct writer_batch *next;
} writer_batch;

typedef struct writer_rows {
    size_t size;       /* bytes per row */
    size_t batch_rows; /* rows per batch */
    uint64_t batch_ms; /* the longest a row waits for its batch to go */
    void (*row_free)(void *row);
    writer_batch *filling;          /* rows being collected */
    writer_batch *full, *full_tail; /* batches waiting for the writer */
    size_t nfull;
    sel_timer *timer; /* sends a non-empty batch after batch_ms */
    writer *w;
} writer_rows;

void writer_rows_init(writer_rows *r, writer *w, size_t size, size_t batch_rows, uint64_t batch_ms,
                      void (*row_free)(void *row));
void writer_rows_clear(writer_rows *r);
/* A zeroed row at the end of the filling batch (writer_rows_init made r w's rows);
 * writer_row_added once it is filled. */
void *writer_row(writer_rows *r);
void writer_row_added(writer_rows *r);
/* A job of rows, for ops->write: the stage and one batch. */
typedef struct writer_rows_job {
    void *self;
    writer_batch *b;
} writer_rows_job;
/* Row i of b. */
static inline void *writer_batch_row(const writer_batch *b, size_t i)
{
    return (char *)b->rows + i * b->size;
}

#endif
