/* polite.c — the politeness middleware (polite.h): retries through the Queue, back-off
 * and autothrottle's latencies. One idea per function: when a try starts, what an
 * answer means, what a failure means. */
#include "polite.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "log.h"
#include "strmap.h"
#include "extension.h"

/* A URL being tried: how many tries it had, when this one started. Only URLs in
 * flight have one (the table is as large as the crawl's concurrency). */
typedef struct attempt {
    char *url;
    strmap_node node;
    int tries;
    uint64_t started_ms;
} attempt;

typedef struct polite {
    engine *e;
    host_feedback hosts; /* the polite Queue's (frontier.h) */
    strmap attempts;     /* attempt by URL */
} polite;

long long polite_retry_after_ms(const char *value, long long now_s)
{
    while (*value == ' ' || *value == '\t')
        value++;
    if (*value >= '0' && *value <= '9') {
        char *end;
        errno = 0;
        unsigned long long s = strtoull(value, &end, 10);
        while (*end == ' ' || *end == '\t')
            end++;
        if (*end)
            return -1;
        if (errno == ERANGE || s > POLITE_MAX_BACKOFF_S)
            s = POLITE_MAX_BACKOFF_S;
        return (long long)s * 1000;
    }
    time_t when = curl_getdate(value, NULL); /* the three HTTP date forms */
    if (when == (time_t)-1)
        return -1;
    long long d = (long long)when - now_s;
    if (d < 0)
        d = 0;
    if (d > POLITE_MAX_BACKOFF_S)
        d = POLITE_MAX_BACKOFF_S;
    return d * 1000;
}

static attempt *attempt_of(polite *p, const char *url)
{
    strmap_node *n = strmap_find(&p->attempts, url);
    if (n)
        return strmap_entry(n, attempt, node);
    attempt *a = xcalloc(1, sizeof *a);
    a->url = xstrdup(url);
    strmap_add(&p->attempts, &a->node, a->url);
    return a;
}

static void attempt_drop(strmap_node *n)
{
    attempt *a = strmap_entry(n, attempt, node);
    free(a->url);
    free(a);
}

/* The URL's life ends here (its record follows): forget its tries. */
static void attempt_end(polite *p, attempt *a)
{
    strmap_remove(&p->attempts, &a->node);
    attempt_drop(&a->node);
}

static uint64_t now_ms(polite *p)
{
    return selector_now_ms(engine_app(p->e)->loop);
}

/* ---- process_request: a try starts ---- */

static coro *process_request(void *self, request *req, mw_result *out)
{
    polite *p = self;
    const char *gave_up = hosts_gave_up(&p->hosts, hosts_slot(&p->hosts, req->url));
    if (gave_up) { /* recorded, not fetched */
        mw_ignore(out, "host gave up: %s", gave_up);
        return NULL;
    }
    attempt *a = attempt_of(p, req->url);
    a->tries++;
    a->started_ms = now_ms(p);
    mw_continue(out);
    return NULL;
}

/* ---- the answer ---- */

static bool worth_retrying(int status)
{
    return status == 408 || status == 429 || status == 500 || status == 502 || status == 503
        || status == 504;
}

/* 1 s, 2 s, 4 s, ... for the n-th trouble in a row, at most a minute. */
static uint64_t doubling_ms(int n)
{
    uint64_t ms = 1000;
    for (int i = 1; i < n && ms < 60000; i++)
        ms *= 2;
    return ms < 60000 ? ms : 60000;
}

/* Try the URL again later: a Request for itself, through the Queue. */
static void retry_later(polite *p, attempt *a, request *req, mw_result *out, const char *why)
{
    log_info("%s: %s: tried again later (try %d of %d)", req->url, why, a->tries,
             engine_app(p->e)->opt.max_tries);
    mw_reschedule(out, request_copy(req));
}

