/* loopguard.c — see loopguard.h. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "guard.h"
#include "loopguard.h"

static sel_timer *guard;
static bool guard_hit;

static void guard_fired(selector *s, void *arg)
{
    (void)arg;
    guard_hit = true;
    guard = NULL;
    selector_stop(s);
}

selector *guarded_loop_new(uint64_t default_ms)
{
    char err[256] = "";
    selector *s = selector_new(NULL, err, sizeof err);
    if (!s)
        fail_msg("selector_new: %s", err);
    guard_hit = false;
    guard = selector_call_later(s, test_guard_ms(default_ms), guard_fired, NULL);
    assert_non_null(guard);
    return s;
}

void guarded_loop_free(selector *s)
{
    if (!s)
        return;
    if (guard)
        selector_cancel(s, guard);
    guard = NULL;
    selector_free(s);
}

bool guarded_loop_hit(void)
{
    return guard_hit;
}
