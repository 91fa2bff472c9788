/* skipped.h — --skipped FILE: every URL the crawl found and did not schedule, one JSON
 * object a line, as it is skipped: {"url": ..., "reason": ..., "referrer": ...}, the
 * reason one of crawl.h's crawl_skip_name (offsite, excluded, not_included, scheme,
 * depth, max_pages, robots, redirects), the referrer the page that linked to it (null:
 * none known). Each URL once, under the first reason (crawl_skip). An item pipeline
 * stage only in that it lives as long as the crawl: it hears the crawl core's skips.
 *
 * The file is never replaced: one that holds data is refused ("name a new file"),
 * unless --resume, which adds to it. Each line is one write(2); the first failed write
 * stops the crawl (exit 1), as a failed --items write does.
 */
#ifndef CRAWL_SKIPPED_H
#define CRAWL_SKIPPED_H

#include "engine.h"

/* The stage writing path (resume: add to what it holds). 0, or -1 with one line in
 * err. */
int skipped_pipeline(app *a, const char *path, bool resume, item_pipeline *out, char *err,
                     size_t errlen);

#endif
