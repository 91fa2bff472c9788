/* items.h — --items FILE: the items spiders scrape, one JSON object a line, each
 * written as it is emitted with one write(2) (as --format jsonl writes records): an
 * item pipeline stage, the first, whose process_scraped writes the line and says
 * where it ends (scraped.items_end) for the stages after it.
 *
 * A file that holds items already is never overwritten: it is refused, unless the
 * crawl goes on with it (--resume): then a torn last line (a kill -9 mid-write) is cut
 * and the items are appended. With --state, --resume writes no item twice: the state
 * remembers which items of which URL were written (state.h), and a URL fetched again
 * skips the items its earlier visit wrote, handing the stages after it (--store) each
 * as the file holds it, read back, not as the fetch made it again.
 */
#ifndef CRAWL_ITEMS_H
#define CRAWL_ITEMS_H

#include <stdbool.h>
#include <stddef.h>

#include "engine.h"

/* How a crawl takes an --items file that holds items already, as its --output: resume
 * (--resume) appends, and with state (the --state file, or NULL) skips what earlier runs
 * wrote; else a crawl that goes on (goes_on: --state or --frontier) refuses it, and a
 * plain crawl replaces it. */
typedef struct items_mode {
    bool resume;
    bool goes_on;
    const char *state;
} items_mode;

/* The --items stage, writing to path. -1 with one line in err when path cannot be
 * opened, or holds items that mode does not let it replace. */
int items_pipeline(app *a, const char *path, const items_mode *mode, item_pipeline *out, char *err,
                   size_t errlen);

#endif
