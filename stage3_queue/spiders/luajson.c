/* luajson.c — JSON for spiders (luajson.h): a recursive encoder into a buffer the state
 * allocates and a recursive-descent decoder, both bounded in depth. */
#include "luajson.h"

#include <lauxlib.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- encode ---- */

/* The text being made, in memory from the state's own allocator (so it counts against
 * the spider's memory cap), owned by a userdata whose __gc frees it: an error raised
 * halfway (luaL_error longjmps) leaks nothing. */
typedef struct jbuf {
    lua_State *L;
    char *p;
    size_t n, cap;
} jbuf;

static int jbuf_gc(lua_State *L)
{
    jbuf *b = lua_touserdata(L, 1);
    void *ud;
    lua_Alloc f = lua_getallocf(L, &ud);
    if (b->p)
        f(ud, b->p, b->cap, 0);
    b->p = NULL;
    b->cap = b->n = 0;
    return 0;
}

static void jbuf_add(jbuf *b, const char *s, size_t n)
{
    if (b->cap - b->n < n) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap - b->n < n) {
            if (cap > ((size_t)-1) / 2)
                luaL_error(b->L, "json.encode: text too long");
            cap *= 2;
        }
        void *ud;
        lua_Alloc f = lua_getallocf(b->L, &ud);
        char *p = f(ud, b->p, b->p ? b->cap : 0, cap);
        if (!p)
            luaL_error(b->L, "not enough memory");
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
}

static void jbuf_addstring(jbuf *b, const char *s)
{
    jbuf_add(b, s, strlen(s));
}
static void jbuf_addchar(jbuf *b, char c)
{
    jbuf_add(b, &c, 1);
}

/* The length of a valid UTF-8 sequence at s (n bytes left), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    size_t len;
    unsigned min;
    unsigned cp;
    if (s[0] < 0x80)
        return 1;
    if (s[0] >= 0xc2 && s[0] <= 0xdf)
        len = 2, min = 0x80, cp = s[0] & 0x1f;
    else if (s[0] >= 0xe0 && s[0] <= 0xef)
        len = 3, min = 0x800, cp = s[0] & 0x0f;
    else if (s[0] >= 0xf0 && s[0] <= 0xf4)
        len = 4, min = 0x10000, cp = s[0] & 0x07;
    else
        return 0;
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

static void put_string(jbuf *b, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    jbuf_addchar(b, '"');
    for (size_t i = 0; i < n;) {
        unsigned char c = p[i];
        char esc[8];
        if (c == '"' || c == '\\') {
            jbuf_addchar(b, '\\');
            jbuf_addchar(b, (char)c);
            i++;
        } else if (c < 0x20 || c == 0x7f) {
            const char *named = c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : NULL;
            if (!named) {
                snprintf(esc, sizeof esc, "\\u%04x", c);
                named = esc;
            }
            jbuf_addstring(b, named);
            i++;
        } else {
            size_t len = utf8_len(p + i, n - i);
            if (len == 0) { /* never changed silently (\u00XX would be another text) */
                char why[160];
                snprintf(why, sizeof why,
                         "json: a string is not UTF-8 (byte 0x%02X at %zu of %zu): JSON "
                         "holds text; encode bytes yourself (hex, base64)",
                         c, i + 1, n);
                luaL_error(b->L, "%s", why);
            }
            jbuf_add(b, s + i, len);
            i += len;
        }
    }
    jbuf_addchar(b, '"');
}

/* The table at idx as an array: its length n > 0 and no other key; else -1. */
static lua_Integer array_length(lua_State *L, int idx)
{
    lua_Integer n = (lua_Integer)lua_rawlen(L, idx), keys = 0;
    if (n == 0)
        return -1;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 1 || lua_tointeger(L, -1) > n) {
            lua_pop(L, 1);
            return -1;
        }
        keys++;
    }
    return keys == n ? n : -1;
}

static void encode(lua_State *L, jbuf *b, int idx, int depth);
static void encode_top(lua_State *L, jbuf *b, int depth);

/* One key of an object: its text, and its place in the keys' table. */
typedef struct jkey {
    const char *s;
    size_t len;
    lua_Integer i;
} jkey;

