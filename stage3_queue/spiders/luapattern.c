/* luapattern.c — string.find, match, gmatch and gsub for spiders, with Lua's pattern
 * language (Lua 5.4 manual, section 6.4.1) and a matcher that counts its steps
 * (luapattern.h). Written for the sandbox: Lua's own matcher (lstrlib.c) backtracks in
 * C, where no hook fires, so `string.find(("a"):rep(5000), ".-.-.-.-b")` ran for
 * hours. This one counts a step for each attempt at a pattern position and for each
 * subject byte a repetition, a %b or a back-reference scans; over PATTERN_STEPS steps
 * in one call it raises, and the steps a call took are charged to the callback's
 * budget. */
#include "luapattern.h"

#include <ctype.h>
#include <lauxlib.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define MAXCAP         32  /* captures in one pattern (LUA_MAXCAPTURES) */
#define MAXDEPTH       200 /* nested matcher calls (a C stack bound) */
#define CAP_UNFINISHED (-1)
#define CAP_POSITION   (-2)
#define SPECIALS       "^$*+?.([%-"

static void (*charge_fn)(lua_State *T, unsigned long long n);

typedef struct mstate {
    lua_State *L;
    const char *fn;                 /* "string.find", for errors */
    const char *src_init, *src_end; /* the subject */
    const char *pat_end;            /* the pattern's end */
    int depth;                      /* matcher calls left (MAXDEPTH) */
    int level;                      /* captures open or closed */
    unsigned long long steps;       /* this call's steps so far */
    struct {
        const char *init;
        ptrdiff_t len; /* or CAP_UNFINISHED, CAP_POSITION */
    } cap[MAXCAP];
} mstate;

static int uchar(char c)
{
    return (unsigned char)c;
}

/* n more steps: over PATTERN_STEPS, charge them and raise. */
static void step(mstate *ms, unsigned long long n)
{
    ms->steps += n;
    if (ms->steps > PATTERN_STEPS) {
        unsigned long long used = ms->steps;
        ms->steps = 0;
        charge_fn(ms->L, used); /* a stop (budget, signal) is raised there */
        luaL_error(ms->L, "%s: pattern too costly (over %d steps of matching)", ms->fn,
                   PATTERN_STEPS);
    }
}

/* The end of the single-character class at p (p < pat_end). */
static const char *class_end(mstate *ms, const char *p)
{
    char c = *p++;
    if (c == '%') {
        if (p >= ms->pat_end)
            luaL_error(ms->L, "malformed pattern (ends with '%%')");
        return p + 1;
    }
    if (c == '[') {
        if (p < ms->pat_end && *p == '^')
            p++;
        const char *from = p;
        do { /* the first character is never the closing ']' */
            if (p >= ms->pat_end)
                luaL_error(ms->L, "malformed pattern (missing ']')");
            c = *p++;
            if (c == '%' && p < ms->pat_end)
                p++; /* an escape: %] is no end */
        } while (*p != ']');
        step(ms, (unsigned long long)(p - from)); /* a set may be long */
        return p + 1;
    }
    return p;
}

/* Whether c is in the class %cl (a letter: its class; else the character itself). */
static int class_match(int c, int cl)
{
    int r;
    switch (tolower(cl)) {
    case 'a': r = isalpha(c); break;
    case 'c': r = iscntrl(c); break;
    case 'd': r = isdigit(c); break;
    case 'g': r = isgraph(c); break;
    case 'l': r = islower(c); break;
    case 'p': r = ispunct(c); break;
    case 's': r = isspace(c); break;
    case 'u': r = isupper(c); break;
    case 'w': r = isalnum(c); break;
    case 'x': r = isxdigit(c); break;
    case 'z': r = c == 0; break; /* deprecated in 5.2, kept by 5.4 */
    default: return cl == c;
    }
    if (isupper(cl))
        r = !r;
    return r != 0;
}

