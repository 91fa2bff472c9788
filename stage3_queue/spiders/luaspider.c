/* luaspider.c — the Lua spider (luaspider.h): its sandboxed state, the spider API, and
 * the C coroutine that runs one callback as a Lua thread (docs/spiders.md, "What
 * happens when a callback calls download"). */
#include "luaspider.h"

#include <lauxlib.h>
#include <lua.h>
#include <limits.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "alloc.h"
#include "links.h"
#include "log.h"
#include "luajson.h"
#include "luapattern.h"
#include "seen.h"
#include "url.h"
#include "xpath.h"
#include "extension.h"

/* The count hook runs every HOOK_EVERY instructions: the budget's granularity. */
#define HOOK_EVERY 1000

/* Why a callback (or FILE.lua's run) was stopped. Once stopped it cannot go on: the
 * hook then fires on every instruction and raises again, and the sandbox's pcall and
 * xpcall raise again what they caught — nothing the spider writes can catch a stop. */
typedef enum { STOP_NONE = 0, STOP_BUDGET, STOP_SIGNAL, STOP_TIMEOUT } stop_kind;

typedef struct stop_state {
    stop_kind kind;
    char msg[320]; /* what is raised, "FILE:LINE: why", for the record */
} stop_state;

struct lua_spider {
    lua_State *L;
    char *path;                 /* FILE.lua, as given: its errors say FILE:LINE */
    size_t used, cap;           /* bytes the state holds, and its cap */
    long long budget;           /* instructions per callback */
    long long load_used;        /* instructions of the file's own run, at load */
    stop_state load_stop;       /* the file's own run stopped */
    long long timeout_ns;       /* --spider-timeout: a callback's running time */
    struct call_frame *running; /* the callback being run now (its thread resumed) */
    engine *e;
    bool all_statuses; /* handle_httpstatus_all = true: 4xx and 5xx reach callbacks too */
};

/* One callback being run: the C coroutine's frame, which the Lua thread's extra space
 * points to (the spider's functions find their callback through it). */
typedef struct call_frame {
    coro co;
    lua_spider *s;
    const spider_response *resp; /* what the callback is given (valid while it runs) */
    spider_outputs *out;         /* where follow(), item() and its error go */
    int resp_ref;                /* the callback's response table (LUA_NOREF: none) */
    int links_ref;               /* the set of its response:links() (LUA_NOREF: none) */
    lua_State *T;                /* the callback's thread */
    int ref;                     /* T's anchor in the registry (LUA_NOREF: none) */
    int nargs;
    long long used;       /* instructions so far, across its resumes */
    bool over_memory;     /* it failed for want of memory: collect once it is gone */
    coro *wait;           /* what download() asked the coroutine to await */
    char *wait_url;       /* the URL it downloads */
    response *got;        /* what it got: a response... */
    char *got_error;      /* ...or an error */
    char *error;          /* the callback's error, for the record */
    xpath_doc *doc;       /* the last response parsed for xpath, kept for the next */
    int doc_ref;          /* that response table, kept alive while cached */
    stop_state stop;      /* the callback was stopped (the budget, a signal) */
    size_t held;          /* bytes of its requests and items, counted in the state's */
    long long ran_ns;     /* its CPU time, over its resumes before this one */
    long long resumed_ns; /* the thread's CPU time when this resume began */
} call_frame;

static call_frame *frame_of(lua_State *T)
{
    return *(call_frame **)lua_getextraspace(T);
}

static call_frame *need_frame(lua_State *T, const char *fn)
{
    call_frame *f = frame_of(T);
    if (!f)
        luaL_error(T, "%s() is for callbacks (not while FILE.lua is loaded)", fn);
    return f;
}

/* ---- time: a callback's running time, capped (--spider-timeout) ---- */

/* The loop thread's CPU time: what the callback itself spent, not the time it waited
 * for a core on a loaded machine (every callback runs on this thread). */
static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Whether f, running, has run longer than the spider's timeout, over all its resumes. */
static bool over_time(const call_frame *f)
{
    return f->s->timeout_ns > 0 && f->ran_ns + (now_ns() - f->resumed_ns) > f->s->timeout_ns;
}

static void count_hook(lua_State *T, lua_Debug *ar);

/* ---- memory: every byte of the state counted, and capped ---- */

static void *spider_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    lua_spider *s = ud;
    size_t old = ptr ? osize : 0;
    if (nsize == 0) {
        free(ptr);
        s->used -= old;
        return NULL;
    }
    if (nsize > old && s->used - old + nsize > s->cap)
        return NULL; /* Lua collects, tries again, then raises "not enough memory" */
    /* A big block is where one instruction does much work in C (a concatenation, a
     * string.rep, json.encode): past its time, or after SIGINT or SIGTERM, the callback
     * is hooked on every instruction, so that the next one stops it (count_hook) */
    if (nsize >= 4096 && s->running && s->running->stop.kind == STOP_NONE
        && (app_interrupted || over_time(s->running)))
        lua_sethook(s->running->T, count_hook, LUA_MASKCOUNT, 1);
    void *p = realloc(ptr, nsize);
    if (p)
        s->used = s->used - old + nsize;
    return p;
}

static int on_panic(lua_State *L)
{
    const char *msg = lua_tostring(L, -1);
    fprintf(stderr, "crawl-queue: the spider's Lua state failed outside a callback: %s\n",
            msg ? msg : "(no message)");
    abort();
}

/* ---- the budget: a count hook ---- */

static lua_spider *spider_of(lua_State *T)
{
    lua_getfield(T, LUA_REGISTRYINDEX, "crawlstages.spider");
    lua_spider *s = lua_touserdata(T, -1);
    lua_pop(T, 1);
    return s;
}

/* The stop of what runs on T: its callback's, or (no frame) the file's own run. */
static stop_state *stop_of(lua_State *T)
{
    call_frame *f = frame_of(T);
    if (f)
        return &f->stop;
    lua_spider *s = spider_of(T);
    return s ? &s->load_stop : NULL;
}

/* Raise T's stop (again): its message, whatever was being done. */
static int raise_stop(lua_State *T, const stop_state *st)
{
    lua_pushstring(T, st->msg);
    return lua_error(T);
}

/* Stop what runs on T for good: the message, and the hook on every instruction from
 * now on (as redis does for a busy script), so that no Lua code runs any more. */
static void stop(lua_State *T, stop_state *st, stop_kind kind, lua_Debug *ar, const char *why)
{
    lua_getinfo(T, "Sl", ar);
    st->kind = kind;
    if (ar->currentline > 0)
        snprintf(st->msg, sizeof st->msg, "%s:%d: %s", ar->short_src, ar->currentline, why);
    else
        snprintf(st->msg, sizeof st->msg, "%s", why);
    lua_sethook(T, count_hook, LUA_MASKCOUNT, 1);
}

static void stop_budget(lua_State *T, const lua_spider *s, stop_state *st, lua_Debug *ar)
{
    char why[128];
    snprintf(why, sizeof why, "instruction budget exhausted (%lld instructions: --spider-budget)",
             s->budget);
    stop(T, st, STOP_BUDGET, ar, why);
}

