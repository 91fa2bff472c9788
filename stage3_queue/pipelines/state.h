/* state.h — --state FILE.db and --resume (docs/state.md): a crawl that survives kill -9.
 *
 * The frontier lives in SQLite, written by the background writer in the thread pool
 * (writer.h; state_pipeline): every URL scheduled (frontier), every URL recorded (pages,
 * the store's table, store.h), and the crawl's roots and options (meta):
 *
 *   CREATE TABLE frontier (url TEXT PRIMARY KEY, max_redirect INTEGER NOT NULL);
 *   CREATE TABLE pages (... as store.h ..., output_end INTEGER);
 *   CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
 *
 * A URL is in frontier once scheduled (state_frontier_add, an add listener of the crawl core),
 * in pages once its record is written to --output (the engine hands the pipeline only
 * records whose line was written); output_end is where that line ends in --output. Both
 * go through the same batches, in order.
 *
 * state_restore runs before the crawl starts, on the loop thread, while nothing else
 * runs:
 *
 *   - a state file that holds a crawl is refused without --resume, and with --resume
 *     when its roots or options differ: one line each;
 *   - with --resume, a state that holds no crawl (deleted, 0 bytes, or no row of a
 *     run, a URL or a page) is refused, in one line and before any file is touched,
 *     when --output, --warc, --cdx or --items holds data: those are some other run's,
 *     and going on would append a second crawl to them. The first run's first commit
 *     (its row of runs) comes before its output is opened, so a run killed before its
 *     first batch left its outputs empty, and goes on;
 *   - with --resume, the file must pass SQLite's quick_check and every row must be
 *     whole: a damaged file is one line;
 *   - a pages row whose response --warc lacks, or whose record --store lacks (their
 *     writers had not written it at a kill -9), is forgotten: its URL is fetched again;
 *   - --output is cut back to its last line before the first one that is no committed
 *     pages row (records a kill -9 left uncommitted, a torn line, a summary), and the
 *     pages rows past it are forgotten, with one warning: so no record is written twice
 *     (--warc skips the URLs it holds, --store drops the rows of URLs fetched again,
 *     --items keeps the items the state knows of);
 *   - with --items, --items is cut back to before the first item of a URL not done (a
 *     kill -9 between its items rows and its pages row), and URLs done whose items or
 *     records lie past the cut are forgotten, their records cut from --output: a URL
 *     fetched again writes its items anew, as that fetch makes them, each once;
 *   - a pages row whose line lies past the end of --output (the output was cut or
 *     deleted) is forgotten, with one warning: its URL is fetched again;
 *   - a URL is done when the file has its record (pages); every other URL of the
 *     frontier goes back in the Queue, every URL of the frontier is in seen_urls again.
 *     So a URL with a record in --output is not fetched again; one in flight at a
 *     kill -9, or recorded in a batch not yet committed, is fetched once more.
 */
#ifndef CRAWL_STATE_H
#define CRAWL_STATE_H

#include <stddef.h>

#include "app.h"
#include "crawl.h"
#include "engine.h"
#include "warc.h"

/* The --state stage of the item pipeline, writing to path, and the crawl core's add
 * listener that gives it the frontier (its ctx: the stage's self). */
item_pipeline state_pipeline(app *a, const char *path);
void state_frontier_add(void *self, const crawl_request *r);

/* Rows per transaction, and the longest a row waits for its batch to be written: the
 * rows are small (a URL, or a record without body), so more to a transaction than the
 * store's (store.h). */
enum { STATE_BATCH_ROWS = 4096, STATE_BATCH_MS = 100 };

/* What state_restore reads, from the command line (settings.h). */
typedef struct state_config {
    const char *path;        /* --state FILE.db */
    bool resume;             /* --resume: go on with its crawl */
    const warc_config *warc; /* --warc: what it archived is done (NULL: no archive) */
    const char *items;       /* --items FILE (NULL: none) */
    const char *store;       /* --store FILE.db: what it holds is done (NULL: none) */
} state_config;

/* Check cfg's file against this crawl and, with --resume, put the URLs left to do (put),
 * each with the depth, referrer and callback it was scheduled with. 0, or -1 with one
 * line in err. A file of an older crawl-queue (no depth, referrer, callback) is upgraded:
 * its URLs get depth 0. */
int state_restore(app *a, const state_config *cfg, crawl_add_fn put, void *ctx, char *err,
                  size_t errlen);

/* --resume with --items (items.h), after state_restore: *items_end: where the last item
 * the state knows of ends in --items (what follows belongs to URLs not done, and is
 * written again when they are fetched again); *done: the URLs done. 0, or -1 with one
 * line in err. */
/* --resume with --warc: for each URL the state counts done with a response (a pages
 * row with a status), fn(ctx, url, how many times). 0, or -1 (err says why). */
int state_done_responses(const char *path, void (*fn)(void *ctx, const char *url, long long n),
                         void *ctx, char *err, size_t errlen);
int state_items_written(const char *path, long long *items_end, long long *done, char *err,
                        size_t errlen);

#endif
