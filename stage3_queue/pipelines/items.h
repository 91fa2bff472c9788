/* items.h — --items FILE: the items spiders scrape, one JSON object a line, each
 * written as it is emitted with one write(2) (as --format jsonl writes records): an
 * item pipeline stage, the first, whose process_scraped writes the line and says
 * where it ends (scraped.items_end) for the stages after it.
 *
 * The file is taken as --output is (the row's out_as_output: one rule, app.c): a plain
 * crawl replaces it (at open, so that a crawl refused by a later check leaves it as it
 * was); a crawl that goes on (--state, --frontier) refuses one that holds data, unless
 * it goes on with it (--resume): then a torn last line (a kill -9 mid-write) is cut
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
 * wrote; else it is replaced (a crawl that goes on was refused before). */
typedef struct items_mode {
    bool resume;
    const char *state;
} items_mode;

/* The --items stage, writing to path. -1 with one line in err when path cannot be
 * opened. */
int items_pipeline(app *a, const char *path, const items_mode *mode, item_pipeline *out, char *err,
                   size_t errlen);

#endif