static void stop_timeout(lua_State *T, const lua_spider *s, stop_state *st, lua_Debug *ar)
{
    char why[128];
    snprintf(why, sizeof why, "callback over its time (%g s of running: --spider-timeout)",
             (double)s->timeout_ns / 1e9);
    stop(T, st, STOP_TIMEOUT, ar, why);
}

static void count_hook(lua_State *T, lua_Debug *ar)
{
    call_frame *f = frame_of(T);
    lua_spider *s = f ? f->s : spider_of(T);
    long long *used = f ? &f->used : &s->load_used;
    stop_state *st = f ? &f->stop : &s->load_stop;
    if (st->kind == STOP_NONE && app_interrupted) {
        /* SIGINT or SIGTERM (app.h): the crawl is stopping, this callback at once */
        stop(T, st, STOP_SIGNAL, ar, "interrupted (SIGINT or SIGTERM)");
    } else if (st->kind == STOP_NONE && f && over_time(f)) {
        stop_timeout(T, s, st, ar);
    } else if (st->kind == STOP_NONE) {
        *used += HOOK_EVERY;
        if (*used <= s->budget)
            return;
        stop_budget(T, s, st, ar);
    }
    raise_stop(T, st);
}

/* Work done in C for what runs on T (XPath's operations, a pattern's steps), counted
 * against its budget as that many instructions: over the budget, it stops as in the
 * hook. */
static void charge(lua_State *T, unsigned long long n)
{
    call_frame *f = frame_of(T);
    lua_spider *s = f ? f->s : spider_of(T);
    long long *used = f ? &f->used : &s->load_used;
    stop_state *st = f ? &f->stop : &s->load_stop;
    *used += n > (unsigned long long)LLONG_MAX / 2 ? LLONG_MAX / 2 : (long long)n;
    bool late = f && over_time(f);
    if (st->kind == STOP_NONE && (*used > s->budget || app_interrupted || late)) {
        lua_Debug ar;
        if (!lua_getstack(T, 1, &ar) && !lua_getstack(T, 0, &ar))
            return;
        if (app_interrupted)
            stop(T, st, STOP_SIGNAL, &ar, "interrupted (SIGINT or SIGTERM)");
        else if (late)
            stop_timeout(T, s, st, &ar);
        else
            stop_budget(T, s, st, &ar);
    }
    if (st->kind != STOP_NONE)
        raise_stop(T, st);
}

/* ---- the sandbox ---- */

