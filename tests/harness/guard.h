/* guard.h — how long a unit test's guard timer waits before it stops the loop and
 * fails the test: the default the test gives, or env CRAWL_TEST_GUARD_MS. The exercise
 * grader (scripts/exercise.sh) shortens it, since a stub leaves every test waiting. */
#ifndef CRAWL_TEST_GUARD_H
#define CRAWL_TEST_GUARD_H

#include <stdint.h>
#include <stdlib.h>

static inline uint64_t test_guard_ms(uint64_t dflt)
{
    const char *e = getenv("CRAWL_TEST_GUARD_MS");
    long v = e ? strtol(e, NULL, 10) : 0;
    return v > 0 ? (uint64_t)v : dflt;
}

#endif
