/* crawl.h — the parts of the chapter's Crawler that do not depend on control flow, so
 * that the three stages share them and differ only in what the chapter compares: how
 * the waiting is written (callbacks, generator coroutines, a queue of workers).
 *
 * Shared here: the roots and host policy, seen_urls, the link parser fed as bytes
 * arrive (crawling.py's parse_links), the redirect decision with the chapter's
 * redirect join (fetch's is_redirect branch), the FetchStatistic records, --max-pages,
 * the in-flight count and its peak, and writing the report.
 *
 * A stage drives it like this, per URL it decides to fetch:
 *
 *   crawl_fetch *f = crawl_fetch_new(c, request);     // crawl_request.h
 *   ... give crawl_fetch_sink(f) to a transport, wait ...
 *   on success:  crawl_fetch_done(f, add_url, ctx);  // records, adds new links
 *   on failure:  crawl_fetch_fail(f, error); then retry, or after the last try
 *                crawl_record_failure(c, url, error);
 *
 * add_url(ctx, request) is the stage's way to schedule a URL (start a Fetcher, start a
 * Task, put it in the queue); the request (crawl_request.h: url, max_redirect, depth,
 * referrer, callback) is valid during the call only. The core calls it only for URLs
 * that are allowed, not seen before, and within --max-pages; it has already added
 * them to seen_urls, as crawling.py's add_url does. It fills depth and referrer: a
 * page's links are one deeper than the page, a redirect target as deep as the URL
 * that redirected.
 */
#ifndef CRAWL_CRAWL_H
#define CRAWL_CRAWL_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "crawl_request.h"
#include "options.h"
#include "http.h"
#include "report.h"

typedef struct crawl crawl;
typedef struct crawl_fetch crawl_fetch;
typedef void (*crawl_add_fn)(void *ctx, const crawl_request *r);

/* Build the policy from the options (roots, strict/lenient, exclude), open --output
 * (--format jsonl: from now on each record goes there as it is made).
 * stage is the stage's name, for the report. NULL with one line in err on failure
 * (bad regex, --output or --trace-events file that cannot be opened). */
crawl *crawl_new(const crawl_options *o, const char *stage, char *err, size_t errlen);
/* crawl_new in two steps, for a crawler that checks more before it writes anything (a
 * saved crawl's state, say): crawl_prepare opens no file; crawl_open_files opens
 * --output (appending with append_output) and --trace-events. 0, or -1 with one line in
 * err (then crawl_free). */
crawl *crawl_prepare(const crawl_options *o, const char *stage, char *err, size_t errlen);
int crawl_open_files(crawl *c, char *err, size_t errlen);
/* What makes two runs, or two processes, one crawl: the roots and the options that
 * decide which URLs are scheduled (--max-redirect, --max-pages, --exclude, --strict),
 * one per line, for a crawler that keeps a crawl's state to compare; the caller frees
 * it. */
char *crawl_identity(const crawl_options *o);
void crawl_free(crawl *c);
const crawl_options *crawl_opts(const crawl *c);

/* One link the link parser found on a page: absolute, without fragment, each once per
 * page, in page order; allowed by the host policy and --exclude or not. */
typedef struct crawl_link {
    const char *url;
    bool allowed;
} crawl_link;

/* crawling.py's add_url for each root, with max_redirect from the options (depth 0,
 * no referrer, no callback). */
void crawl_add_roots(crawl *c, crawl_add_fn add, void *ctx);

/* Start one attempt at fetching r->url (r is copied: its depth and callback go to the
 * URLs this response adds). Counts as in flight until done or discarded, except while
 * its transport waits for a free descriptor (the sink's on_wait_fd). */
crawl_fetch *crawl_fetch_new(crawl *c, const crawl_request *r);
const http_sink *crawl_fetch_sink(crawl_fetch *f);
/* When the attempt's request started (CLOCK_REALTIME) and the seconds from then to the
 * response's last byte so far: the record's "fetched_at" and "elapsed" (crawl_options'
 * record_times). A response made from another one (a stored page that a 304 stands
 * for) takes that one's with crawl_fetch_set_times (a zero started: ignored). */
typedef struct crawl_times {
    struct timespec started;
    double elapsed;
} crawl_times;
void crawl_fetch_times(const crawl_fetch *f, crawl_times *t);
void crawl_fetch_set_times(crawl_fetch *f, const crawl_times *t);
const char *crawl_fetch_url(const crawl_fetch *f);
/* Body bytes received so far in this attempt (never more than --max-size). */
long long crawl_fetch_size(const crawl_fetch *f);
/* The body went past --max-size: the sink kept exactly max_size bytes and dropped the
 * rest. A transport that reads the socket itself (raw) checks this after each chunk,
 * stops reading, closes the connection and calls crawl_fetch_truncated. (libcurl's glue
 * stops at the same byte by itself.) A body of exactly max_size bytes is not full. */