/* print and log: one line on the log (stderr), with where it was called. */
static int l_log(lua_State *T)
{
    int n = lua_gettop(T);
    luaL_Buffer b;
    luaL_where(T, 1); /* at n + 1, below the buffer, while it is used */
    luaL_buffinit(T, &b);
    for (int i = 1; i <= n; i++) {
        if (i > 1)
            luaL_addchar(&b, '\t');
        luaL_tolstring(T, i, NULL);
        luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    log_warn("spider: %s%s", lua_tostring(T, n + 1), lua_tostring(T, -1));
    return 0;
}

/* setmetatable without __gc: a finalizer runs with no hook (no budget) whenever the
 * collector chooses, even outside any callback, so a spider gets none. */
static int l_setmetatable(lua_State *T)
{
    if (lua_type(T, 2) == LUA_TTABLE) {
        lua_pushliteral(T, "__gc");
        bool gc = lua_rawget(T, 2) != LUA_TNIL;
        lua_pop(T, 1);
        if (gc)
            return luaL_error(T, "setmetatable: a spider's tables get no __gc");
    }
    lua_settop(T, 2);
    lua_pushvalue(T, lua_upvalueindex(1));
    lua_insert(T, 1);
    lua_call(T, 2, 1);
    return 1;
}

/* pcall and xpcall as Lua's own (luaB_pcall, luaB_xpcall: yieldable, so that a
 * callback can pcall download), but a stopped callback's error is raised again: the
 * budget cannot be caught. */
static int finish_pcall(lua_State *T, int status, lua_KContext extra)
{
    if (status != LUA_OK && status != LUA_YIELD) {
        const stop_state *st = stop_of(T);
        if (st && st->kind != STOP_NONE)
            return raise_stop(T, st);
        lua_pushboolean(T, 0);
        lua_pushvalue(T, -2);
        return 2;
    }
    return lua_gettop(T) - (int)extra;
}

static int l_pcall(lua_State *T)
{
    luaL_checkany(T, 1);
    lua_pushboolean(T, 1);
    lua_insert(T, 1);
    int status = lua_pcallk(T, lua_gettop(T) - 2, LUA_MULTRET, 0, 0, finish_pcall);
    return finish_pcall(T, status, 0);
}

/* xpcall's message handler, around the spider's (upvalue 1). A stop is raised from the
 * count hook, where Lua runs no hook (a hook is not hooked): the spider's handler would
 * run there unbudgeted, so a stopped callback's handler is not called at all. And the
 * spider's handler runs protected: an error in it is the result, where Lua would call
 * the handler again for its own error, about 200 C calls deep for each xpcall. */
static int l_xpcall_handler(lua_State *T)
{
    const stop_state *st = stop_of(T);
    if (st && st->kind != STOP_NONE)
        return 1; /* the error as it is (finish_pcall raises the stop) */
    lua_pushvalue(T, lua_upvalueindex(1));
    lua_insert(T, 1);
    lua_pcall(T, lua_gettop(T) - 1, 1, 0);
    return 1;
}

static int l_xpcall(lua_State *T)
{
    int n = lua_gettop(T);
    luaL_checktype(T, 2, LUA_TFUNCTION);
    lua_pushvalue(T, 2);
    lua_pushcclosure(T, l_xpcall_handler, 1);
    lua_replace(T, 2);
    lua_pushboolean(T, 1);
    lua_pushvalue(T, 1);
    lua_rotate(T, 3, 2);
    int status = lua_pcallk(T, n - 2, LUA_MULTRET, 2, 2, finish_pcall);
    return finish_pcall(T, status, 2);
}

/* load with text chunks only (a binary chunk could break the sandbox). */
static int l_load(lua_State *T)
{
    lua_settop(T, 4);
    lua_pushliteral(T, "t");
    lua_replace(T, 3);
    lua_pushvalue(T, lua_upvalueindex(1));
    lua_insert(T, 1);
    lua_call(T, 4, LUA_MULTRET);
    return lua_gettop(T);
}

/* Every metatable a spider can reach is the crawler's: getmetatable gives what (a
 * string), setmetatable fails. Else a spider could set __gc on the response's
 * metatable — every later response a finalizer, run by the collector with no hook —
 * or __index on the strings', for every callback after it. */
static void guard_metatable(lua_State *L, const char *what)
{
    lua_pushfstring(L, "the crawler's %s metatable", what);
    lua_setfield(L, -2, "__metatable");
}

/* ---- C loops of the string and table libraries, charged before they run ---- */

/* a * b, or ULLONG_MAX when it overflows */
static unsigned long long times(unsigned long long a, unsigned long long b)
{
    return b && a > ULLONG_MAX / b ? ULLONG_MAX : a * b;
}

/* The length of the range [i, j] of Lua integers (0 when empty). */
static unsigned long long span(lua_Integer i, lua_Integer j)
{
    return j < i ? 0 : (unsigned long long)((lua_Unsigned)j - (lua_Unsigned)i) + 1;
}

/* Call the library's own function (upvalue 1) with the arguments. */
static int call_own(lua_State *T)
{
    lua_pushvalue(T, lua_upvalueindex(1));
    lua_insert(T, 1);
    lua_call(T, lua_gettop(T) - 1, LUA_MULTRET);
    return lua_gettop(T);
}

/* string.rep(s, n [, sep]): n copies (string.rep("", 2^62) loops 2^62 times in C),
 * a byte copied costing 1/64 of an instruction. */
static int l_rep(lua_State *T)
{
    size_t l, lsep;
    luaL_checklstring(T, 1, &l);
    lua_Integer n = luaL_checkinteger(T, 2);
    luaL_optlstring(T, 3, "", &lsep);
    if (n > 0)
        charge(T, (unsigned long long)n + times((unsigned long long)n, l + lsep) / 64);
    return call_own(T);
}

/* table.move(a1, f, e, t [, a2]): e - f + 1 elements, each an instruction. */
static int l_move(lua_State *T)
{
    lua_Integer f = luaL_checkinteger(T, 2), e = luaL_checkinteger(T, 3);
    charge(T, span(f, e));
    return call_own(T);
}

/* table.sort(t [, comp]): n log n comparisons. */
static int l_sort(lua_State *T)
{
    luaL_checktype(T, 1, LUA_TTABLE);
    lua_Integer n = luaL_len(T, 1);
    unsigned long long log = 1;
    while (n > 0 && (1ULL << log) < (unsigned long long)n && log < 63)
        log++;
    charge(T, n > 1 ? times((unsigned long long)n, log) : 0);
    return call_own(T);
}

/* table.concat(t [, sep [, i [, j]]]): j - i + 1 elements. */
static int l_concat(lua_State *T)
{
    luaL_checktype(T, 1, LUA_TTABLE);
    lua_Integer i = luaL_optinteger(T, 3, 1);
    lua_Integer j = lua_isnoneornil(T, 4) ? luaL_len(T, 1) : luaL_checkinteger(T, 4);
    charge(T, span(i, j));
    return call_own(T);
}

/* table.insert(t, pos, v) and table.remove(t, pos): the elements they shift. */
static int l_shift(lua_State *T)
{
    bool insert = lua_toboolean(T, lua_upvalueindex(2));
    if (lua_gettop(T) >= (insert ? 3 : 2)) {
        luaL_checktype(T, 1, LUA_TTABLE);
        charge(T, span(luaL_checkinteger(T, 2), luaL_len(T, 1)));
    }
    return call_own(T);
}

/* Replace lib.name (lib at the top of L) with fn around it. */
static void wrap(lua_State *L, const char *name, lua_CFunction fn, int extra)
{
    lua_getfield(L, -1, name);
    if (extra >= 0) {
        lua_pushboolean(L, extra);
        lua_pushcclosure(L, fn, 2);
    } else {
        lua_pushcclosure(L, fn, 1);
    }
    lua_setfield(L, -2, name);
}

static void charge_loops(lua_State *L)
{
    lua_getglobal(L, "string");
    wrap(L, "rep", l_rep, -1);
    lua_pop(L, 1);
    lua_getglobal(L, "table");
    wrap(L, "move", l_move, -1);
    wrap(L, "sort", l_sort, -1);
    wrap(L, "concat", l_concat, -1);
    wrap(L, "insert", l_shift, 1);
    wrap(L, "remove", l_shift, 0);
    lua_pop(L, 1);
}

static void open_lib(lua_State *L, const char *name, lua_CFunction open)
{
    luaL_requiref(L, name, open, 1);
    lua_pop(L, 1);
}

static int l_follow(lua_State *T);
static int l_item(lua_State *T);
static int l_download(lua_State *T);
static void open_response(lua_State *L);

static int sandbox(lua_State *L)
{
    open_lib(L, LUA_GNAME, luaopen_base);
    open_lib(L, LUA_STRLIBNAME, luaopen_string);
    luapattern_open(L, charge); /* find, match, gmatch, gsub: bounded */
    lua_pushliteral(L, "");
    lua_getmetatable(L, -1); /* the strings' */
    guard_metatable(L, "string");
    lua_pop(L, 2);
    open_lib(L, LUA_TABLIBNAME, luaopen_table);
    charge_loops(L);
    open_lib(L, LUA_MATHLIBNAME, luaopen_math);
    open_lib(L, LUA_UTF8LIBNAME, luaopen_utf8);
    /* os: its clock and calendar only */
    luaL_requiref(L, LUA_OSLIBNAME, luaopen_os, 0);
    lua_newtable(L);
    static const char *const keep[] = {"time", "clock", "date"};
    for (size_t i = 0; i < 3; i++) {
        lua_getfield(L, -2, keep[i]);
        lua_setfield(L, -2, keep[i]);
    }
    lua_setglobal(L, "os");
    lua_pop(L, 1);
    lua_pushnil(L);
    lua_setfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE); /* nothing to reach it through */
    static const char *const drop[] = {"dofile", "loadfile"};
    for (size_t i = 0; i < 2; i++) {
        lua_pushnil(L);
        lua_setglobal(L, drop[i]);
    }
    lua_getglobal(L, "load");
    lua_pushcclosure(L, l_load, 1);
    lua_setglobal(L, "load");
    lua_getglobal(L, "setmetatable");
    lua_pushcclosure(L, l_setmetatable, 1);
    lua_setglobal(L, "setmetatable");
    lua_pushcfunction(L, l_pcall);
    lua_setglobal(L, "pcall");
    lua_pushcfunction(L, l_xpcall);
    lua_setglobal(L, "xpcall");
    lua_pushcfunction(L, l_log);
    lua_setglobal(L, "print");
    lua_pushcfunction(L, l_log);
    lua_setglobal(L, "log");
    lua_pushcfunction(L, l_follow);
    lua_setglobal(L, "follow");
    lua_pushcfunction(L, l_item);
    lua_setglobal(L, "item");
    lua_pushcfunction(L, l_download);
    lua_setglobal(L, "download");
    luajson_open(L);
    open_response(L);
    return 0;
}

/* Run FILE.lua (its chunk at the top of L), then check it defined parse. */
static int run_file(lua_State *L)
{
    lua_call(L, 0, 0);
    lua_getglobal(L, "parse");
    lua_pushboolean(L, lua_isfunction(L, -1));
    return 1;
}

