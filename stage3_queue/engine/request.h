/* request.h — the engine's two messages, after Scrapy's Request and Response.
 *
 * A request is a URL to fetch with what travels with it in the Queue (the crawl
 * core's crawl_request: max_redirect, depth, referrer, callback), a few flags a
 * middleware reads, and the header fields middlewares add to what the transport sends.
 * A response is what came back: the final status, the headers the engine kept, and
 * the body when someone asked for it (an item pipeline stage that stores pages); a
 * middleware may also make one itself (a cache, say), in which case the download is
 * skipped.
 */
#ifndef CRAWL_REQUEST_H
#define CRAWL_REQUEST_H

#include <stdbool.h>
#include <stddef.h>

#include "crawl.h"

enum {
    REQ_DONT_OBEY_ROBOTS = 1 << 0, /* the robots.txt middleware lets it pass */
    REQ_DONT_FILTER = 1 << 1,      /* engine_crawl schedules it even if seen */
    REQ_ONE_TRY = 1 << 2,          /* engine_fetch: one try, whatever --max-tries */
    REQ_SIDE_LANE = 1 << 8,        /* the transport's side lane (curlglue.h): a
                                      * download for the crawl itself (robots.txt) */
    REQ_ARCHIVE = 1 << 3,          /* engine_fetch: the response goes to the pipeline's
                                      * process_download (robots.txt) */
    REQ_ROOT = 1 << 4,             /* engine_crawl: a start request, scheduled unless
                                      * seen, whatever the host policy (as a root) */
    REQ_ANY_HOST = 1 << 5,         /* engine_crawl: on any host (a page requisite):
                                      * --exclude and the seen set still apply */
};

typedef struct request {
    char *url;
    int max_redirect; /* redirects still allowed from this URL */
    int depth;        /* crawl_request.h's depth, referrer, callback */
    char *referrer;   /* or NULL */
    char *callback;   /* or NULL */
    unsigned flags;
    char **headers; /* extra header fields, "Name: value" each, in a
                                      * NULL-terminated list (common/web/http.h), or
                                      * NULL: none */
    size_t nheaders;
    char *post; /* a POST's body (engine_fetch only: the Queue carries GETs), or NULL */
    size_t post_len;
} request;

/* A request of depth 0, with no referrer and no callback. */
request *request_new(const char *url, int max_redirect, unsigned flags);
/* A request with r's fields (copied). */
request *request_from(const crawl_request *r, unsigned flags);
/* A copy of r: the same URL, once more (a retry), with everything that travels in the
 * Queue, its POST body too; not its header fields (the middlewares add them again on
 * its next try). */
request *request_copy(const request *r);
/* r as the crawl core's crawl_request (pointing into r: valid while r lives). */
crawl_request request_view(const request *r);
void request_free(request *r);
/* Make r a POST of body[0..len) (copied), with the Content-Type field type. */
void request_set_post(request *r, const char *type, const char *body, size_t len);
/* Add a header field to send (copies both strings; name: an RFC 9110 token, value
 * without control characters — http_field_check). */
void request_add_header(request *r, const char *name, const char *value);
/* The value of the request's first header field of that name (case-insensitive), or
 * NULL. */
const char *request_header(const request *r, const char *name);
/* The fields as the transports take them (http_build_get, curl_glue_get). */
const char *const *request_fields(const request *r);

typedef struct header {
    char *name;
    char *value;
} header;

typedef struct response {
    char *url; /* the URL this response answers */
    int status;
    header *headers; /* in arrival order */
    size_t nheaders, cap_headers;
    char *body; /* NULL unless kept; not NUL-terminated */
    size_t body_len;
    bool truncated;   /* the body was cut at --max-size */
    crawl_wire *wire; /* the bytes as they went (a stage wants_wire), or
                                      * NULL (not asked, or a middleware's Response) */
    /* A 304 that answered a conditional request (--recrawl, downloadermw/recrawl.h):
     * status 304, the stored page's headers (updated by the 304's) and body; stored_at
     * is when the earlier crawl fetched that page (its store's fetched_at), or NULL. */
    bool not_modified;
    char *stored_at;
    /* When its request started and how long it took (crawl.h): a downloaded response's;
     * zero for one a middleware made from nothing (its record: made now). */
    crawl_times times;
} response;

response *response_new(const char *url, int status);
void response_free(response *r);
/* Append a header (copies both strings). */
void response_add_header(response *r, const char *name, const char *value);
/* The first header of that name (case-insensitive), or NULL. */
const char *response_header(const response *r, const char *name);
/* Take ownership of body (from malloc), replacing any body the response had. */
void response_set_body(response *r, char *body, size_t len);

#endif
