/* test_luapattern.c — the sandbox's pattern functions (luapattern.h): the same results
 * and errors as Lua 5.4's own over tests/spiders/pattern_diff.lua's patterns and
 * subjects, and a pattern bomb on 64 KB stopped within PATTERN_STEPS steps (charged),
 * where Lua's own would run for hours. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include <lauxlib.h>
#include <lualib.h>

#include "luapattern.h"

static unsigned long long charged;

static void charge(lua_State *T, unsigned long long n)
{
    (void)T;
    charged += n;
}

/* A state with Lua's libraries, Lua's own four functions kept as orig, ours in string. */
static lua_State *state(void)
{
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    lua_getglobal(L, "string");
    lua_newtable(L);
    static const char *const names[] = {"find", "match", "gmatch", "gsub"};
    for (size_t i = 0; i < 4; i++) {
        lua_getfield(L, -2, names[i]);
        lua_setfield(L, -2, names[i]);
    }
    lua_setglobal(L, "orig");
    lua_pop(L, 1);
    luapattern_open(L, charge);
    return L;
}

static void test_same_as_lua(void **st)
{
    (void)st;
    lua_State *L = state();
    if (luaL_dofile(L, SOURCE_DIR "/tests/spiders/pattern_diff.lua") != LUA_OK)
        fail_msg("%s", lua_tostring(L, -1));
    assert_int_equal(lua_tointeger(L, -1), 0);
    lua_close(L);
}

static void test_bomb_bounded(void **st)
{
    (void)st;
    lua_State *L = state();
    const char *const bombs[] = {
        "return string.find(('a'):rep(65536), '.-.-.-.-b')",
        "return string.match(('a'):rep(65536), '(a*)*b')",
        "for x in ('a'):rep(65536):gmatch('a-a-a-b') do end",
        "return ('a'):rep(65536):gsub('.-b', 'x')",
    };
    for (size_t i = 0; i < 4; i++) {
        charged = 0;
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        assert_int_not_equal(luaL_dostring(L, bombs[i]), LUA_OK);
        clock_gettime(CLOCK_MONOTONIC, &b);
        double ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
        print_message("%s: %s (%.0f ms)\n", bombs[i], lua_tostring(L, -1), ms);
        assert_non_null(strstr(lua_tostring(L, -1), "pattern too costly"));
        assert_true(charged > PATTERN_STEPS);
        assert_true(ms < 1000); /* about 60 ms on an idle core, unoptimised */
        lua_pop(L, 1);
    }
    /* a plain pattern on 64 KB is linear: charged about the subject's length */
    charged = 0;
    assert_int_equal(
        luaL_dostring(L, "return (('a'):rep(65536) .. 'price: 42'):match('price: (%d+)')"), LUA_OK);
    assert_string_equal(lua_tostring(L, -1), "42");
    assert_true(charged < 4 * 65536);
    lua_close(L);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_as_lua),
        cmocka_unit_test(test_bomb_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