lua_spider *lua_spider_load(const char *path, long long budget, size_t memory_mb, double timeout,
                            char *err, size_t errlen)
{
    lua_spider *s = xcalloc(1, sizeof *s);
    s->path = xstrdup(path);
    s->cap = memory_mb * 1024 * 1024;
    s->budget = budget;
    s->timeout_ns = (long long)(timeout * 1e9);
    s->L = lua_newstate(spider_alloc, s);
    if (!s->L) {
        snprintf(err, errlen, "%s: no memory for a Lua state", path);
        lua_spider_free(s);
        return NULL;
    }
    lua_State *L = s->L;
    *(call_frame **)lua_getextraspace(L) = NULL;
    lua_atpanic(L, on_panic);
    lua_pushcfunction(L, sandbox);
    int rc = lua_pcall(L, 0, 0, 0);
    if (rc == LUA_OK) {
        lua_pushlightuserdata(L, s);
        lua_setfield(L, LUA_REGISTRYINDEX, "crawlstages.spider");
        lua_sethook(L, count_hook, LUA_MASKCOUNT, HOOK_EVERY);
        lua_pushcfunction(L, run_file);
        rc = luaL_loadfilex(L, path, "t"); /* chunkname "@FILE": errors say FILE:LINE */
        if (rc == LUA_OK)
            rc = lua_pcall(L, 1, 1, 0);
        else
            lua_remove(L, -2);
        lua_sethook(L, NULL, 0, 0);
    }
    if (rc != LUA_OK) {
        const char *msg = s->load_stop.kind != STOP_NONE ? s->load_stop.msg : lua_tostring(L, -1);
        /* Lua's messages name the file already ("FILE:LINE: ..."), but for a file it
         * cannot open ("cannot open FILE") */
        if (rc == LUA_ERRMEM && s->load_stop.kind == STOP_NONE)
            snprintf(err, errlen, "%s: over its memory cap (%zu MB) while loading", path,
                     memory_mb);
        else
            snprintf(err, errlen, "%s", msg ? msg : "error object is not a string");
        lua_spider_free(s);
        return NULL;
    }
    if (!lua_toboolean(L, -1)) {
        snprintf(err, errlen, "%s: defines no function parse (function parse(response) ... end)",
                 path);
        lua_spider_free(s);
        return NULL;
    }
    lua_settop(L, 0);
    /* Scrapy's spider attribute: every error response reaches the callbacks too (read
     * raw: no metamethod of the globals runs, outside the budget's hook) */
    lua_pushglobaltable(L);
    lua_pushliteral(L, "handle_httpstatus_all");
    s->all_statuses = lua_rawget(L, -2) != LUA_TNIL && lua_toboolean(L, -1);
    lua_settop(L, 0);
    return s;
}

void lua_spider_free(lua_spider *s)
{
    if (!s)
        return;
    if (s->L)
        lua_close(s->L);
    free(s->path);
    free(s);
}

/* Kept in a static: reachable until taken (a crawl refused after the command line
 * leaves it to the end of the process). */
static lua_spider *kept;

int lua_spider_preload(const char *path, long long budget, size_t memory_mb, double timeout,
                       char *err, size_t errlen)
{
    lua_spider *s = lua_spider_load(path, budget, memory_mb, timeout, err, errlen);
    if (!s)
        return -1;
    lua_spider_free(kept);
    kept = s;
    return 0;
}

lua_spider *lua_spider_take(void)
{
    lua_spider *s = kept;
    kept = NULL;
    return s;
}

/* ---- the response object ---- */

#define RESPONSE_MT "crawlstages.response"

/* The charset parameter of a Content-Type (copied to buf), or NULL. */
static const char *charset_of(const char *ct, char *buf, size_t n)
{
    const char *p = ct ? strcasestr(ct, "charset=") : NULL;
    if (!p)
        return NULL;
    p += 8;
    if (*p == '"')
        p++;
    size_t k = 0;
    while (p[k] && p[k] != '"' && p[k] != ';' && p[k] != ' ' && k + 1 < n) {
        buf[k] = p[k];
        k++;
    }
    buf[k] = '\0';
    return k ? buf : NULL;
}

/* Push r's headers as a table: names lower-cased, repeated fields joined with ", ". */
static void push_headers(lua_State *T, const response *r)
{
    luaL_checkstack(T, 4, "response");
    lua_createtable(T, 0, (int)r->nheaders);
    for (size_t i = 0; i < r->nheaders; i++) {
        char name[128];
        size_t k = 0;
        for (; r->headers[i].name[k] && k + 1 < sizeof name; k++)
            name[k] = (char)((r->headers[i].name[k] >= 'A' && r->headers[i].name[k] <= 'Z')
                                 ? r->headers[i].name[k] + 32
                                 : r->headers[i].name[k]);
        name[k] = '\0';
        if (lua_getfield(T, -1, name) == LUA_TSTRING) {
            lua_pushliteral(T, ", ");
            lua_pushstring(T, r->headers[i].value);
            lua_concat(T, 3);
        } else {
            lua_pop(T, 1);
            lua_pushstring(T, r->headers[i].value);
        }
        lua_setfield(T, -2, name);
    }
}

/* Push r as a response table: url, status, headers, body, depth, referrer; its methods
 * through RESPONSE_MT. lazy: the callback's own response, whose headers and body are
 * made only if the callback reads them (l_index): a spider that only follows links
 * copies no body. */
static void push_response(lua_State *T, const response *r, int depth, const char *referrer,
                          bool lazy)
{
    luaL_checkstack(T, 6, "response");
    lua_createtable(T, 0, 6);
    lua_pushstring(T, r->url);
    lua_setfield(T, -2, "url");
    lua_pushinteger(T, r->status);
    lua_setfield(T, -2, "status");
    if (!lazy) {
        push_headers(T, r);
        lua_setfield(T, -2, "headers");
        lua_pushlstring(T, r->body ? r->body : "", r->body ? r->body_len : 0);
        lua_setfield(T, -2, "body");
    }
    lua_pushinteger(T, depth);
    lua_setfield(T, -2, "depth");
    if (referrer) {
        lua_pushstring(T, referrer);
        lua_setfield(T, -2, "referrer");
    }
    luaL_setmetatable(T, RESPONSE_MT);
}

/* Whether the table at idx is the callback's own response (f's, while it runs). */
static bool is_own(lua_State *T, call_frame *f, int idx)
{
    if (!f || f->resp_ref == LUA_NOREF)
        return false;
    lua_rawgeti(T, LUA_REGISTRYINDEX, f->resp_ref);
    bool same = lua_rawequal(T, -1, idx);
    lua_pop(T, 1);
    return same;
}

/* The response's __index: its methods, then (the callback's own response) its body and
 * headers, made on first use and kept in the table. */
static int l_index(lua_State *T)
{
    lua_pushvalue(T, 2);
    if (lua_rawget(T, lua_upvalueindex(1)) != LUA_TNIL)
        return 1;
    const char *k = lua_tostring(T, 2);
    call_frame *f = frame_of(T);
    if (!k || !is_own(T, f, 1))
        return 0;
    const response *r = f->resp->response;
    if (strcmp(k, "body") == 0)
        lua_pushlstring(T, r->body ? r->body : "", r->body ? r->body_len : 0);
    else if (strcmp(k, "headers") == 0)
        push_headers(T, r);
    else
        return 0;
    lua_pushvalue(T, 2);
    lua_pushvalue(T, -2);
    lua_rawset(T, 1);
    return 1;
}

