/* extract.h — --extract NAME=XPATH (repeatable): a spider without code, katana's and
 * colly's simple case. Each fetched HTML page (2xx, text/html or XHTML) gives one item
 * {"url": URL, NAME: the XPath's first string or null, ...}, through the same item
 * path as a Lua spider's item(); links are followed as without a spider.
 */
#ifndef CRAWL_EXTRACT_H
#define CRAWL_EXTRACT_H

#include <stddef.h>

#include "engine.h"

#include "spiderload.h" /* extract_check */

/* The spider of the n NAME=XPATH arguments (already checked; the strings stay the
 * caller's while it lives). */
spider extract_spider(const char *const *args, size_t n);

#endif
