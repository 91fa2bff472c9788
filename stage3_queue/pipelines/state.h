/* state.h — --state FILE.db and --resume (docs/state.md): a crawl that survives kill -9.
 *
 * The frontier lives in SQLite, written by the store's batched writer in the thread
 * pool (state_pipeline in store.h): every URL scheduled (frontier), every URL recorded
 * (pages), and the crawl's roots and options (meta). state_restore runs before the crawl
 * starts, on the loop thread, while nothing else runs:
 *
 *   - a state file that holds a crawl is refused without --resume, and with --resume
 *     when its roots or options differ: one line each;
 *   - with --resume, a URL is done when the file has its record (pages) or when the
 *     --output of the earlier runs has it (a record written just before a kill -9 whose
 *     row was not yet committed); every other URL of the frontier goes back in the Queue,
 *     every URL of the frontier is in seen_urls again. So a URL with a record is never
 *     fetched again; one in flight at the kill is fetched once more.
 */
#ifndef CRAWL_STATE_H
#define CRAWL_STATE_H

#include <stddef.h>

#include "app.h"
#include "crawl.h"

/* Check path against this crawl and, with --resume, put the URLs left to do (put), each
 * with the depth, referrer and callback it was scheduled with. 0, or -1 with one line
 * in err. A file of an older crawl-queue (no depth, referrer, callback) is upgraded:
 * its URLs get depth 0. */
int state_restore(app *a, crawl_add_fn put, void *ctx, char *err, size_t errlen);

/* The tables --state adds to the store's (frontier: every URL scheduled, with what
 * travels with it; meta: the crawl's identity), for the store's writer too. */
extern const char state_schema[];

#endif
