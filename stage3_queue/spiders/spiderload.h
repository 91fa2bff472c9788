/* spiderload.h — what crawl-queue's command line checks of its spider flags, before
 * any request (assembly/settings.c): a --spider FILE.lua that does not load, or an
 * --extract whose XPath does not compile, is bad usage. Without the engine's types,
 * for the flags' table.
 */
#ifndef CRAWL_SPIDERLOAD_H
#define CRAWL_SPIDERLOAD_H

#include <stddef.h>

/* Default budget: instructions per callback; default memory cap, MB; default time a
 * callback may run, seconds (its own running time: not its waits in download()). */
#define LUA_SPIDER_BUDGET    300000000LL
#define LUA_SPIDER_MEMORY_MB 256
#define LUA_SPIDER_TIMEOUT   10.0

/* Load path (luaspider.h: lua_spider_load) and keep it for the engine (lua_spider_take).
 * 0, or -1 with one line in err ("FILE:LINE: message"). */
int lua_spider_preload(const char *path, long long budget, size_t memory_mb, double timeout,
                       char *err, size_t errlen);

/* A NAME=XPATH argument of --extract: 0, or -1 with one line in err (no '=', an empty
 * or "url" NAME, an XPath that does not compile). */
int extract_check(const char *arg, char *err, size_t errlen);

#endif
