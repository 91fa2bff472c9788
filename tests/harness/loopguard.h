/* loopguard.h — a selector for a unit test, with a guard timer: if the test's loop
 * would run longer than the guard (test_guard_ms, guard.h), the timer stops the loop
 * and guarded_loop_hit() says so, so the test fails instead of hanging. */
#ifndef CRAWL_TEST_LOOPGUARD_H
#define CRAWL_TEST_LOOPGUARD_H

#include <stdbool.h>
#include <stdint.h>

#include "selector.h"

/* A new default selector with its guard armed (default_ms unless CRAWL_TEST_GUARD_MS);
 * fails the current cmocka test if the selector cannot be made. */
selector *guarded_loop_new(uint64_t default_ms);
/* Cancel the guard and free the selector. Accepts NULL. */
void guarded_loop_free(selector *s);
/* Whether the guard fired since guarded_loop_new. */
bool guarded_loop_hit(void);

#endif
