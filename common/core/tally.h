/* tally.h — the records of a crawl counted as a person reads them: how many by status
 * class, and the body bytes received. The crawl core keeps one (crawl_tally); the JSONL
 * summary line writes it ("by_status", "bytes_received"); a crawler's progress line and
 * its summary on stderr may read it.
 *
 * A record's class (tally_class_of):
 *   2xx, 3xx, 4xx, 5xx  by its status, whatever its exception (a 200 cut at --max-size
 *                       is a 2xx; a 304, a 3xx)
 *   failed              status null: no response after every try (refused, reset,
 *                       timed out, not HTTP)
 *   ignored             status null and an exception "IgnoreRequest: ...": a downloader
 *                       middleware chose not to fetch it (robots.txt forbids it, say);
 *                       the chapter's crawler has none
 *   other               any other status (1xx, 600 and over: a server's oddity)
 */
#ifndef CRAWL_TALLY_H
#define CRAWL_TALLY_H

#include <stddef.h>
#include <stdio.h>

typedef enum tally_class {
    TALLY_2XX,
    TALLY_3XX,
    TALLY_4XX,
    TALLY_5XX,
    TALLY_FAILED,
    TALLY_IGNORED,
    TALLY_OTHER,
    TALLY_NCLASSES
} tally_class;

typedef struct tally {
    size_t n[TALLY_NCLASSES]; /* records of each class */
    long long bytes;          /* the records' sizes added up: body bytes received */
} tally;

/* The class of a record with this status (-1: null) and exception (NULL: none). */
tally_class tally_class_of(int status, const char *exception);
/* Its name: "2xx", ..., "failed", "ignored", "other". */
const char *tally_class_name(tally_class k);
/* Count one record. */
void tally_add(tally *t, int status, const char *exception, long long size);
/* The records counted. */
size_t tally_total(const tally *t);

/* As members of the summary object, after the ones before (", " first):
 *   , "by_status": {"2xx": N, "3xx": N, "4xx": N, "5xx": N, "failed": N,
 *   "ignored": N}, "bytes_received": N
 * with "other": N after "ignored" only when there are such records. */
void tally_write_json(const tally *t, FILE *out);
/* For a person: "2xx N, 3xx N, 4xx N, 5xx N, failed N, ignored N" (", other N" only
 * when there are such records). */
void tally_write_text(const tally *t, FILE *out);

#endif