static coro *process_response(void *self, request *req, const response *resp, mw_result *out)
{
    polite *p = self;
    attempt *a = attempt_of(p, req->url);
    if (a->tries == 0) { /* a middleware's Response: no try of ours */
        attempt_end(p, a);
        mw_continue(out);
        return NULL;
    }
    int status = resp->status;
    hq_outcome how = status == 429 || status >= 500 ? HQ_TROUBLE
        : status >= 200 && status < 400             ? HQ_GOOD
                                                    : HQ_OTHER;
    hq_slot *host = hosts_slot(&p->hosts, req->url);
    hosts_latency(&p->hosts, host, now_ms(p) - a->started_ms, how);

    /* The host's back-off: Retry-After of a 429 or 503, or a 5xx after another. */
    unsigned errors5 = hosts_server_error(&p->hosts, host, status >= 500);
    long long backoff = -1;
    if (status == 429 || status == 503) {
        const char *ra = response_header(resp, "Retry-After");
        backoff = ra ? polite_retry_after_ms(ra, (long long)time(NULL)) : -1;
        if (backoff < 0)
            backoff = (long long)doubling_ms(a->tries);
    } else if (errors5 >= 2) {
        backoff = (long long)doubling_ms((int)errors5 - 1);
    }
    bool gave_up = false;
    if (backoff >= 0) {
        bool before = hosts_gave_up(&p->hosts, host) != NULL;
        gave_up = hosts_backoff(&p->hosts, host, (uint64_t)backoff);
        if (gave_up && !before)
            log_info("%s answered %d: its host is given up (%s): its URLs left are "
                     "recorded as failures",
                     req->url, status, hosts_gave_up(&p->hosts, host));
        else if (!gave_up)
            log_info("%s answered %d: its host gets nothing for %.1f s", req->url, status,
                     (double)backoff / 1000);
    } else {
        hosts_backoff_end(&p->hosts, host);
    }

    mw_continue(out);
    if (worth_retrying(status) && !gave_up && a->tries < engine_app(p->e)->opt.max_tries) {
        char why[32];
        snprintf(why, sizeof why, "status %d", status);
        retry_later(p, a, req, out, why);
    } else {
        attempt_end(p, a); /* this answer is the record */
    }
    return NULL;
}

/* ---- a try that failed ---- */

static coro *process_exception(void *self, request *req, const char *error, mw_result *out)
{
    polite *p = self;
    attempt *a = attempt_of(p, req->url);
    hosts_latency(&p->hosts, hosts_slot(&p->hosts, req->url), now_ms(p) - a->started_ms,
                  HQ_TROUBLE);
    mw_continue(out);
    if (a->tries < engine_app(p->e)->opt.max_tries)
        retry_later(p, a, req, out, error);
    else
        attempt_end(p, a); /* the failure is the record */
    return NULL;
}

static void polite_free(void *self)
{
    polite *p = self;
    strmap_clear(&p->attempts, attempt_drop);
    strmap_free(&p->attempts);
    free(p);
}

downloader_middleware polite_middleware(engine *e)
{
    polite *p = xcalloc(1, sizeof *p);
    p->e = e;
    frontier_hosts(engine_frontier(e), &p->hosts);
    strmap_init(&p->attempts);
    return (downloader_middleware){.name = "politeness",
                                   .self = p,
                                   .process_request = process_request,
                                   .process_response = process_response,
                                   .process_exception = process_exception,
                                   .free = polite_free};
}

/* ---- the descriptor (extension.h) ---- */

static bool on(const settings *s)
{
    return s->polite && !s->frontier;
}

static int make(engine *e, const settings *s, downloader_middleware *out, char *err, size_t errlen)
{
    (void)s, (void)err, (void)errlen;
    *out = polite_middleware(e);
    return 0;
}

/* The descriptor (extension.h): the polite Queue's middleware (the Redis Queue
 * keeps politeness in Redis); order 900, last, so that its process_response (the
 * retry and back-off decisions) sees the download first. */
const extension politeness_extension = {"politeness", EXT_DOWNLOADER_MW, 900, on,
                                        .make_middleware = make};
