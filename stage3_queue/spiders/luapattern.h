/* luapattern.h — the sandbox's string.find, string.match, string.gmatch and
 * string.gsub: Lua's pattern language, with a matcher whose work is bounded.
 *
 * Lua's own matcher backtracks in C, where the count hook never fires: a pattern such
 * as ".-.-.-.-b" takes time of the subject's length to the fifth power, and nothing
 * stopped it. This matcher counts steps (an attempt at a pattern position; a subject
 * byte scanned by a repetition, %b or a back-reference): over PATTERN_STEPS in one
 * call it raises "pattern too costly", and every call's steps are charged to the
 * callback's instruction budget (charge), so that a loop of costly calls ends too.
 * Otherwise it behaves as Lua 5.4's (the same results and errors).
 */
#ifndef CRAWL_LUAPATTERN_H
#define CRAWL_LUAPATTERN_H

#include <lua.h>

/* The steps one call may take: about 30 ms of a 2020s core (65 ms unoptimised). */
#define PATTERN_STEPS 5000000

/* Replace the four functions in the global table string; charge(T, n) is called with
 * each call's steps (it may raise). */
void luapattern_open(lua_State *L, void (*charge)(lua_State *T, unsigned long long n));

#endif