/* The response table's url, body and Content-Type charset. */
typedef struct resp_view {
    const char *url, *body, *content_type;
    size_t body_len;
    char charset[64];
} resp_view;

static void view_of(lua_State *T, resp_view *v)
{
    luaL_checktype(T, 1, LUA_TTABLE);
    call_frame *f = frame_of(T);
    if (is_own(T, f, 1)) { /* no copy of its body */
        const response *r = f->resp->response;
        v->url = r->url;
        v->body = r->body ? r->body : "";
        v->body_len = r->body ? r->body_len : 0;
        v->content_type = response_header(r, "Content-Type");
        return;
    }
    lua_getfield(T, 1, "url");
    v->url = luaL_checkstring(T, -1);
    lua_getfield(T, 1, "body");
    v->body = lua_tolstring(T, -1, &v->body_len);
    if (!v->body)
        v->body = "", v->body_len = 0;
    lua_getfield(T, 1, "headers");
    v->content_type = NULL;
    if (lua_istable(T, -1) && lua_getfield(T, -1, "content-type") == LUA_TSTRING)
        v->content_type = lua_tostring(T, -1);
    /* the strings stay on the stack (referenced) until the function returns */
}

/* The document of the response at 1, parsed once per callback for xpath. */
static xpath_doc *doc_of(lua_State *T, call_frame *f)
{
    resp_view v;
    view_of(T, &v);
    if (f && f->doc) {
        lua_rawgeti(T, LUA_REGISTRYINDEX, f->doc_ref);
        bool same = lua_rawequal(T, -1, 1);
        lua_pop(T, 1);
        if (same)
            return f->doc;
    }
    xpath_doc *d = xpath_parse(v.body, v.body_len,
                               charset_of(v.content_type, v.charset, sizeof v.charset), v.url);
    if (!f)
        return d;
    xpath_doc_free(f->doc);
    luaL_unref(T, LUA_REGISTRYINDEX, f->doc_ref);
    f->doc = d;
    lua_pushvalue(T, 1);
    f->doc_ref = luaL_ref(T, LUA_REGISTRYINDEX);
    return d;
}

/* Collected strings: pushed into a Lua array once libxml2 is done (a Lua error must
 * never jump over libxml2's frames). */
typedef struct strs {
    char **v;
    size_t n, cap;
    seen_set *distinct; /* NULL: keep duplicates */
} strs;

static void strs_add(strs *a, const char *s, size_t len)
{
    if (a->distinct && !seen_add(a->distinct, s))
        return;
    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 16;
        a->v = xreallocarray(a->v, a->cap, sizeof *a->v);
    }
    char *c = xmalloc(len + 1);
    memcpy(c, s, len);
    c[len] = '\0';
    a->v[a->n++] = c;
}

static int strs_fn(void *ctx, const char *s, size_t len)
{
    strs_add(ctx, s, len);
    return 0;
}

static void strs_link(void *ctx, const char *url)
{
    strs_add(ctx, url, strlen(url));
}

static void strs_free(strs *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->v[i]);
    free(a->v);
    seen_free(a->distinct);
    memset(a, 0, sizeof *a);
}

/* Push a as an array and free it (an error while pushing: the strings are freed by
 * the userdata's __gc — they are moved into Lua strings one at a time). */
static void push_strs(lua_State *T, strs *a)
{
    strs copy = *a;
    memset(a, 0, sizeof *a);
    lua_createtable(T, (int)copy.n, 0);
    for (size_t i = 0; i < copy.n; i++) {
        lua_pushstring(T, copy.v[i]);
        lua_rawseti(T, -2, (lua_Integer)i + 1);
    }
    strs_free(&copy);
}

/* response:xpath(expr) -> {string, ...} */
static int l_xpath(lua_State *T)
{
    const char *expr = luaL_checkstring(T, 2);
    call_frame *f = frame_of(T);
    xpath_doc *d = doc_of(T, f);
    strs a = {0};
    char err[512];
    int rc = xpath_eval(d, expr, strs_fn, &a, err, sizeof err);
    unsigned long ops = xpath_ops(d);
    if (!f)
        xpath_doc_free(d);
    if (rc < 0) {
        strs_free(&a);
        charge(T, ops); /* libxml2's operations, as instructions */
        return luaL_error(T, "xpath: %s", err);
    }
    push_strs(T, &a);
    charge(T, ops); /* (after: a stop leaves nothing allocated outside Lua) */
    return 1;
}

/* response:links() -> the links the crawler's link parser finds, absolute, distinct, in
 * page order (an empty array for a page of a type it does not parse). */
