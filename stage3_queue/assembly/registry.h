/* registry.h — every extension of crawl-queue in one list of the descriptors they
 * declare beside their code (extension.h), and the one place where the crawl's Queue
 * and engine are assembled from it, after Scrapy's DOWNLOADER_MIDDLEWARES,
 * ITEM_PIPELINES and SCHEDULER settings (docs/extensions.md). The order rules are
 * extension.h's; descriptors of one kind with the same order keep their list order.
 */
#ifndef CRAWL_REGISTRY_H
#define CRAWL_REGISTRY_H

#include <stddef.h>

#include "app.h"
#include "cli.h"
#include "extension.h"

/* crawl-queue's extensions. */
extern const extension *const registry[];
extern const size_t registry_size;

/* Make the Queue (*fr) and the engine (*e) of a's run from rows, with a's settings
 * (settings_of). 0, or -1 with one line in err (nothing is left made). */
int registry_assemble(app *a, const extension *const *rows, size_t n, frontier *fr, engine **e,
                      char *err, size_t errlen);

/* The descriptors' own flags, one cli_group each (for the command line's table). */
const cli_group *registry_flag_groups(size_t *n);

#endif