bool crawl_fetch_full(const crawl_fetch *f);
/* The whole response arrived: record its FetchStatistic; for a redirect, add the
 * target unless seen or out of redirects; for a page, add each new allowed link.
 * Frees f. */
void crawl_fetch_done(crawl_fetch *f, crawl_add_fn add, void *ctx);
/* The response was cut short by --max-size: record what arrived, with the exception
 * "body truncated at N bytes (--max-size)", and add its links. Frees f. */
void crawl_fetch_truncated(crawl_fetch *f, crawl_add_fn add, void *ctx);
/* The response arrived and was used, but is not a record (an engine's download:
 * robots.txt, say): its timeline span is written as a fetch's. Frees f. */
void crawl_fetch_release(crawl_fetch *f);
/* Forget this attempt (it failed and may be retried). Frees f. */
void crawl_fetch_discard(crawl_fetch *f);
/* The same, saying why it failed (for --trace-events). NULL-safe. */
void crawl_fetch_fail(crawl_fetch *f, const char *error);
/* All tries failed: record url with status null and this exception. */
void crawl_record_failure(crawl *c, const char *url, const char *error);

/* Fetch attempts in progress now, and the most there have been at once. */
size_t crawl_in_flight(const crawl *c);
size_t crawl_peak_in_flight(const crawl *c);
/* Fetch attempts started and not over: those in flight and those whose transport waits
 * for a descriptor (URLs still to do, when a crawl is interrupted). */
size_t crawl_attempts(const crawl *c);
/* URLs recorded so far. */
size_t crawl_done_count(const crawl *c);
/* Those records by status class, and their body bytes (tally.h). */
const tally *crawl_tally(const crawl *c);
/* Seconds since the crawl began; once the report is written, the time it gives. */
double crawl_seconds(const crawl *c);
/* The FetchStatistic records so far (for tests and stages; owned by c): the text
 * format's only — with --format jsonl each record is written as it is made and none
 * is kept (crawl_done_count still counts them). */
const report *crawl_report(const crawl *c);
/* Size of seen_urls: URLs scheduled so far, roots included. */
size_t crawl_seen_count(const crawl *c);
/* The longest probe (fpset_longest_probe) in seen_urls and in the link set of every page
 * finished so far: stays small whatever the pages' links (hash flooding). */
size_t crawl_longest_probe(const crawl *c);

/* ---- for an engine around the core ---- */

/* For an engine whose spider decides which links to follow: the page's links (none
 * unless it is a 200 of a type the parser reads), n of them, owned by f. Call it once
 * the whole body arrived (it finishes the parse). */
const crawl_link *crawl_fetch_links(crawl_fetch *f, size_t *n);
/* Whether the response is a redirect (its record adds the target, not links). */
bool crawl_fetch_is_redirect(const crawl_fetch *f);
/* As crawl_fetch_done (crawl_fetch_truncated when truncated), but the page's links are
 * not added — the spider schedules those it wants (crawl_schedule) — and error, when
 * not NULL, is the record's exception (after a truncation's, "; " between). A
 * redirect's target is still added through add. Frees f. */
void crawl_fetch_done_by_spider(crawl_fetch *f, bool truncated, const char *error, crawl_add_fn add,
                                void *ctx);
/* A crawler's own fields of each record (report.h's extra: depth, referrer,
 * requisite): fn fills them in st just before the record is written (the strings it
 * sets must live until the record listeners return). One at a time; NULL: none. */
typedef void (*crawl_fields_fn)(void *ctx, fetch_stat *st);
void crawl_set_fields(crawl *c, crawl_fields_fn fn, void *ctx);
/* Add n to a crawler's own counter (made at 0 on first use), written in the summary
 * after the core's own keys ("dropped_depth": 3). name: a JSON key, kept as given. */
void crawl_count(crawl *c, const char *name, long long n);
/* A crawler's own counter so far (0: never counted). */
long long crawl_counted(const crawl *c, const char *name);

/* ---- skipped URLs: every URL the crawl found and did not schedule, and why ---- */

