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
 *     fetched_at   TEXT NOT NULL,         -- the record's: when the request started,
 *                                         -- RFC 3339 UTC with milliseconds
 *     crawl_id     INTEGER,               -- the run's row of crawls
 *     elapsed      REAL,                  -- the record's: seconds from the request to the
 *                                         -- last byte (NULL: no response; an older store's
 *                                         -- rows, the column added when it is opened)
 *     url_normalized TEXT                 -- the record's: url in RFC 3986's normal form
 *                                         -- where that differs, else NULL (as the JSONL
 *                                         -- record has the key only then; an older
 *                                         -- store's rows too): one URL's rows are
 *                                         -- those of coalesce(url_normalized, url)
 *   );
 *   CREATE TABLE links (                   -- the referrer middleware's
 *     from_url     TEXT NOT NULL,         -- a page (pages.url)
 *     to_url       TEXT NOT NULL,         -- a link on it: absolute, each once a page
 *     crawl_id     INTEGER                -- the run's row of crawls (NULL: an older
 *   );                                     -- store's) (and an index on to_url)
 *   CREATE TABLE items (id INTEGER PRIMARY KEY, url TEXT NOT NULL, callback TEXT NOT NULL,
 *                       json TEXT NOT NULL, crawl_id INTEGER); -- a spider's items
 *   crawls (id, started, finished, roots, options, state_token): state_token is the
 *   --state crawl's (state.c's meta 'token'), so that --resume knows its runs' rows.
 *
 * A 304 that answered --recrawl's conditional request (response.not_modified) is a row
 * with status 304 and size 0 holding a copy of the stored page: its body, and its
 * headers updated by the 304's (docs/recrawl.md).
 *
 * The first eleven columns are the JSONL record's fields. Writes are batched (writer.h):
 * rows are collected on the loop thread and each batch is one transaction written by a
 * pool thread (journal_mode=WAL, synchronous=NORMAL), so a crash loses at most the
 * batches not yet committed and never leaves a torn database.
 */
#ifndef CRAWL_STORE_H
#define CRAWL_STORE_H

#include <sqlite3.h>

#include "engine.h"

/* The storage stage of the item pipeline, writing to path; bodies: the pages' bodies too
 * (false: --store-headers-only, every column but body, which stays NULL). */
item_pipeline store_pipeline(const char *path, bool bodies);

/* Rows per transaction, and the longest a row waits for its batch to be written. */
enum { STORE_BATCH_ROWS = 256, STORE_BATCH_MS = 500 };

/* ---- shared with --state (state.c), whose pages table is this one ---- */

/* A pages row: the record, and what came with its response. */
typedef struct store_page {
    fetch_stat rec; /* owned copy */
    char *final_url;
    char *headers; /* "Name: value\r\n"... or NULL */
    char *body;
    size_t body_len;
    char fetched_at[32];
} store_page;

/* Now, UTC, ISO 8601 with milliseconds ("2026-01-02T03:04:05.678Z"): fetched_at. */
void store_utc_now(char *buf, size_t len);

/* Fill p from it: the record and the time; with_response: the final URL, the headers
 * and the body too. */
void store_page_fill(store_page *p, const item *it, bool with_response);
void store_page_clear(store_page *p);

/* The pages INSERT's columns and parameters (store_page_bind binds ?1 to ?13). */
#define STORE_PAGE_COLUMNS                                                                         \
    "url, final_url, next_url, status, exception, size, content_type, encoding, num_urls,"         \
    " num_new_urls, headers, body, fetched_at"
#define STORE_PAGE_VALUES "?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13"

/* On a pool thread: open path (WAL, synchronous=NORMAL, a busy timeout, the pages
 * table), then run schema (NULL: none). NULL with *err set ("<what> '<path>': open:
 * <reason>"). */
sqlite3 *store_db_open(const char *what, const char *path, const char *schema, coro_error **err);
coro_error *store_db_error(sqlite3 *db, const char *what, const char *path, const char *step);
/* Bind p to a pages INSERT. */
void store_page_bind(sqlite3_stmt *st, const store_page *p);
/* One batch, one transaction: insert(self, row) for each of the n rows of size bytes
 * (0, or -1 on failure). Returns the rows written; *err set on failure (and the
 * transaction rolled back). */
coro_value store_write_rows(sqlite3 *db, const char *what, const char *path, const void *rows,
                            size_t n, size_t size, int (*insert)(void *self, const void *row),
                            void *self, coro_error **err);

#endif
