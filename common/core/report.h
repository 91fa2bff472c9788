/* report.h — one FetchStatistic per finished URL, and the crawl report.
 *
 * Field meanings follow the chapter's crawling.py:
 *   url           the URL fetched
 *   next_url      for a redirect, the resolved Location; else NULL
 *   status        HTTP status, or -1 (null) when the fetch failed at the network level
 *   exception     NULL, or one line saying why the fetch failed: status is then -1,
 *                 or the response's status when the response itself was bad
 *                 (a redirect without Location, a body cut at --max-size)
 *   size          body bytes received (0 for redirects)
 *   content_type  media type without parameters, lower case; NULL when absent
 *   encoding      the charset parameter, lower case; "utf-8" when the type has none;
 *                 NULL when content_type is NULL
 *   num_urls      distinct allowed links found on the page
 *   num_new_urls  of those, how many had not been seen before this page
 *   http_version  (a crawler that asks for it) the response's HTTP version,
 *                 "HTTP/1.1" or "HTTP/2" (say); null when no response came
 *
 * Two output formats: text (modelled on the chapter's reporting.py) and jsonl (one
 * object per URL with exactly those nine keys — and "not_modified": true for a 304 that
 * answered a recrawl's conditional request — then {"summary": {...}}). Both are safe
 * to print on a terminal whatever the servers sent: jsonl escapes as JSON does, text
 * as text_write_string below.
 */
#ifndef CRAWL_REPORT_H
#define CRAWL_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>

#include "tally.h"

typedef struct fetch_stat {
    char *url;
    char *url_normalized; /* NULL, or url's RFC 3986 normal form when that differs
                           * (crawl_options' normalize_urls): jsonl's "url_normalized",
                           * right after "url" */
    char *next_url;
    int status; /* -1 = null */
    char *exception;
    long long size;
    char *content_type;
    char *encoding;
    int num_urls;
    int num_new_urls;
    /* A crawler's own fields (crawl.h's crawl_set_fields), written after the others
     * in jsonl only when their bit is in extra: "depth", "referrer" (null for a root),
     * "requisite" (true). */
    unsigned extra;
    int depth;
    char *referrer;
    int requisite;
    bool not_modified; /* a 304 to a recrawl's conditional request: the page is the
                          * stored one; the JSONL record adds "not_modified": true */
    /* The response's HTTP version ("HTTP/1.1", "HTTP/2"; "" when none came: null),
     * as jsonl's "http_version" when with_http_version (crawl_options'
     * record_http_version). */
    char http_version[12];
    bool with_http_version;
    /* When (with_times: crawl_options' record_times): "fetched_at", the moment the
     * request started (the record was made, for a URL never requested), RFC 3339 UTC
     * with milliseconds; "elapsed", the seconds from the request to the response's last
     * byte (-1: null, no response came). */
    bool with_times;
    char fetched_at[32];
    struct timespec at; /* fetched_at's time (CLOCK_REALTIME) */
    double elapsed;
} fetch_stat;

enum { FETCH_STAT_DEPTH = 1, FETCH_STAT_REFERRER = 2, FETCH_STAT_REQUISITE = 4 };

/* A crawler's own counter for the summary. */
typedef struct report_counter {
    const char *name;
    long long n;
} report_counter;

/* Everything the summary line needs besides the records. */
typedef struct report_summary {
    double seconds;
    int max_tasks;
    size_t todo;                  /* URLs still queued when the crawl ended (0 normally) */
    const char *stage;            /* the stage's name, as its main() gives it */
    const char *transport;        /* "raw" | "curl" */
    const char *selector;         /* backend name */
    const tally *tally;           /* the records by status class, and their bytes (NULL: none) */
    size_t peak_in_flight;        /* most fetches in progress at once */
    int interrupted;              /* stopped by a signal, or failed */
    const char *error;            /* why it failed (NULL: it did not) */
    const report_counter *counts; /* a crawler's own counters, ncounts of them */
    size_t ncounts;
    /* the URLs not scheduled, by reason (crawl.h's crawl_skip_reason order; NULL: not
     * counted), as "skipped": {"offsite": N, ...} */
    const size_t *skipped;
    size_t crawl_done; /* with runs: URLs done by the whole crawl, this run's too */
    unsigned runs;     /* the crawl's runs, this one included (0: not known) */
} report_summary;

/* The reasons of report_summary's skipped, in order (crawl.h's crawl_skip_reason). */
#define REPORT_SKIP_REASONS 8
extern const char *const report_skip_names[REPORT_SKIP_REASONS];

typedef struct report report;

/* Copy *src into *dst (strings duplicated); free a copy's strings (and zero it). */
void fetch_stat_copy(fetch_stat *dst, const fetch_stat *src);
void fetch_stat_clear(fetch_stat *st);

report *report_new(void);
void report_free(report *r);
/* Take ownership of a copy of *st (strings are duplicated; st is left untouched). */
void report_add(report *r, const fetch_stat *st);
size_t report_count(const report *r);
const fetch_stat *report_get(const report *r, size_t i);

/* Write in text form (URLs sorted, counters, Finished..., Todo, Done, Date). */
void report_write_text(report *r, const report_summary *sum, FILE *out);
/* Write one JSON object per record (sorted by url), then {"summary": {...}}. */
void report_write_jsonl(report *r, const report_summary *sum, FILE *out);
/* Its two kinds of line, one at a time (each ends in '\n'): a record, and the summary
 * of a crawl that recorded done URLs. A crawl writes each record as its URL finishes
 * (recstream.h). */
void report_write_jsonl_record(const fetch_stat *st, FILE *out);
/* The same with a last field "fetched_by": the process that fetched it (many
 * processes, one crawl); none when fetched_by is NULL. */
void report_write_jsonl_record_by(const fetch_stat *st, const char *fetched_by, FILE *out);
void report_write_jsonl_summary(size_t done, const report_summary *sum, FILE *out);

/* Write s for a terminal (the text report): printable ASCII and valid UTF-8 as they
 * are, except what a terminal would obey or reorder — a control byte (ESC, CR, ...) or
 * DEL as \xHH, a byte that is not valid UTF-8 as \xHH, a C1 control (U+0080..U+009F)
 * or a bidirectional formatting character as \uXXXX — and a backslash as \\, so
 * that the escapes cannot be confused with the text. NULL writes nothing. */
void text_write_string(FILE *out, const char *s);

/* Write s as a JSON string literal (with quotes); NULL writes null. Bytes that are not
 * valid UTF-8 are written as \u00XX of the byte, so the output is always valid JSON. */
void json_write_string(FILE *out, const char *s);

/* The URL of a line that opens as a jsonl record does, {"url": "...", read back:
 * json_write_string's escapes decoded into out (at least len bytes, NUL-terminated).
 * Its length, with *after (when not NULL) the offset just past its closing quote; -1
 * for a line that opens otherwise, or an escape json_write_string never writes. */
long json_line_url(const char *line, size_t len, char *out, size_t *after);

/* at (CLOCK_REALTIME) as RFC 3339 in UTC with milliseconds, "2026-12-03T11:30:00.123Z",
 * in buf (32 bytes is enough). */
void report_utc_time(const struct timespec *at, char *buf, size_t len);

#endif
