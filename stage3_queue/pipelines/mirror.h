/* mirror.h — --mirror DIR, wget -m -k -p's job, as an item pipeline stage (what Scrapy's
 * FilesPipeline is) and a closing step (docs/mirror.md):
 *
 *   open           DIR opened once (made when missing); its manifest,
 *                  DIR/.crawlstages-mirror, read back with --resume or --recrawl (the
 *                  files this mirror wrote, which it may write again), else refused
 *                  when there (DIR holds a mirror: name another, or go on with it)
 *   process_item   each 2xx response's body saved as DIR/NAME (mirror_name.h) through
 *                  mirror_fs.h (never outside DIR), a line added to the manifest; a
 *                  redirect remembered (its links go where it went); a -v line per file
 *   close          every saved page and stylesheet converted (mirror_links.h: a link
 *                  to a saved file made relative, others absolute), then the summary:
 *                  where the mirror is, its files and bytes
 *
 * A second descriptor, a downloader middleware, refuses each URL that has no safe name
 * before it is fetched: the record's exception says why. --mirror turns on --requisites
 * (mirror_requested). A write the disk refuses (ENOSPC, EIO) ends the crawl: one line,
 * exit 1, every file written before it whole.
 */
#ifndef CRAWL_MIRROR_H
#define CRAWL_MIRROR_H

#include <stdbool.h>

#include "engine.h"

/* The manifest's name in DIR. */
#define MIRROR_MANIFEST ".crawlstages-mirror"

/* The stage, on the directory dir; resume: the files of the manifest may be written
 * again. 0, or -1 with one line in err. */
int mirror_pipeline(app *a, const char *dir, bool resume, item_pipeline *out, char *err,
                    size_t errlen);

/* Whether the command line gave --mirror (its descriptor's flag). */
bool mirror_requested(void);

#endif