static int l_links(lua_State *T)
{
    call_frame *f = frame_of(T);
    if (is_own(T, f, 1)) {
        /* the callback's own response: the crawler's parse of it, done already; the
         * links also go in a set, so that follow() knows them (absolute already) */
        lua_createtable(T, (int)f->resp->nlinks, 0);
        lua_createtable(T, 0, (int)f->resp->nlinks);
        for (size_t i = 0; i < f->resp->nlinks; i++) {
            lua_pushstring(T, f->resp->links[i].url);
            lua_pushvalue(T, -1);
            lua_rawseti(T, -4, (lua_Integer)i + 1);
            lua_pushboolean(T, 1);
            lua_rawset(T, -3);
        }
        luaL_unref(T, LUA_REGISTRYINDEX, f->links_ref);
        f->links_ref = luaL_ref(T, LUA_REGISTRYINDEX);
        return 1;
    }
    resp_view v;
    view_of(T, &v);
    strs a = {.distinct = seen_new()};
    char media[64] = "text/html";
    if (v.content_type) {
        size_t k = 0;
        while (v.content_type[k] && v.content_type[k] != ';' && v.content_type[k] != ' '
               && k + 1 < sizeof media) {
            char c = v.content_type[k];
            media[k++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
        }
        media[k] = '\0';
    }
    if (links_wanted(media)) {
        links_parser *lp = links_new(v.url, charset_of(v.content_type, v.charset, sizeof v.charset),
                                     strcmp(media, "application/xml") == 0, strs_link, &a);
        links_feed(lp, v.body, v.body_len);
        links_finish(lp);
        links_free(lp);
    }
    push_strs(T, &a);
    return 1;
}

/* response:urljoin(u) */
static int l_urljoin(lua_State *T)
{
    luaL_checktype(T, 1, LUA_TTABLE);
    lua_getfield(T, 1, "url");
    const char *base = luaL_checkstring(T, -1);
    char *u = url_resolve(base, luaL_checkstring(T, 2));
    if (!u)
        return luaL_error(T, "urljoin: '%s' does not resolve against %s", lua_tostring(T, 2), base);
    lua_pushstring(T, u);
    free(u);
    return 1;
}

static void open_response(lua_State *L)
{
    luaL_newmetatable(L, RESPONSE_MT);
    lua_createtable(L, 0, 3);
    lua_pushcfunction(L, l_xpath);
    lua_setfield(L, -2, "xpath");
    lua_pushcfunction(L, l_links);
    lua_setfield(L, -2, "links");
    lua_pushcfunction(L, l_urljoin);
    lua_setfield(L, -2, "urljoin");
    lua_pushcclosure(L, l_index, 1);
    lua_setfield(L, -2, "__index");
    guard_metatable(L, "response");
    lua_pop(L, 1);
}

/* ---- follow, item, download ---- */

/* A URL of the callback's page, resolved against it: http or https, or an error. */
static char *resolve(lua_State *T, call_frame *f, const char *fn, const char *u)
{
    char *abs = url_resolve(f->resp->response->url, u);
    if (!abs || (strncmp(abs, "http://", 7) != 0 && strncmp(abs, "https://", 8) != 0)) {
        free(abs);
        return NULL;
    }
    (void)T, (void)fn;
    return abs;
}

/* What a callback asks the crawler to hold — its follow()s and item()s, kept until the
 * callback is over — counts against the spider's memory cap with the state's own
 * bytes (about: the request or item, its strings and their allocations). */
static void hold(lua_State *T, call_frame *f, size_t bytes, const char *fn)
{
    lua_spider *s = f->s;
    if (bytes > s->cap || s->used > s->cap - bytes)
        luaL_error(T,
                   "%s: the spider's memory is over its cap (%I MB: --spider-memory) with "
                   "the requests and items this callback made (%I MB)",
                   fn, (lua_Integer)(s->cap / (1024 * 1024)),
                   (lua_Integer)(f->held / (1024 * 1024)));
    s->used += bytes;
    f->held += bytes;
}

/* A form's body, urlencoded, at most (download{method="POST", form=...}). */
#define SPIDER_FORM_MAX (64 * 1024)

/* What follow{...} and download{...} take (Scrapy's Request and FormRequest): url, and
 * callback (follow), method "GET" or "POST", form (POST), dont_filter. The strings
 * point into the Lua stack. */
typedef struct req_args {
    const char *url;
    const char *callback;
    bool post;
    bool dont_filter;
    const char *body; /* post: the urlencoded form ("" for none), on the stack */
    size_t body_len;
} req_args;

/* application/x-www-form-urlencoded (the WHATWG URL standard's serializer): ASCII
 * letters, digits and *-._ as they are, a space '+', every other byte %XX. */
static void form_encode(luaL_Buffer *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '*'
            || c == '-' || c == '.' || c == '_') {
            luaL_addchar(b, (char)c);
        } else if (c == ' ') {
            luaL_addchar(b, '+');
        } else {
            luaL_addchar(b, '%');
            luaL_addchar(b, hex[c >> 4]);
            luaL_addchar(b, hex[c & 15]);
        }
    }
}

typedef struct form_field {
    const char *name, *value;
    size_t nlen, vlen;
} form_field;

static int field_cmp(const void *a, const void *b)
{
    const form_field *x = a, *y = b;
    int c = memcmp(x->name, y->name, x->nlen < y->nlen ? x->nlen : y->nlen);
    return c ? c : (x->nlen > y->nlen) - (x->nlen < y->nlen);
}

/* The form table at index t as a urlencoded body, pushed: its fields sorted by name (a
 * Lua table has no order: the same form is the same body), names strings, values
 * strings or numbers; at most SPIDER_FORM_MAX bytes. */
static void push_form(lua_State *T, int t, const char *fn)
{
    size_t n = 0;
    lua_newtable(T); /* the values as strings, by name: keeps them alive */
    int vals = lua_gettop(T);
    lua_pushnil(T);
    while (lua_next(T, t)) {
        if (lua_type(T, -2) != LUA_TSTRING
            || (lua_type(T, -1) != LUA_TSTRING && lua_type(T, -1) != LUA_TNUMBER))
            luaL_error(T, "%s: form: each field is name = string (or number)", fn);
        size_t vlen;
        const char *value = lua_tolstring(T, -1, &vlen); /* a number as text */
        lua_pushvalue(T, -2);
        lua_pushlstring(T, value, vlen);
        lua_rawset(T, vals);
        lua_pop(T, 1);
        n++;
    }
    form_field *v = lua_newuserdatauv(T, (n ? n : 1) * sizeof *v, 0);
    size_t i = 0;
    lua_pushnil(T);
    while (lua_next(T, vals) && i < n) {
        v[i].name = lua_tolstring(T, -2, &v[i].nlen); /* both anchored in vals */
        v[i].value = lua_tolstring(T, -1, &v[i].vlen);
        lua_pop(T, 1);
        i++;
    }
    qsort(v, i, sizeof *v, field_cmp);
    luaL_Buffer b;
    luaL_buffinit(T, &b);
    for (size_t k = 0; k < i; k++) {
        if (luaL_bufflen(&b) + 3 * (v[k].nlen + v[k].vlen) + 2 > SPIDER_FORM_MAX)
            luaL_error(T, "%s: form: over %d bytes urlencoded", fn, SPIDER_FORM_MAX);
        if (k)
            luaL_addchar(&b, '&');
        form_encode(&b, v[k].name, v[k].nlen);
        luaL_addchar(&b, '=');
        form_encode(&b, v[k].value, v[k].vlen);
    }
    luaL_pushresult(&b);
    lua_replace(T, vals); /* the body where the values were; the array goes */
    lua_settop(T, vals);
}

/* The argument table of follow{...} or download{...} (index 1), checked; a POST's
 * body is pushed. Every error is raised before anything is made. */
static void request_args(lua_State *T, const char *fn, bool follow, req_args *a)
{
    memset(a, 0, sizeof *a);
    static const char *const keys[] = {"url", "callback", "method", "form", "dont_filter"};
    lua_pushnil(T);
    while (lua_next(T, 1)) {
        size_t k = 0;
        while (k < 5 && (lua_type(T, -2) != LUA_TSTRING || strcmp(lua_tostring(T, -2), keys[k])))
            k++;
        if (k == 5 || (k == 1 && !follow))
            luaL_error(T, "%s: unknown field '%s' (url, %smethod, form, dont_filter)", fn,
                       lua_type(T, -2) == LUA_TSTRING ? lua_tostring(T, -2) : "?",
                       follow ? "callback, " : "");
        lua_pop(T, 1);
    }
    lua_getfield(T, 1, "url");
    a->url = lua_tostring(T, -1);
    if (lua_type(T, -1) != LUA_TSTRING)
        luaL_error(T, "%s: url = a string is needed", fn);
    lua_getfield(T, 1, "callback");
    if (!lua_isnil(T, -1) && lua_type(T, -1) != LUA_TSTRING)
        luaL_error(T, "%s: callback = the name of a function, a string", fn);
    a->callback = lua_tostring(T, -1);
    lua_getfield(T, 1, "method");
    const char *m = lua_isnil(T, -1) ? "GET" : lua_tostring(T, -1);
    if (!m || (strcmp(m, "GET") != 0 && strcmp(m, "POST") != 0))
        luaL_error(T, "%s: method = \"GET\" or \"POST\"", fn);
    a->post = strcmp(m, "POST") == 0;
    if (a->post && follow)
        luaL_error(T,
                   "follow: method = \"POST\": the Queue carries GET requests only "
                   "(--state and --frontier keep a URL, not a body); POST with "
                   "download{...}");
    lua_getfield(T, 1, "dont_filter");
    if (!lua_isnil(T, -1) && !lua_isboolean(T, -1))
        luaL_error(T, "%s: dont_filter = true or false", fn);
    a->dont_filter = lua_toboolean(T, -1);
    lua_getfield(T, 1, "form");
    if (!lua_isnil(T, -1) && (!a->post || !lua_istable(T, -1)))
        luaL_error(T, "%s: form = a table, with method = \"POST\"", fn);
    if (a->post) {
        if (lua_istable(T, -1))
            push_form(T, lua_gettop(T), fn);
        else
            lua_pushliteral(T, "");
        a->body = lua_tolstring(T, -1, &a->body_len);
    }
}

