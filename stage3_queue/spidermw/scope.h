/* scope.h — the scope spider middleware: which links a crawl follows, as Scrapy's
 * OffsiteMiddleware filters a spider's requests. A request a spider emits is kept when
 * its URL matches one of the --include patterns (regexes as pattern.h takes them;
 * repeatable; a match stopped by a limit is no match);
 * --exclude (repeatable too) is the crawl core's, applied to every URL scheduled. The
 * roots are no spider's output: they are always fetched. Page requisites
 * (--requisites) are what a page needs, not links: --include does not filter them.
 *
 * crawl-queue enables it with --include (its descriptor, below).
 */
#ifndef CRAWL_SCOPE_H
#define CRAWL_SCOPE_H

#include <stddef.h>

#include "engine.h"

/* n patterns, each compiled (the command line has checked them; one that does not
 * compile all the same is -1 with one line in err, never skipped). No patterns: the
 * middleware keeps everything. */
int scope_middleware(const char *const *include, size_t n, spider_middleware *out, char *err,
                     size_t errlen);

#endif
