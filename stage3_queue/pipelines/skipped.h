/* skipped.h — --skipped FILE: every URL the crawl found and did not schedule, one JSON
 * object a line, as it is skipped: {"url": ..., "reason": ..., "referrer": ...}, the
 * reason one of crawl.h's crawl_skip_name (offsite, excluded, not_included, scheme,
 * depth, max_pages, robots, redirects), the referrer the page that linked to it (null:
 * none known). Each URL once, under the first reason (crawl_skip). An item pipeline
 * stage only in that it lives as long as the crawl: it hears the crawl core's skips.
 *
 * The file is taken as --output and --items are (the row's out_as_output: one rule,
 * app.c's claim_files): a plain crawl replaces it (at open); a crawl that goes on
 * (--state, --frontier) refuses one that holds data ("add --resume to go on with it,
 * or name a new file"); --resume adds to it, and lists each URL once across the runs:
 * at open a torn last line (a kill -9 mid-write) is cut and the URLs listed are read
 * back, and a URL among them (in RFC 3986's normal form) is not listed again, whatever
 * the state had committed when the earlier run stopped. Each run's summary counts its
 * own skips. Each line is one write(2); the first failed write stops the crawl (exit
 * 1), as a failed --items write does.
 */
#ifndef CRAWL_SKIPPED_H
#define CRAWL_SKIPPED_H

#include "engine.h"

/* The stage writing path (resume: add to what it holds). 0, or -1 with one line in
 * err. */
int skipped_pipeline(app *a, const char *path, bool resume, item_pipeline *out, char *err,
                     size_t errlen);

#endif