/* Whether c is in the set [ ... ] from p (its '[') to ec (its ']'). */
static int set_match(int c, const char *p, const char *ec)
{
    int in = 1;
    p++;
    if (*p == '^') {
        in = 0;
        p++;
    }
    while (p < ec) {
        if (*p == '%' && p + 1 < ec) {
            if (class_match(c, uchar(p[1])))
                return in;
            p += 2;
        } else if (p[1] == '-' && p + 2 < ec) {
            if (uchar(p[0]) <= c && c <= uchar(p[2]))
                return in;
            p += 3;
        } else {
            if (uchar(*p) == c)
                return in;
            p++;
        }
    }
    return !in;
}

/* Whether the subject byte at s matches the class from p to ep. */
static int single_match(mstate *ms, const char *s, const char *p, const char *ep)
{
    if (s >= ms->src_end)
        return 0;
    int c = uchar(*s);
    switch (*p) {
    case '.': return 1;
    case '%': return class_match(c, uchar(p[1]));
    case '[': step(ms, (unsigned long long)(ep - p)); return set_match(c, p, ep - 1);
    default: return uchar(*p) == c;
    }
}

static const char *do_match(mstate *ms, const char *s, const char *p);

/* %bxy at p (after "%b"), from s. */
static const char *match_balance(mstate *ms, const char *s, const char *p)
{
    if (p + 1 >= ms->pat_end)
        luaL_error(ms->L, "malformed pattern (missing arguments to '%%b')");
    if (s >= ms->src_end || *s != *p)
        return NULL;
    char b = p[0], e = p[1];
    int open = 1;
    const char *q = s;
    while (++q < ms->src_end) {
        step(ms, 1);
        if (*q == e) {
            if (--open == 0)
                return q + 1;
        } else if (*q == b) {
            open++;
        }
    }
    return NULL;
}

/* The class from p to ep repeated as often as it matches from s, then the rest,
 * giving back one at a time. */
static const char *max_expand(mstate *ms, const char *s, const char *p, const char *ep)
{
    ptrdiff_t i = 0;
    while (single_match(ms, s + i, p, ep)) {
        i++;
        step(ms, 1);
    }
    for (; i >= 0; i--) {
        const char *r = do_match(ms, s + i, ep + 1);
        if (r)
            return r;
    }
    return NULL;
}

/* The rest first, then one more of the class, and so on. */
static const char *min_expand(mstate *ms, const char *s, const char *p, const char *ep)
{
    for (;;) {
        const char *r = do_match(ms, s, ep + 1);
        if (r)
            return r;
        if (!single_match(ms, s, p, ep))
            return NULL;
        s++;
    }
}

static const char *start_capture(mstate *ms, const char *s, const char *p, ptrdiff_t what)
{
    if (ms->level >= MAXCAP)
        luaL_error(ms->L, "too many captures");
    ms->cap[ms->level].init = s;
    ms->cap[ms->level].len = what;
    ms->level++;
    const char *r = do_match(ms, s, p);
    if (!r)
        ms->level--;
    return r;
}

static const char *end_capture(mstate *ms, const char *s, const char *p)
{
    int l = ms->level - 1;
    while (l >= 0 && ms->cap[l].len != CAP_UNFINISHED)
        l--;
    if (l < 0)
        luaL_error(ms->L, "invalid pattern capture");
    ms->cap[l].len = s - ms->cap[l].init;
    const char *r = do_match(ms, s, p);
    if (!r)
        ms->cap[l].len = CAP_UNFINISHED;
    return r;
}

/* %1 .. %9: the text of capture c again. */
static const char *match_capture(mstate *ms, const char *s, int c)
{
    int l = c - '1';
    if (l < 0 || l >= ms->level || ms->cap[l].len == CAP_UNFINISHED)
        luaL_error(ms->L, "invalid capture index %%%d", l + 1);
    ptrdiff_t len = ms->cap[l].len;
    if (len < 0) /* a position capture matches no text */
        return NULL;
    step(ms, (unsigned long long)len);
    if (ms->src_end - s >= len && memcmp(ms->cap[l].init, s, (size_t)len) == 0)
        return s + len;
    return NULL;
}

