/* progress.h — on a terminal, one line on stderr refreshed in place: URLs done, in
 * flight, queued, and the rate. Nothing when stderr is not a terminal, or with -q. */
#ifndef CRAWL_PROGRESS_H
#define CRAWL_PROGRESS_H

#include <stddef.h>

#include "app.h"

typedef struct progress progress;

/* NULL when there is nothing to show (not a terminal, -q). */
progress *progress_start(app *a, size_t (*queued)(const void *ctx), const void *ctx);
/* Clear the line and free. Accepts NULL. */
void progress_stop(progress *p);

#endif
