/* items.h — --items FILE: the items spiders scrape, one JSON object a line, each
 * written as it is emitted with one write(2) (as --format jsonl writes records): an
 * item pipeline stage, the first, whose process_scraped writes the line and says
 * where it ends (scraped.items_end) for the stages after it.
 *
 * A file that holds items already is never overwritten: it is refused, unless the
 * crawl goes on with it (--resume): then a torn last line (a kill -9 mid-write) is cut
 * and the items are appended. With --state, --resume writes no item twice: the state
 * remembers which items of which URL were written (state.h), and a URL fetched again
 * skips the items its earlier visit wrote.
 */
#ifndef CRAWL_ITEMS_H
#define CRAWL_ITEMS_H

#include <stdbool.h>
#include <stddef.h>

#include "engine.h"

/* The --items stage, writing to path; resume: appending, and with state (the --state
 * file, or NULL) skipping what earlier runs wrote. -1 with one line in err when path
 * holds items and resume is off, or cannot be opened. */
int items_pipeline(app *a, const char *path, bool resume, const char *state, item_pipeline *out,
                   char *err, size_t errlen);

#endif