/* The pattern from p against the subject from s: the end of the match, or NULL. */
static const char *do_match(mstate *ms, const char *s, const char *p)
{
    if (ms->depth-- == 0)
        luaL_error(ms->L, "pattern too complex");
    step(ms, 1);
    while (p != ms->pat_end && s) {
        step(ms, 1);        /* a pattern item */
        bool single = true; /* p is a single-character class (maybe repeated) */
        if (*p == '(') {
            if (p + 1 < ms->pat_end && p[1] == ')')
                s = start_capture(ms, s, p + 2, CAP_POSITION);
            else
                s = start_capture(ms, s, p + 1, CAP_UNFINISHED);
            break;
        } else if (*p == ')') {
            s = end_capture(ms, s, p + 1);
            break;
        } else if (*p == '$' && p + 1 == ms->pat_end) {
            if (s != ms->src_end)
                s = NULL;
            break;
        } else if (*p == '%' && p + 1 < ms->pat_end && p[1] == 'b') {
            s = match_balance(ms, s, p + 2);
            p += 4;
            single = false;
        } else if (*p == '%' && p + 1 < ms->pat_end && p[1] == 'f') {
            p += 2;
            if (p >= ms->pat_end || *p != '[')
                luaL_error(ms->L, "missing '[' after '%%f' in pattern");
            const char *ep = class_end(ms, p);
            int prev = s == ms->src_init ? '\0' : uchar(s[-1]);
            int cur = s < ms->src_end ? uchar(*s) : '\0';
            if (set_match(prev, p, ep - 1) || !set_match(cur, p, ep - 1))
                s = NULL;
            p = ep;
            single = false;
        } else if (*p == '%' && p + 1 < ms->pat_end && isdigit(uchar(p[1]))) {
            s = match_capture(ms, s, uchar(p[1]));
            p += 2;
            single = false;
        }
        if (single) {
            const char *ep = class_end(ms, p);
            char rep = ep < ms->pat_end ? *ep : '\0';
            if (!single_match(ms, s, p, ep)) {
                if (rep == '*' || rep == '?' || rep == '-')
                    p = ep + 1; /* none of it: fine for these */
                else
                    s = NULL;
                continue;
            }
            if (rep == '?') {
                const char *r = do_match(ms, s + 1, ep + 1);
                if (r) {
                    s = r;
                    break;
                }
                p = ep + 1;
            } else if (rep == '+') {
                s = max_expand(ms, s + 1, p, ep);
                break;
            } else if (rep == '*') {
                s = max_expand(ms, s, p, ep);
                break;
            } else if (rep == '-') {
                s = min_expand(ms, s, p, ep);
                break;
            } else {
                s++;
                p = ep;
            }
        }
    }
    ms->depth++;
    return s;
}

static void prepare(mstate *ms, lua_State *L, const char *fn, const char *s, size_t ls,
                    const char *p, size_t lp)
{
    ms->L = L;
    ms->fn = fn;
    ms->src_init = s;
    ms->src_end = s + ls;
    ms->pat_end = p + lp;
    ms->steps = 0;
}

static void restart(mstate *ms)
{
    ms->level = 0;
    ms->depth = MAXDEPTH;
}

/* Capture i of a match from s to e (i 0 and no captures: the whole match). */
static void push_capture(mstate *ms, int i, const char *s, const char *e)
{
    if (i >= ms->level) {
        if (i != 0)
            luaL_error(ms->L, "invalid capture index %%%d", i + 1);
        lua_pushlstring(ms->L, s, (size_t)(e - s));
    } else if (ms->cap[i].len == CAP_UNFINISHED) {
        luaL_error(ms->L, "unfinished capture");
    } else if (ms->cap[i].len == CAP_POSITION) {
        lua_pushinteger(ms->L, (ms->cap[i].init - ms->src_init) + 1);
    } else {
        lua_pushlstring(ms->L, ms->cap[i].init, (size_t)ms->cap[i].len);
    }
}

