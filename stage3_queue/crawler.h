/* crawler.h — crawl-queue's Crawler ("Coordinating Coroutines"): a joinable Queue,
 * max_tasks workers, join. crawler_run runs the whole crawl of a->opt's roots with the
 * given engine (its middlewares and pipeline; a plain engine is the chapter's
 * crawler) and returns 0, or -1 on a fatal error (said in one line). */
#ifndef CRAWL_CRAWLER_H
#define CRAWL_CRAWLER_H

#include "app.h"
#include "engine.h"

/* make_engine(a, q): the engine of this run over the crawl's Queue q. */
typedef struct crawler crawler;
int crawler_run(app *a, engine *(*make_engine)(app *a, frontier *q));

#endif
