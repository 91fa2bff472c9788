/* progress.h — what crawl-queue tells a person on stderr (not with -q).
 *
 * While it crawls, a progress line: seconds since the start, URLs done and how many of
 * them failed (tally.h: no response), body bytes received, fetches in flight, URLs
 * queued, pages per second, and with --max-pages the share of it done:
 *
 *   12.0 s: 340 done (3 failed), 1.4 MiB, 8 in flight, 97 queued, 28.3 pages/s, 68% of
 *   --max-pages 500
 *
 * On a terminal, the line is refreshed in place every 250 ms (cut to the terminal's
 * width) and erased at the end, where the summary follows. Elsewhere (a file, a pipe,
 * a journal), one line "crawl-queue: <the same>" every --progress-interval SECS
 * (default 60, as Scrapy's LogStats; 0: none), each kept.
 *
 * After the report (app.h's summary hook; not when the crawl failed): three lines,
 *
 *   crawl-queue: 340 pages in 12.1 s (28.1 pages/s), 1468006 bytes received (1.4 MiB)
 *   crawl-queue: by status: 2xx 310, 3xx 12, 4xx 9, 5xx 1, failed 3, ignored 5
 *   crawl-queue: report (jsonl): out.jsonl; --store: crawl.db; --warc: crawl.warc.gz
 *
 * the counts those of the JSONL summary line (its "done", "by_status",
 * "bytes_received"), the outputs every file the command line named (stdout when the
 * report goes there).
 */
#ifndef CRAWL_PROGRESS_H
#define CRAWL_PROGRESS_H

#include <stddef.h>

#include "app.h"

typedef struct progress progress;

/* NULL when there is nothing to show (-q; not a terminal and --progress-interval 0). */
progress *progress_start(app *a, size_t (*queued)(const void *ctx), const void *ctx);
/* On a terminal, clear the line; free. Accepts NULL. */
void progress_stop(progress *p);

/* The summary, on stderr (app_main calls it after the report: a->summary). */
void progress_summary(const app *a);

#endif