/* The captures (s NULL: none when the pattern has none; else the whole match). */
static int push_captures(mstate *ms, const char *s, const char *e)
{
    int n = ms->level == 0 && s ? 1 : ms->level;
    luaL_checkstack(ms->L, n, "too many captures");
    for (int i = 0; i < n; i++)
        push_capture(ms, i, s, e);
    return n;
}

/* Lua's start positions: 1-based, negative from the end. */
static size_t start_at(lua_Integer pos, size_t len)
{
    if (pos > 0)
        return (size_t)pos;
    if (pos == 0 || pos < -(lua_Integer)len)
        return 1;
    return len + (size_t)pos + 1;
}

static bool plain(const char *p, size_t lp)
{
    for (size_t i = 0; i < lp; i++)
        if (p[i] && strchr(SPECIALS, p[i]))
            return false;
    return true;
}

/* The steps of a call, charged once it is over (the results are pushed: a stop raised
 * by the charge drops them). */
static int done(mstate *ms, int nres)
{
    charge_fn(ms->L, ms->steps);
    return nres;
}

static int find_aux(lua_State *L, bool find)
{
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    size_t init = start_at(luaL_optinteger(L, 3, 1), ls) - 1;
    if (init > ls) {
        luaL_pushfail(L);
        return 1;
    }
    if (find && (lua_toboolean(L, 4) || plain(p, lp))) {
        const char *at = memmem(s + init, ls - init, p, lp); /* linear (glibc's two-way) */
        if (at) {
            lua_pushinteger(L, (lua_Integer)(at - s) + 1);
            lua_pushinteger(L, (lua_Integer)(at - s + lp));
            return 2;
        }
        luaL_pushfail(L);
        return 1;
    }
    mstate ms;
    bool anchor = lp > 0 && *p == '^';
    if (anchor)
        p++, lp--;
    prepare(&ms, L, find ? "string.find" : "string.match", s, ls, p, lp);
    const char *s1 = s + init;
    do {
        restart(&ms);
        const char *e = do_match(&ms, s1, p);
        if (e) {
            if (!find)
                return done(&ms, push_captures(&ms, s1, e));
            lua_pushinteger(L, (lua_Integer)(s1 - s) + 1);
            lua_pushinteger(L, (lua_Integer)(e - s));
            return done(&ms, push_captures(&ms, NULL, NULL) + 2);
        }
    } while (s1++ < ms.src_end && !anchor);
    luaL_pushfail(L);
    return done(&ms, 1);
}

static int l_find(lua_State *L)
{
    return find_aux(L, true);
}

static int l_match(lua_State *L)
{
    return find_aux(L, false);
}

typedef struct gmatch_state {
    const char *src, *p, *lastmatch;
    mstate ms;
} gmatch_state;

static int gmatch_next(lua_State *L)
{
    gmatch_state *gm = lua_touserdata(L, lua_upvalueindex(3));
    gm->ms.L = L; /* the thread calling the iterator now */
    gm->ms.steps = 0;
    for (const char *src = gm->src; src <= gm->ms.src_end; src++) {
        restart(&gm->ms);
        const char *e = do_match(&gm->ms, src, gm->p);
        if (e && e != gm->lastmatch) {
            gm->src = gm->lastmatch = e;
            return done(&gm->ms, push_captures(&gm->ms, src, e));
        }
    }
    gm->src = gm->ms.src_end + 1; /* over */
    return done(&gm->ms, 0);
}

