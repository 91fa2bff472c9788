/* request_check.h — a cmocka check that a Queue handed back a request whole
 * (common/core/crawl_request.h): the same URL, max_redirect, depth, referrer and
 * callback as the one put, absent ones absent. For test_queue, test_polite and
 * test_frontier (include after cmocka.h). */
#ifndef CRAWL_TEST_REQUEST_CHECK_H
#define CRAWL_TEST_REQUEST_CHECK_H

#include "crawl_request.h"

static inline void assert_same_text(const char *got, const char *want)
{
    if (want)
        assert_string_equal(got, want);
    else
        assert_null(got);
}

static inline void assert_same_request(const crawl_request *got, const crawl_request *want)
{
    assert_non_null(got);
    assert_string_equal(got->url, want->url);
    assert_int_equal(got->max_redirect, want->max_redirect);
    assert_int_equal(got->depth, want->depth);
    assert_same_text(got->referrer, want->referrer);
    assert_same_text(got->callback, want->callback);
}

#endif
