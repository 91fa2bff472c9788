/* luajson.h — json.encode and json.decode for spiders, and the item's JSON text.
 *
 * JSON (RFC 8259) both ways between text and Lua values: an object is a table with
 * string keys, an array a table whose keys are 1..n (n > 0; an empty table is {}),
 * null is json.null (a light userdata), numbers are Lua integers when they are whole
 * and fit, floats otherwise. Encoding refuses what JSON cannot say (a function, NaN, a
 * key that is neither string nor number, a table nested deeper than JSON_MAX_DEPTH: a
 * cycle) with a Lua error; strings are written as report.c writes them (bytes that are
 * not UTF-8 as \u00XX), so a line is always valid JSON.
 */
#ifndef CRAWL_LUAJSON_H
#define CRAWL_LUAJSON_H

#include <lua.h>

#define JSON_MAX_DEPTH 100

/* Push the JSON text of the value at idx (raises a Lua error when it cannot). */
void luajson_encode(lua_State *L, int idx);
/* The global table json: encode, decode, null. */
void luajson_open(lua_State *L);

#endif