static int key_order(const void *x, const void *y)
{
    const jkey *a = x, *b = y;
    int c = memcmp(a->s, b->s, a->len < b->len ? a->len : b->len);
    return c ? c : (a->len > b->len) - (a->len < b->len);
}

/* The table at idx as an object, its keys sorted (the same table, the same line). */
static void encode_object(lua_State *L, jbuf *b, int idx, int depth)
{
    lua_newtable(L); /* keys: [i] = the key, [-i] = its text */
    int kt = lua_gettop(L);
    lua_Integer n = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        int t = lua_type(L, -1);
        if (t != LUA_TSTRING && t != LUA_TNUMBER)
            luaL_error(L, "json.encode: a key of type %s", luaL_typename(L, -1));
        n++;
        lua_pushvalue(L, -1);
        lua_rawseti(L, kt, n);
        lua_pushvalue(L, -1);
        lua_tolstring(L, -1, NULL); /* the copy becomes a string, not the key */
        lua_rawseti(L, kt, -n);
    }
    jkey *keys = lua_newuserdatauv(L, (size_t)n * sizeof *keys + 1, 0);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_rawgeti(L, kt, -i);
        keys[i - 1].s = lua_tolstring(L, -1, &keys[i - 1].len); /* anchored in kt */
        keys[i - 1].i = i;
        lua_pop(L, 1);
    }
    qsort(keys, (size_t)n, sizeof *keys, key_order);
    jbuf_addchar(b, '{');
    for (lua_Integer i = 0; i < n; i++) {
        if (i > 0)
            jbuf_addchar(b, ',');
        put_string(b, keys[i].s, keys[i].len);
        jbuf_addchar(b, ':');
        lua_rawgeti(L, kt, keys[i].i);
        lua_rawget(L, idx);
        encode_top(L, b, depth + 1);
    }
    jbuf_addchar(b, '}');
    lua_pop(L, 2);
}

/* The value at the top of the stack, encoded and popped. */
static void encode_top(lua_State *L, jbuf *b, int depth)
{
    encode(L, b, lua_gettop(L), depth);
    lua_pop(L, 1);
}

static void encode(lua_State *L, jbuf *b, int idx, int depth)
{
    char num[64];
    switch (lua_type(L, idx)) {
    case LUA_TNIL: jbuf_addstring(b, "null"); return;
    case LUA_TLIGHTUSERDATA:
        if (lua_touserdata(L, idx) == NULL) {
            jbuf_addstring(b, "null");
            return;
        }
        break;
    case LUA_TBOOLEAN: jbuf_addstring(b, lua_toboolean(L, idx) ? "true" : "false"); return;
    case LUA_TNUMBER:
        if (lua_isinteger(L, idx)) {
            snprintf(num, sizeof num, "%lld", (long long)lua_tointeger(L, idx));
        } else {
            double d = lua_tonumber(L, idx);
            if (!isfinite(d))
                luaL_error(L, "json.encode: %s is not a JSON number", d != d ? "NaN" : "inf");
            for (int prec = 15; prec <= 17; prec++) { /* the shortest that reads back */
                snprintf(num, sizeof num, "%.*g", prec, d);
                if (strtod(num, NULL) == d)
                    break;
            }
        }
        jbuf_addstring(b, num);
        return;
    case LUA_TSTRING: {
        size_t n;
        const char *s = lua_tolstring(L, idx, &n);
        put_string(b, s, n);
        return;
    }
    case LUA_TTABLE: {
        if (depth >= JSON_MAX_DEPTH)
            luaL_error(L, "json.encode: tables nested deeper than %d (a cycle?)", JSON_MAX_DEPTH);
        luaL_checkstack(L, 4, "json.encode");
        lua_Integer n = array_length(L, idx);
        if (n > 0) {
            jbuf_addchar(b, '[');
            for (lua_Integer i = 1; i <= n; i++) {
                if (i > 1)
                    jbuf_addchar(b, ',');
                lua_rawgeti(L, idx, i);
                encode_top(L, b, depth + 1);
            }
            jbuf_addchar(b, ']');
            return;
        }
        encode_object(L, b, idx, depth);
        return;
    }
    default: break;
    }
    luaL_error(L, "json.encode: a %s has no JSON form", luaL_typename(L, idx));
}

