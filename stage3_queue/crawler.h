/* crawler.h — crawl-queue's Crawler ("Coordinating Coroutines"): a joinable Queue,
 * max_tasks workers, join. crawler_run runs the whole crawl of a->opt's roots with the
 * Queue and engine that the extension rows make for a's options (registry.h; with no
 * extension, this is the chapter's crawler) and returns 0, or -1 on a fatal error
 * (said in one line). */
#ifndef CRAWL_CRAWLER_H
#define CRAWL_CRAWLER_H

#include <stddef.h>

#include "app.h"
#include "registry.h"

typedef struct crawler crawler;
int crawler_run(app *a, const extension *const *rows, size_t nrows);

#endif
