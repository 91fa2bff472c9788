/* crawl_request.h — a URL to crawl and what travels with it: crawling.py's
 * (url, max_redirect) pair, grown the way Scrapy's scheduler keeps whole Requests.
 *
 * The crawl core fills depth and referrer when it schedules a URL (crawl.h's add_url):
 * a root has depth 0 and no referrer; a link found on a page has the page's depth + 1
 * and the page as referrer; a redirect target keeps the depth (and callback) of the
 * URL that redirected, which is its referrer. callback names what should handle the
 * response (NULL: the default); the core carries it and never reads it. Every Queue
 * keeps all of it.
 */
#ifndef CRAWL_CRAWL_REQUEST_H
#define CRAWL_CRAWL_REQUEST_H

typedef struct crawl_request {
    const char *url;
    int max_redirect;     /* redirects still allowed from this URL */
    int depth;            /* links followed from a root: 0 for a root */
    const char *referrer; /* the URL where this one was found; NULL for a root */
    const char *callback; /* what handles the response; NULL: the default */
} crawl_request;

/* A copy of r in one allocation, its strings after it: free() frees it all. Out of
 * memory ends the process (alloc.h). */
crawl_request *crawl_request_dup(const crawl_request *r);

#endif