void luajson_encode(lua_State *L, int idx)
{
    idx = lua_absindex(L, idx);
    jbuf *b = lua_newuserdatauv(L, sizeof *b, 0);
    *b = (jbuf){.L = L};
    if (luaL_newmetatable(L, "crawlstages.jbuf")) {
        lua_pushcfunction(L, jbuf_gc);
        lua_setfield(L, -2, "__gc");
        lua_pushliteral(L, "the crawler's buffer metatable"); /* as luaspider.c's */
        lua_setfield(L, -2, "__metatable");
    }
    lua_setmetatable(L, -2);
    encode(L, b, idx, 0);
    lua_pushlstring(L, b->p ? b->p : "", b->n);
    lua_remove(L, -2); /* the buffer: its __gc frees the text */
}

/* ---- decode ---- */

typedef struct jparse {
    lua_State *L;
    const char *s, *p, *end;
} jparse;

static void perr(jparse *j, const char *what)
{
    luaL_error(j->L, "json.decode: %s at byte %d", what, (int)(j->p - j->s) + 1);
}

static void skip_ws(jparse *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
        j->p++;
}

static int hex4(jparse *j)
{
    int v = 0;
    if (j->end - j->p < 4)
        perr(j, "a short \\u escape");
    for (int i = 0; i < 4; i++) {
        char c = *j->p++;
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= c - '0';
        else if (c >= 'a' && c <= 'f')
            v |= c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            v |= c - 'A' + 10;
        else
            perr(j, "a bad \\u escape");
    }
    return v;
}

static void put_utf8(luaL_Buffer *b, unsigned cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80)
        u[0] = (char)cp, n = 1;
    else if (cp < 0x800)
        u[0] = (char)(0xc0 | cp >> 6), u[1] = (char)(0x80 | (cp & 0x3f)), n = 2;
    else if (cp < 0x10000)
        u[0] = (char)(0xe0 | cp >> 12), u[1] = (char)(0x80 | ((cp >> 6) & 0x3f)),
        u[2] = (char)(0x80 | (cp & 0x3f)), n = 3;
    else
        u[0] = (char)(0xf0 | cp >> 18), u[1] = (char)(0x80 | ((cp >> 12) & 0x3f)),
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3f)), u[3] = (char)(0x80 | (cp & 0x3f)), n = 4;
    luaL_addlstring(b, u, n);
}

/* A string at j->p (after its '"'), pushed. luaL_Buffer: nothing else is pushed
 * meanwhile. */
static void parse_string(jparse *j)
{
    luaL_Buffer b;
    luaL_buffinit(j->L, &b);
    for (;;) {
        const char *run = j->p;
        while (j->p < j->end && *j->p != '"' && *j->p != '\\' && (unsigned char)*j->p >= 0x20)
            j->p++;
        luaL_addlstring(&b, run, (size_t)(j->p - run));
        if (j->p >= j->end)
            perr(j, "an unterminated string");
        char c = *j->p++;
        if (c == '"')
            break;
        if (c != '\\') {
            j->p--;
            perr(j, "a control character in a string");
        }
        if (j->p >= j->end)
            perr(j, "an unterminated string");
        c = *j->p++;
        switch (c) {
        case '"': luaL_addchar(&b, '"'); break;
        case '\\': luaL_addchar(&b, '\\'); break;
        case '/': luaL_addchar(&b, '/'); break;
        case 'b': luaL_addchar(&b, '\b'); break;
        case 'f': luaL_addchar(&b, '\f'); break;
        case 'n': luaL_addchar(&b, '\n'); break;
        case 'r': luaL_addchar(&b, '\r'); break;
        case 't': luaL_addchar(&b, '\t'); break;
        case 'u': {
            unsigned cp = (unsigned)hex4(j);
            if (cp >= 0xd800 && cp <= 0xdbff && j->end - j->p >= 6 && j->p[0] == '\\'
                && j->p[1] == 'u') {
                const char *back = j->p;
                j->p += 2;
                unsigned lo = (unsigned)hex4(j);
                if (lo >= 0xdc00 && lo <= 0xdfff)
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                else
                    j->p = back;
            }
            if (cp >= 0xd800 && cp <= 0xdfff)
                cp = 0xfffd; /* a lone surrogate */
            put_utf8(&b, cp);
            break;
        }
        default: j->p--; perr(j, "a bad escape");
        }
    }
    luaL_pushresult(&b);
}