static int l_gmatch(lua_State *L)
{
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    size_t init = start_at(luaL_optinteger(L, 3, 1), ls) - 1;
    lua_settop(L, 2); /* the subject and the pattern: the iterator's upvalues */
    gmatch_state *gm = lua_newuserdatauv(L, sizeof *gm, 0);
    if (init > ls)
        init = ls + 1;
    prepare(&gm->ms, L, "string.gmatch", s, ls, p, lp);
    gm->src = s + init;
    gm->p = p;
    gm->lastmatch = NULL;
    lua_pushcclosure(L, gmatch_next, 3);
    return 1;
}

/* A replacement string: %0 .. %9 the captures, %% a '%'. */
static void add_string(mstate *ms, luaL_Buffer *b, const char *s, const char *e)
{
    lua_State *L = ms->L;
    size_t l;
    const char *r = lua_tolstring(L, 3, &l);
    const char *end = r + l, *pc;
    while ((pc = memchr(r, '%', (size_t)(end - r)))) {
        luaL_addlstring(b, r, (size_t)(pc - r));
        pc++;
        if (*pc == '%') {
            luaL_addchar(b, '%');
        } else if (isdigit(uchar(*pc))) {
            if (*pc == '0') {
                luaL_addlstring(b, s, (size_t)(e - s));
            } else {
                push_capture(ms, *pc - '1', s, e);
                luaL_tolstring(L, -1, NULL);
                lua_remove(L, -2);
                luaL_addvalue(b);
            }
        } else {
            luaL_error(L, "invalid use of '%c' in replacement string", '%');
        }
        r = pc + 1;
    }
    luaL_addlstring(b, r, (size_t)(end - r));
}

static void add_value(mstate *ms, luaL_Buffer *b, const char *s, const char *e, int tr)
{
    lua_State *L = ms->L;
    if (tr == LUA_TFUNCTION) {
        lua_pushvalue(L, 3);
        int n = push_captures(ms, s, e);
        lua_call(L, n, 1);
    } else if (tr == LUA_TTABLE) {
        push_capture(ms, 0, s, e);
        lua_gettable(L, 3);
    } else {
        add_string(ms, b, s, e);
        return;
    }
    if (!lua_toboolean(L, -1)) { /* nil or false: the match stays */
        lua_pop(L, 1);
        luaL_addlstring(b, s, (size_t)(e - s));
    } else if (!lua_isstring(L, -1)) {
        luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
    } else {
        luaL_addvalue(b);
    }
}

static int l_gsub(lua_State *L)
{
    size_t ls, lp;
    const char *src = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    int tr = lua_type(L, 3);
    lua_Integer max = luaL_optinteger(L, 4, (lua_Integer)ls + 1);
    luaL_argexpected(
        L, tr == LUA_TNUMBER || tr == LUA_TSTRING || tr == LUA_TFUNCTION || tr == LUA_TTABLE, 3,
        "string/function/table");
    bool anchor = lp > 0 && *p == '^';
    if (anchor)
        p++, lp--;
    mstate ms;
    prepare(&ms, L, "string.gsub", src, ls, p, lp);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    const char *lastmatch = NULL;
    lua_Integer n = 0;
    while (n < max) {
        restart(&ms);
        const char *e = do_match(&ms, src, p);
        if (e && e != lastmatch) {
            n++;
            add_value(&ms, &b, src, e, tr);
            src = lastmatch = e;
        } else if (src < ms.src_end) {
            luaL_addchar(&b, *src++);
        } else {
            break;
        }
        if (anchor)
            break;
    }
    luaL_addlstring(&b, src, (size_t)(ms.src_end - src));
    luaL_pushresult(&b);
    lua_pushinteger(L, n);
    return done(&ms, 2);
}

void luapattern_open(lua_State *L, void (*charge)(lua_State *T, unsigned long long n))
{
    charge_fn = charge;
    lua_getglobal(L, "string");
    static const luaL_Reg fns[] = {
        {"find", l_find}, {"match", l_match}, {"gmatch", l_gmatch}, {"gsub", l_gsub}, {NULL, NULL}};
    luaL_setfuncs(L, fns, 0);
    lua_pop(L, 1);
}