/* follow(url [, "callback"]) or follow{url = ..., callback = ..., dont_filter = true}:
 * Scrapy's engine.crawl, through the seen set (not with dont_filter: a login's redirect
 * back to a page seen before), the host policy, the middlewares... */
static int l_follow(lua_State *T)
{
    call_frame *f = need_frame(T, "follow");
    req_args a = {0};
    if (lua_istable(T, 1))
        request_args(T, "follow", true, &a);
    const char *u = a.url ? a.url : luaL_checkstring(T, 1);
    const char *cb = a.url ? a.callback : luaL_optstring(T, 2, NULL);
    hold(T, f, 160 + strlen(u) + 2 * strlen(f->resp->response->url) + (cb ? strlen(cb) : 0),
         "follow");
    if (cb) {
        int t = lua_getglobal(T, cb);
        lua_pop(T, 1);
        if (t != LUA_TFUNCTION)
            return luaL_error(T, "follow: no function '%s' to call back", cb);
    }
    if (f->links_ref != LUA_NOREF) {
        /* one of response:links(): absolute and normal already, no need to resolve */
        lua_rawgeti(T, LUA_REGISTRYINDEX, f->links_ref);
        lua_pushvalue(T, 1);
        bool known = lua_rawget(T, -2) != LUA_TNIL;
        lua_pop(T, 2);
        if (known) {
            const request *req = f->resp->request;
            crawl_request r = {u, f->resp->max_redirect, req->depth + 1, req->url, cb};
            spider_emit_request(f->out, request_from(&r, a.dont_filter ? REQ_DONT_FILTER : 0));
            return 0;
        }
    }
    /* mailto:, javascript:, junk: nothing to follow, as with a page's links */
    if (spider_follow(f->out, f->resp, u, cb) && a.dont_filter)
        f->out->v[f->out->n - 1].request->flags |= REQ_DONT_FILTER;
    return 0;
}

/* item(table): one JSON object, to --items and the item pipeline. */
static int l_item(lua_State *T)
{
    call_frame *f = need_frame(T, "item");
    luaL_checktype(T, 1, LUA_TTABLE);
    luajson_encode(T, 1);
    const char *json = lua_tostring(T, -1);
    if (json[0] != '{')
        return luaL_error(T, "item: an item is a table with named fields, not an array");
    hold(T, f, 96 + lua_rawlen(T, -1), "item");
    spider_emit_item(f->out, json);
    return 0;
}

/* After the await: the response, or the error raised here. */
static int download_k(lua_State *T, int status, lua_KContext ctx)
{
    (void)status, (void)ctx;
    call_frame *f = frame_of(T);
    if (f->got_error) {
        lua_pushstring(T, f->got_error);
        free(f->got_error);
        f->got_error = NULL;
        luaL_where(T, 1);
        lua_insert(T, -2);
        lua_concat(T, 2);
        return lua_error(T);
    }
    push_response(T, f->got, f->resp->request->depth + 1, f->resp->response->url, false);
    response_free(f->got);
    f->got = NULL;
    return 1;
}

/* download(url) or download{url = ..., method = "POST", form = {...}}: Scrapy's
 * engine.download (of a Request, or a FormRequest: the form urlencoded, with its
 * Content-Type). Never filtered: no seen set (dont_filter is taken, and changes
 * nothing). The thread yields; the C coroutine awaits engine_fetch and resumes it
 * (call_body). */
static int l_download(lua_State *T)
{
    call_frame *f = need_frame(T, "download");
    /* before anything is made: Lua would refuse the yield only after the fetch (and
     * its request) were made, and a pcall around it leaked them each time */
    if (!lua_isyieldable(T))
        return luaL_error(T,
                          "download: cannot wait here, inside a function called from C "
                          "(table.sort's comparator, a gsub callback, a metamethod)");
    req_args a = {0};
    if (lua_istable(T, 1))
        request_args(T, "download", false, &a);
    const char *u = a.url ? a.url : luaL_checkstring(T, 1);
    char *abs = resolve(T, f, "download", u);
    if (!abs)
        return luaL_error(T, "download: '%s' is not an http(s) URL", u);
    crawl_request r = {abs, 0, f->resp->request->depth + 1, f->resp->response->url, NULL};
    request *req = request_from(&r, 0);
    if (a.post)
        request_set_post(req, "application/x-www-form-urlencoded", a.body, a.body_len);
    f->wait = engine_fetch(f->s->e, req);
    free(f->wait_url);
    f->wait_url = abs;
    return lua_yieldk(T, 0, 0, download_k);
}

/* ---- one callback: a Lua thread, driven by a C coroutine ---- */

static int start_k(lua_State *T, int status, lua_KContext ctx)
{
    (void)T, (void)status, (void)ctx;
    return 0;
}

/* The thread's body: look the callback up, make the response, call it. */
static int l_start(lua_State *T)
{
    call_frame *f = frame_of(T);
    const request *req = f->resp->request;
    const char *name = req->callback ? req->callback : "parse";
    if (lua_getglobal(T, name) != LUA_TFUNCTION)
        return luaL_error(T, "no function '%s' for %s", name, req->url);
    push_response(T, f->resp->response, req->depth, req->referrer, true);
    lua_pushvalue(T, -1);
    f->resp_ref = luaL_ref(T, LUA_REGISTRYINDEX); /* response:links() knows it */
    lua_callk(T, 1, 0, 0, start_k);
    return 0;
}

/* A new thread anchored in the registry (protected: lua_newthread may raise). */
static int l_new_thread(lua_State *L)
{
    lua_newthread(L);
    lua_pushvalue(L, -1);
    lua_pushinteger(L, luaL_ref(L, LUA_REGISTRYINDEX));
    return 2;
}