static void parse_value(jparse *j, int depth);

static void parse_number(jparse *j)
{
    const char *start = j->p;
    if (j->p < j->end && *j->p == '-')
        j->p++;
    while (j->p < j->end
           && ((*j->p >= '0' && *j->p <= '9') || *j->p == '.' || *j->p == 'e' || *j->p == 'E'
               || *j->p == '+' || *j->p == '-'))
        j->p++;
    char num[64];
    size_t n = (size_t)(j->p - start);
    if (n == 0 || n >= sizeof num)
        perr(j, "a bad number");
    memcpy(num, start, n);
    num[n] = '\0';
    if (lua_stringtonumber(j->L, num) != n + 1) {
        j->p = start;
        perr(j, "a bad number");
    }
}

static void expect(jparse *j, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n) != 0)
        perr(j, "an unexpected character");
    j->p += n;
}

static void parse_value(jparse *j, int depth)
{
    lua_State *L = j->L;
    if (depth >= JSON_MAX_DEPTH)
        perr(j, "nesting too deep");
    luaL_checkstack(L, 3, "json.decode");
    skip_ws(j);
    if (j->p >= j->end)
        perr(j, "the end of the text");
    char c = *j->p;
    if (c == '{') {
        j->p++;
        lua_newtable(L);
        skip_ws(j);
        if (j->p < j->end && *j->p == '}') {
            j->p++;
            return;
        }
        for (;;) {
            skip_ws(j);
            if (j->p >= j->end || *j->p != '"')
                perr(j, "an object key that is not a string");
            j->p++;
            parse_string(j);
            skip_ws(j);
            expect(j, ":");
            parse_value(j, depth + 1);
            lua_rawset(L, -3);
            skip_ws(j);
            if (j->p < j->end && *j->p == ',') {
                j->p++;
                continue;
            }
            expect(j, "}");
            return;
        }
    }
    if (c == '[') {
        j->p++;
        lua_newtable(L);
        skip_ws(j);
        if (j->p < j->end && *j->p == ']') {
            j->p++;
            return;
        }
        for (lua_Integer i = 1;; i++) {
            parse_value(j, depth + 1);
            lua_rawseti(L, -2, i);
            skip_ws(j);
            if (j->p < j->end && *j->p == ',') {
                j->p++;
                continue;
            }
            expect(j, "]");
            return;
        }
    }
    if (c == '"') {
        j->p++;
        parse_string(j);
    } else if (c == 't') {
        expect(j, "true");
        lua_pushboolean(L, 1);
    } else if (c == 'f') {
        expect(j, "false");
        lua_pushboolean(L, 0);
    } else if (c == 'n') {
        expect(j, "null");
        lua_pushlightuserdata(L, NULL);
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        parse_number(j);
    } else {
        perr(j, "an unexpected character");
    }
}

static int l_decode(lua_State *L)
{
    size_t n;
    const char *s = luaL_checklstring(L, 1, &n);
    jparse j = {L, s, s, s + n};
    parse_value(&j, 0);
    skip_ws(&j);
    if (j.p != j.end)
        perr(&j, "text after the value");
    return 1;
}

static int l_encode(lua_State *L)
{
    luaL_checkany(L, 1);
    luajson_encode(L, 1);
    return 1;
}

void luajson_open(lua_State *L)
{
    lua_newtable(L);
    lua_pushcfunction(L, l_encode);
    lua_setfield(L, -2, "encode");
    lua_pushcfunction(L, l_decode);
    lua_setfield(L, -2, "decode");
    lua_pushlightuserdata(L, NULL);
    lua_setfield(L, -2, "null");
    lua_setglobal(L, "json");
}
