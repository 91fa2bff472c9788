/* luaspider.h — --spider FILE.lua: the user's spider, in Lua, as the engine's Spider
 * (engine.h). docs/spiders.md is the user's guide; this is the machinery.
 *
 * One Lua state for the crawl, made by lua_newstate with an allocator that counts and
 * caps its memory (--spider-memory), sandboxed: Lua's base library without dofile,
 * loadfile or print (print and log write to the log), load of text chunks only; the
 * string, table, math and utf8 libraries; os.time, os.clock and os.date; no io,
 * debug, package (require) or coroutine; json and the spider's functions (follow,
 * item, download, log). FILE.lua is run once, when loaded: it must define a global
 * function parse.
 *
 * Each response with a 2xx status is given to its callback (the request's callback
 * name, or parse) in a Lua thread of its own (lua_newthread): a callback that calls
 * download(url) yields its thread; the C coroutine that runs it (a frame of our Task)
 * awaits engine_fetch, then resumes the thread with the response — meanwhile the other
 * workers go on. A count hook stops a callback after --spider-budget instructions
 * (counted across its resumes), after --spider-timeout CPU seconds of running, or at
 * SIGINT/SIGTERM (app_interrupted) — a stop nothing can catch: the hook then fires on
 * every instruction, and the sandbox's pcall and xpcall raise it again. Work done in
 * C on the spider's behalf is charged to the budget: XPath's operations (each
 * evaluation bounded, xpath.h), the pattern matcher's steps (luapattern.h), the
 * elements of the libraries' C loops (string.rep, table.sort, ...). Its follow()s and
 * item()s count against --spider-memory while it runs. The crawler's metatables are
 * guarded (__metatable); a spider's tables get no __gc. An error, a stop or the memory
 * cap end the callback: its URL's record gets "spider error: FILE:LINE: message" (a
 * signal's stop: no record, the URL is left to do); the state stays usable for the
 * other callbacks.
 */
#ifndef CRAWL_LUASPIDER_H
#define CRAWL_LUASPIDER_H

#include <stddef.h>

#include "engine.h"
#include "spiderload.h"

typedef struct lua_spider lua_spider;

/* Load path in a new sandboxed state and run it: NULL with one line in err
 * ("FILE:LINE: message", or "FILE: defines no function parse") when it does not load. */
lua_spider *lua_spider_load(const char *path, long long budget, size_t memory_mb, double timeout,
                            char *err, size_t errlen);
void lua_spider_free(lua_spider *s);

/* The Spider of s, for engine_set_spider (it takes s); e: for download(). */
spider lua_spider_spider(lua_spider *s, engine *e);

/* The spider the command line loaded (lua_spider_preload, before any request), for
 * the engine: taken once (NULL if none). */
lua_spider *lua_spider_take(void);

#endif
