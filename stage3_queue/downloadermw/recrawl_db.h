/* recrawl_db.h — OLD.db for --recrawl: a database an earlier crawl's --store wrote
 * (pipelines/store.h has its schema), read-only. What the recrawl middleware
 * (recrawl.h) reads of it: the known pages once, before the crawl, and one stored page
 * per 304, on a pool thread.
 */
#ifndef CRAWL_RECRAWL_DB_H
#define CRAWL_RECRAWL_DB_H

#include <stdint.h>
#include <stddef.h>

typedef struct old_db old_db;

/* Whether path is a database --store wrote (a pages table with the columns a recrawl
 * reads): 0, or -1 with one line in why ("--recrawl 'x': ..."). */
int old_db_check(const char *path, char *why, size_t n);
/* Open it (read-only, one connection shared by the pool's threads, serialized). NULL
 * with one line in why. The caller holds one reference. */
old_db *old_db_open(const char *path, char *why, size_t n);
/* References, taken and dropped on the loop thread: a job that reads holds one, so the
 * file stays open until the last is dropped (a crawl interrupted while a job reads).
 * Release accepts NULL. */
void old_db_ref(old_db *o);
void old_db_release(old_db *o);

/* For each URL, its last row that holds its page — a 200, or a 304 an earlier recrawl
 * filled with the stored page; not a body cut at --max-size (an exception) — call
 * fn(ctx, row id, url, headers). 0, or -1 with one line in why. Loop thread. */
int old_db_each_page(old_db *o,
                     void (*fn)(void *ctx, int64_t id, const char *url, const char *headers),
                     void *ctx, char *why, size_t n);

/* One stored row: headers ("Name: value\r\n" each), body, fetched_at (malloc'd, any may
 * be NULL), or error (why it could not be read). */
typedef struct stored_page {
    char *headers, *body, *fetched_at;
    size_t body_len;
    char *error;
} stored_page;

/* Read row id into *out (zeroed first). Blocking: on a pool thread. */
void old_db_read(old_db *o, int64_t id, stored_page *out);
void stored_page_clear(stored_page *p);

/* Call fn(ctx, name, value) for each field of a stored headers text; both are
 * NUL-terminated copies valid during the call. */
void stored_fields_each(const char *text, void (*fn)(void *ctx, const char *, const char *),
                        void *ctx);

#endif