/* Why (crawl_options' count_skips: the summary's "skipped" counts each reason). */
typedef enum crawl_skip_reason {
    CRAWL_SKIP_OFFSITE,      /* the host policy (--strict / --lenient) */
    CRAWL_SKIP_EXCLUDED,     /* an --exclude pattern */
    CRAWL_SKIP_NOT_INCLUDED, /* a crawler's scope: no pattern it follows */
    CRAWL_SKIP_SCHEME,       /* not http or https (mailto:, javascript:, ftp:) */
    CRAWL_SKIP_DEPTH,        /* past a crawler's depth limit */
    CRAWL_SKIP_MAX_PAGES,    /* --max-pages reached */
    CRAWL_SKIP_ROBOTS,       /* robots.txt forbids it (a record too) */
    CRAWL_SKIP_REDIRECTS,    /* a redirect past --max-redirect */
    CRAWL_SKIP_NREASONS
} crawl_skip_reason;
/* url's key in the seen set and the skipped set, and wherever a crawler compares URLs
 * as the crawl does: its RFC 3986 normal form with normalize_urls, so that "/%7Euser"
 * and "/~user" are one URL; else url. *owned: what to free (NULL when the key is url). */
const char *crawl_url_key(const crawl *c, const char *url, char **owned);
/* The reason's name in the summary and in a crawler's list: "offsite", "excluded",
 * "not_included", "scheme", "depth", "max_pages", "robots", "redirects". */
const char *crawl_skip_name(crawl_skip_reason why);
/* Why the host policy or --exclude does not allow url (crawl_allowed false): excluded,
 * scheme or offsite. */
crawl_skip_reason crawl_disallowed_reason(const crawl *c, const char *url);
/* The one place a skip is counted: url (found on referrer, NULL for none) is not
 * scheduled, for why. Counted once per URL (the first reason), and not at all when the
 * URL was scheduled already; each skip listener is told, and -v logs it. Nothing
 * without count_skips. */
void crawl_skip(crawl *c, const char *url, crawl_skip_reason why, const char *referrer);
/* The count of URLs skipped for why so far. */
size_t crawl_skipped(const crawl *c, crawl_skip_reason why);
typedef void (*crawl_skip_fn)(void *ctx, const char *url, crawl_skip_reason why,
                              const char *referrer);
void crawl_add_skip_listener(crawl *c, crawl_skip_fn fn, void *ctx);

/* Listeners: told of each record as it is made (after it joins the report) — the
 * record, and the attempt it came from while that still exists (NULL for a failure
 * recorded without a response); both are valid during the call only — or of each URL
 * add_url schedules (after seen_urls took it, before the stage's add): a frontier kept
 * on disk, say. A crawl takes any number of each; they are called in the order
 * they were added. None may add or remove a listener while it is being called. */
typedef void (*crawl_record_fn)(void *ctx, const fetch_stat *st, const crawl_fetch *f);
void crawl_add_record_listener(crawl *c, crawl_record_fn fn, void *ctx);
void crawl_add_add_listener(crawl *c, crawl_add_fn fn, void *ctx);
/* Remove every listener, of either kind, added with ctx (its owner is going away); a
 * NULL ctx removes nothing. */
void crawl_remove_listeners(crawl *c, const void *ctx);

/* A crawl resumed: its earlier runs recorded done distinct URLs, in runs runs. The
 * summary then gives the whole crawl's totals beside this run's ("crawl_done",
 * "runs"); a crawl that keeps its runs calls it with 0, 0 on its first. */
void crawl_set_earlier_runs(crawl *c, size_t done, unsigned runs);

/* seen_urls takes url without scheduling it (a crawl resumed: URLs of an earlier run).
 * Returns whether it was new. */
bool crawl_mark_seen(crawl *c, const char *url);

/* --format jsonl: where the last record's line ends in --output (before the first
 * record: where the file ended when it was opened); -1 when there is no such offset
 * (the text format, a pipe). */
long long crawl_output_end(const crawl *c);
/* Whether a record's write to --output (or stdout) failed; if so, one line in err
 * ("writing --output 'x' failed: No space left on device"). Nothing is written after
 * the first failure: a stage stops the crawl and acknowledges nothing more. */
bool crawl_write_failed(const crawl *c, char *err, size_t errlen);
/* The crawl did not complete, for this reason (the first one is kept): the summary says
 * "interrupted": true and "error": reason. */
void crawl_fail(crawl *c, const char *reason);

/* Whether the host policy and --exclude allow url (what crawl_schedule checks before
 * the seen set and --max-pages): for a download that is no record, a sitemap say. */
bool crawl_allowed(const crawl *c, const char *url);
/* crawling.py's add_url for a URL that did not come from a page: scheduled (add is
 * called) when allowed by the host policy, not seen and within --max-pages. Returns
 * whether it was. */
bool crawl_schedule(crawl *c, const crawl_request *r, crawl_add_fn add, void *ctx);
/* The same for a start request: as a root, whatever the host policy and --exclude. */
bool crawl_schedule_root(crawl *c, const crawl_request *r, crawl_add_fn add, void *ctx);
/* The same for a URL of any host (a page requisite): http(s), not excluded. */
bool crawl_schedule_any_host(crawl *c, const crawl_request *r, crawl_add_fn add, void *ctx);