/* The record's exception for a callback that failed with status rc. */
static char *failure(call_frame *f, int rc)
{
    lua_State *T = f->T;
    lua_Debug ar;
    char where[512] = "";
    /* the innermost Lua function where it stopped (the thread's stack is kept) */
    for (int level = 0; lua_getstack(T, level, &ar); level++) {
        lua_getinfo(T, "Sl", &ar);
        if (ar.currentline > 0) {
            snprintf(where, sizeof where, "%s:%d: ", ar.short_src, ar.currentline);
            break;
        }
    }
    if (!where[0])
        snprintf(where, sizeof where, "%s: ", f->s->path);
    if (rc == LUA_ERRMEM && f->stop.kind == STOP_NONE)
        return xasprintf("spider error: %sthe spider's memory is over its cap (%zu MB: "
                         "--spider-memory)",
                         where, f->s->cap / (1024 * 1024));
    /* a stopped callback: the stop's message, whatever was raised last */
    const char *msg = f->stop.kind != STOP_NONE ? f->stop.msg
        : lua_type(T, -1) == LUA_TSTRING        ? lua_tostring(T, -1)
                                                : NULL;
    if (!msg)
        return xasprintf("spider error: %s(error object is a %s value)", where,
                         luaL_typename(T, -1));
    /* Lua's own messages start with FILE:LINE already */
    size_t n = strlen(f->s->path);
    bool placed = strncmp(msg, f->s->path, n) == 0 && msg[n] == ':';
    return xasprintf("spider error: %s%s", placed ? "" : where, msg);
}

static int call_body(coro *co)
{
    call_frame *f = (call_frame *)co;
    CORO_BEGIN(co);
    {
        lua_State *L = f->s->L;
        if (!lua_checkstack(L, 4)) {
            f->error = xasprintf("spider error: %s: no stack for a callback", f->s->path);
            CORO_RETURN(co, NULL, 0);
        }
        lua_pushcfunction(L, l_new_thread);
        if (lua_pcall(L, 0, 2, 0) != LUA_OK) {
            lua_pop(L, 1);
            f->error = xasprintf("spider error: %s: the spider's memory is over its cap "
                                 "(%zu MB: --spider-memory)",
                                 f->s->path, f->s->cap / (1024 * 1024));
            lua_gc(L, LUA_GCCOLLECT);
            CORO_RETURN(co, NULL, 0);
        }
        f->T = lua_tothread(L, -2);
        f->ref = (int)lua_tointeger(L, -1);
        lua_pop(L, 2);
        *(call_frame **)lua_getextraspace(f->T) = f;
        lua_sethook(f->T, count_hook, LUA_MASKCOUNT, HOOK_EVERY);
        lua_pushcfunction(f->T, l_start);
        f->nargs = 0;
    }
    for (;;) {
        {
            int nres;
            f->resumed_ns = now_ns();
            f->s->running = f;
            int rc = lua_resume(f->T, NULL, f->nargs, &nres);
            f->s->running = NULL;
            f->ran_ns += now_ns() - f->resumed_ns;
            if (rc != LUA_YIELD && f->wait) { /* download() could not yield */
                coro_free(f->wait);
                f->wait = NULL;
            }
            if (rc == LUA_OK)
                break;
            if (rc != LUA_YIELD && f->stop.kind == STOP_SIGNAL) {
                /* the crawl was interrupted: this URL is not done (no record: it is
                 * one of those left to do), as when a signal finds it downloading */
                CORO_RAISE(co, CORO_CANCELLED, 0, "%s", f->stop.msg);
            }
            if (rc != LUA_YIELD) {
                f->error = failure(f, rc);
                f->over_memory = rc == LUA_ERRMEM;
                break;
            }
            lua_pop(f->T, nres);
            if (!f->wait) {
                f->error = xasprintf("spider error: %s: a callback yielded outside "
                                     "download()",
                                     f->s->path);
                break;
            }
        }
        /* download(url): await the engine's download; other workers go on meanwhile. */
        AWAIT_CATCH(co, f->wait);
        f->wait = NULL;
        if (co->err) {
            if (co->err->kind == CORO_CANCELLED)
                CORO_RAISE_ERR(co);
            char line[512];
            f->got_error = xasprintf("download %s failed: %s", f->wait_url,
                                     coro_error_line(co->err, line, sizeof line));
            coro_error_free(co->err);
            co->err = NULL;
        } else {
            f->got = co->value.p;
        }
        f->nargs = 0;
    }
    CORO_END(co);
}

/* The callback is over: its error (if any) is the spider's. */
static void call_done(call_frame *f)
{
    if (f->error) {
        spider_fail(f->out, "%s", f->error);
        free(f->error);
        f->error = NULL;
    }
}

static void call_finally(coro *co)
{
    call_frame *f = (call_frame *)co;
    lua_State *L = f->s->L;
    /* f->wait, if it was being awaited, was freed as the frame's child */
    call_done(f);
    f->s->used -= f->held; /* its outputs are the engine's now */
    luaL_unref(L, LUA_REGISTRYINDEX, f->resp_ref);
    luaL_unref(L, LUA_REGISTRYINDEX, f->links_ref);
    response_free(f->got);
    free(f->got_error);
    free(f->wait_url);
    xpath_doc_free(f->doc);
    luaL_unref(L, LUA_REGISTRYINDEX, f->doc_ref);
    if (f->T)
        *(call_frame **)lua_getextraspace(f->T) = NULL;
    luaL_unref(L, LUA_REGISTRYINDEX, f->ref);
    if (f->over_memory)
        lua_gc(L, LUA_GCCOLLECT); /* what the thread held, now unreachable */
}

static const coro_def call_def = {"lua_callback", __FILE__, call_body, call_finally,
                                  sizeof(call_frame)};

/* Scrapy's HttpErrorMiddleware: only a 2xx response reaches a callback, and with the
 * spider's handle_httpstatus_all a 4xx or 5xx one too. */
static coro *lua_parse(void *self, const spider_response *resp, spider_outputs *out)
{
    int status = resp->response->status;
    bool error = status >= 400 && status <= 599;
    if ((status < 200 || status > 299) && !(error && ((lua_spider *)self)->all_statuses))
        return NULL;
    call_frame *f = (call_frame *)coro_new(&call_def);
    f->s = self;
    f->resp = resp;
    f->out = out;
    f->ref = LUA_NOREF;
    f->doc_ref = LUA_NOREF;
    f->resp_ref = LUA_NOREF;
    f->links_ref = LUA_NOREF;
    return &f->co;
}

static void spider_free(void *self)
{
    lua_spider_free(self);
}

spider lua_spider_spider(lua_spider *s, engine *e)
{
    s->e = e;
    return (spider){
        .name = "lua", .self = s, .wants_body = true, .parse = lua_parse, .free = spider_free};
}

/* ---- the descriptor (extension.h) ---- */

static bool on(const settings *s)
{
    return s->spider != NULL;
}

/* The spider the command line's checks loaded (assembly/settings.c). */
static int make(engine *e, const settings *s, spider *out, char *err, size_t errlen)
{
    lua_spider *ls = lua_spider_take();
    if (!ls) {
        snprintf(err, errlen, "--spider '%s' was not loaded", s->spider);
        return -1;
    }
    *out = lua_spider_spider(ls, e);
    return 0;
}

/* The descriptor (extension.h): --spider FILE.lua, order 100. */
const extension lua_extension = {"lua", EXT_SPIDER, 100, on, .make_spider = make};
