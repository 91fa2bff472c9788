/* depth.h — the depth spider middleware: Scrapy's DepthMiddleware on stage 3's engine.
 * Every record says "depth" (roots 0, a link one more than its page, a redirect
 * target and a page requisite as deep as the URL they came from, a requisite's own
 * requisites one deeper: requisites.h); with a limit
 * (--max-depth N), the requests a spider makes deeper than N are dropped in
 * process_spider_output — not fetched — and the summary's "dropped_depth" counts the
 * distinct URLs dropped.
 *
 * crawl-queue enables it unless --chapter, and with --max-depth N (its descriptor, in
 * depth.c).
 */
#ifndef CRAWL_DEPTH_H
#define CRAWL_DEPTH_H

#include "engine.h"

/* max_depth: the deepest request kept; -1: no limit. */
spider_middleware depth_middleware(engine *e, int max_depth);

#endif