/* This attempt is a 304 Not Modified that answered a recrawl's conditional request,
 * and the body its sink is fed next is the page stored by an earlier crawl: its links
 * are parsed as a 200's, and the record says not_modified, with size 0 (no body came
 * over the wire). Call it before the sink's on_head. */
void crawl_fetch_not_modified(crawl_fetch *f);
/* The extra header fields this attempt's request sends ("Name: value" each, NULL at
 * the end; NULL: none). A request with If-None-Match or If-Modified-Since asked a
 * condition, which a 304 Not Modified answers; a 304 to a request that asked none (a
 * URL never fetched before, say) is no page, and its record says so in its exception
 * ("304 Not Modified to a request without a condition"; crawl_fetch_not_modified's 304
 * is the stored page's). Call it before the transport starts. */
void crawl_fetch_request_fields(crawl_fetch *f, const char *const *fields);
/* This attempt is a POST of body[0..len) (copied; NULL: a GET, the default), its
 * Content-Type among the request's fields; crawl_fetch_post gives it back (NULL: a
 * GET). Call it before the transport starts. */
void crawl_fetch_set_post(crawl_fetch *f, const char *body, size_t len);
const char *crawl_fetch_post(const crawl_fetch *f, size_t *len);
/* Keep this attempt's body (at most --max-size bytes) for crawl_fetch_take_body. Call
 * it before the transport starts. */
void crawl_fetch_keep_body(crawl_fetch *f);
/* The kept body (malloc'd, the caller frees it; NULL when empty), handed over: the
 * attempt keeps no copy. */
char *crawl_fetch_take_body(crawl_fetch *f, size_t *len);
/* What went over the wire, for an archive (WARC): the server's address, the request
 * head as sent, the final response head as received (status line to the empty line)
 * and the body as received (chunk framing and compression kept; at most --max-size
 * bytes, truncated says it was cut). */
typedef struct crawl_wire {
    char peer[64]; /* "" when unknown */
    char *request, *head, *body;
    size_t request_len, request_cap, head_len, head_cap, body_len, body_cap;
    bool truncated;
} crawl_wire;

/* Keep the wire bytes of this attempt. Call it before the transport starts (the sink
 * then has on_wire: libcurl's glue stops libcurl from decoding). */
void crawl_fetch_keep_wire(crawl_fetch *f);
/* This attempt is a download the crawl makes for itself (robots.txt), not a page: the
 * transport may give it connections of its own (curlglue.h, lanes). Call it before the
 * transport starts; crawl_fetch_is_aside says whether it was. */
void crawl_fetch_aside(crawl_fetch *f);
bool crawl_fetch_is_aside(const crawl_fetch *f);
/* Hand them over (NULL unless kept); free with crawl_wire_free. */
crawl_wire *crawl_fetch_take_wire(crawl_fetch *f);
void crawl_wire_free(crawl_wire *w);
/* A copy of w (NULL for NULL): a middleware's Response that keeps what went over the
 * wire for the response it replaces. */
crawl_wire *crawl_wire_dup(const crawl_wire *w);

/* Every header field of the response, in arrival order, obs-fold unfolded: *n pairs,
 * each a name and then a value, NUL-terminated one after the other
 * ("Content-Type\0text/html\0Location\0/a\0"); NULL when there is none. Owned by f.
 * Kept for every attempt (at most HTTP_MAX_HEAD bytes). */
const char *crawl_fetch_headers(const crawl_fetch *f, size_t *n);
/* What the response head said: status (-1 before the head), the raw Location of a
 * redirect, the media type (lower case); NULL when absent. */
int crawl_fetch_status(const crawl_fetch *f);
const char *crawl_fetch_location(const crawl_fetch *f);
const char *crawl_fetch_content_type(const crawl_fetch *f);
/* Its charset (lower case; "utf-8" when the type names none), NULL without a type. */
const char *crawl_fetch_encoding(const crawl_fetch *f);

/* Write the report to --output or stdout — text: every record, sorted, and the counters;
 * jsonl: only the summary line, for each record was written as it was made (one line,
 * one write(2): recstream.h) — and finish and close the --trace-events file. todo: URLs
 * that were still waiting; interrupted: the crawl was stopped by a signal (or failed:
 * crawl_fail, a failed record write). Returns 0, or -1 with one line in err saying
 * which write failed and why ("writing --trace-events 'x' failed: No space left on
 * device"). */
int crawl_write_report(crawl *c, size_t todo, const char *transport, const char *selector,
                       bool interrupted, char *err, size_t errlen);

#endif
