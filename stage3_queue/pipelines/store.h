/* store.h — the SQLite store: one row per record, in FILE.db (--store FILE.db).
 *
 * The schema (docs/storage.md says how to query it with `sqlite3 FILE.db`):
 *
 *   CREATE TABLE pages (
 *     id           INTEGER PRIMARY KEY,   -- in the order records were made
 *     url          TEXT NOT NULL,         -- the URL requested
 *     final_url    TEXT,                  -- the URL the response came from (NULL: none)
 *     next_url     TEXT,                  -- a redirect's resolved target
 *     status       INTEGER,               -- NULL when the fetch failed
 *     exception    TEXT,                  -- why it failed, or what was wrong with it
 *     size         INTEGER NOT NULL,      -- body bytes received
 *     content_type TEXT, encoding TEXT,   -- as in the report
 *     num_urls     INTEGER NOT NULL, num_new_urls INTEGER NOT NULL,
 *     headers      TEXT,                  -- "Name: value\r\n" per header, as received
 *     body         BLOB,                  -- at most --max-size bytes
 *     fetched_at   TEXT NOT NULL          -- UTC, ISO 8601 with milliseconds
 *   );
 *
 * The first eleven columns are the JSONL record's fields. Writes are batched: rows are
 * collected on the loop thread and each batch is one transaction written by a pool
 * thread (journal_mode=WAL, synchronous=NORMAL), so a crash loses at most the batches
 * not yet committed and never leaves a torn database.
 */
#ifndef CRAWL_STORE_H
#define CRAWL_STORE_H

#include "engine.h"

/* The storage stage of the item pipeline, writing to path. */
item_pipeline store_pipeline(const char *path);

/* --state FILE.db (state.h): the same writer keeping the crawl's frontier. Its pages
 * rows have no headers or body; two more tables:
 *
 *   CREATE TABLE frontier (url TEXT PRIMARY KEY, max_redirect INTEGER NOT NULL);
 *   CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
 *
 * A URL is in frontier once scheduled (store_frontier_add, the crawl core's add hook),
 * in pages once it has a record; both go through the same batches, in order. */
item_pipeline state_pipeline(app *a, const char *path);
void store_frontier_add(void *self, const crawl_request *r);

/* Rows per transaction, and the longest a row waits for its batch to be written. The
 * state's rows are small (a URL, or a record without body): more to a transaction. */
enum { STORE_BATCH_ROWS = 256, STATE_BATCH_ROWS = 4096, STORE_BATCH_MS = 500,
       STATE_BATCH_MS = 100 };

#endif
