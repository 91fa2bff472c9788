/* test_polite.c — politeness (stage3_queue/frontier/hostqueue.h, polite.h), checked where it
 * matters: at the servers. Each host is a testsite of its own on 127.0.0.K with a
 * request log (--log: begin and end of each request, monotonic ms); crawl-queue runs
 * as a process against them.
 *
 * The servers' logs give the counts and the requests in flight at once (a server sees
 * fewer at once than the crawler has, never more). The spacing of starts is what the
 * crawler decided: its Queue's own log of starts and back-offs (-vv: "queue: start on
 * HOST at T ms"), on its clock. At a server a start arrives after a trip through the
 * loopback and two schedulers, which on a loaded 2-core CI box varies by tens of ms
 * (a 100 ms gap was once seen as 25.6 ms), so a server-side gap would need a slack as
 * large as the delay itself. The one server-side bound left on spacing is JITTER_MS
 * below a start another start may arrive behind: 15 ms, or env CRAWL_TEST_JITTER_MS
 * (the exercise grader, which runs several ASan builds at once, allows more).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "hostqueue.h"
#include "jsonl.h"
#include "polite.h"
#include "request_check.h"
#include "task.h"
#include "scratch.h"
#include "testsite_helper.h"

#define JITTER_MS jitter_ms()
enum { MAX_HOSTS = 50 };

static double jitter_ms(void)
{
    const char *e = getenv("CRAWL_TEST_JITTER_MS");
    double v = e ? strtod(e, NULL) : 0;
    return v > 0 ? v : 15.0;
}

static char *const dir = scratch_dir;
static testsite sites[MAX_HOSTS];
static int nsites;

/* The crawl-queue this build made, or env CRAWL_QUEUE_BIN's (the exercise grader's
 * copy, linked with a student's file: scripts/exercise.sh). */
static char *crawler(void)
{
    static char path[512];
    const char *e = getenv("CRAWL_QUEUE_BIN");
    snprintf(path, sizeof path, "%s", e && *e ? e : BIN_DIR "/crawl-queue");
    return path;
}

static void stop_sites(void)
{
    for (int i = 0; i < nsites; i++)
        testsite_stop(&sites[i]);
    nsites = 0;
}

/* After each test, passed or failed: its servers go. */
static int stop_all(void **state)
{
    (void)state;
    nsites = MAX_HOSTS;
    stop_sites();
    return 0;
}

/* Host k (1-based): a testsite on 127.0.0.k serving `site` (a site file's text, or
 * NULL: `gen` pages generated), its log in dir/log.k, extra arguments after. */
static void start_site(int k, const char *site, const char *gen, const char *extra1,
                       const char *extra2)
{
    char bind[32], log[300], file[300];
    snprintf(bind, sizeof bind, "127.0.0.%d", k);
    snprintf(log, sizeof log, "%s/log.%d", dir, k);
    unlink(log);
    const char *args[12];
    int n = 0;
    args[n++] = "--bind";
    args[n++] = bind;
    args[n++] = "--log";
    args[n++] = log;
    if (extra1)
        args[n++] = extra1;
    if (extra2)
        args[n++] = extra2;
    if (site) {
        snprintf(file, sizeof file, "%s/site.%d", dir, k);
        FILE *f = fopen(file, "w");
        assert_non_null(f);
        fputs(site, f);
        fclose(f);
        args[n++] = file;
    } else {
        args[n++] = "--generate";
        args[n++] = gen;
    }
    args[n] = NULL;
    assert_int_equal(testsite_start(&sites[nsites], args), 0);
    nsites++;
}

/* One request of a server's log. */
typedef struct hit {
    double begin, end;
    char path[256];
} hit;

/* Host k's requests, sorted by begin (at most cap). */
static size_t read_log(int k, hit *h, size_t cap)
{
    char log[300], line[600];
    snprintf(log, sizeof log, "%s/log.%d", dir, k);
    FILE *f = fopen(log, "r");
    size_t n = 0;
    if (!f)
        return 0;
    while (n < cap && fgets(line, sizeof line, f)) {
        char host[128], how[32];
        if (sscanf(line, "%lf %lf %127s %255s %31s", &h[n].begin, &h[n].end, host, h[n].path, how)
            == 5)
            n++;
    }
    fclose(f);
    for (size_t i = 1; i < n; i++) /* insertion sort: short logs */
        for (size_t j = i; j > 0 && h[j].begin < h[j - 1].begin; j--) {
            hit t = h[j];
            h[j] = h[j - 1];
            h[j - 1] = t;
        }
    return n;
}

/* read_log, once server k's log holds want requests: it writes a request's line after
 * the response went out, so a crawler may exit (and the test read the log) before the
 * last line is there. Waits 3 s at most (a loaded 2-core box), then reads what is. */
static size_t read_log_n(int k, hit *h, size_t cap, size_t want)
{
    size_t n = read_log(k, h, cap);
    for (int i = 0; i < 300 && n < want; i++) {
        struct timespec ms10 = {0, 10 * 1000 * 1000};
        nanosleep(&ms10, NULL);
        n = read_log(k, h, cap);
    }
    return n;
}

/* The most requests in flight at once (begin..end intervals overlapping). */
static int peak_in_flight(const hit *h, size_t n)
{
    int peak = 0;
    for (size_t i = 0; i < n; i++) {
        int at = 0;
        for (size_t j = 0; j < n; j++)
            at += h[j].begin <= h[i].begin && h[i].begin < h[j].end;
        if (at > peak)
            peak = at;
    }
    return peak;
}

/* The smallest gap between consecutive times (ascending). */
static double min_gap_of(const double *t, size_t n)
{
    double m = 1e18;
    for (size_t i = 1; i < n; i++)
        if (t[i] - t[i - 1] < m)
            m = t[i] - t[i - 1];
    return m;
}

static double min_gap(const hit *h, size_t n)
{
    double m = 1e18;
    for (size_t i = 1; i < n; i++)
        if (h[i].begin - h[i - 1].begin < m)
            m = h[i].begin - h[i - 1].begin;
    return m;
}

static const char *url_of(int k)
{
    return sites[k - 1].url;
}

/* The Queue's starts on host k (127.0.0.k), in the order it made them, from its -vv
 * log in the crawler's stderr from `from` on: "queue: start on 127.0.0.k at T ms, ..."
 * (at most cap). */
static size_t queue_starts_from(const char *from, int k, double *at, size_t cap)
{
    char host[32];
    snprintf(host, sizeof host, "127.0.0.%d", k);
    size_t n = 0;
    for (const char *p = from; p && (p = strstr(p, "queue: start on ")) && n < cap; p++) {
        char h[64];
        unsigned long long t;
        if (sscanf(p, "queue: start on %63s at %llu ms", h, &t) == 2 && strcmp(h, host) == 0)
            at[n++] = (double)t;
    }
    return n;
}

static size_t queue_starts(const crawl_run *r, int k, double *at, size_t cap)
{
    return queue_starts_from(r->err, k, at, cap);
}

/* Host k served `served` requests, each one a start of the Queue's, none two closer
 * than min_ms in its log (what: the flags, for the message). Returns the smallest gap.
 * A request that reached the host without a start of the Queue's (a parked one sent
 * straight on, say) is a start without its spacing. */
static double check_queue_spacing(const crawl_run *r, int k, size_t served, double min_ms,
                                  const char *what)
{
    double at[256];
    size_t n = queue_starts(r, k, at, 256);
    if (n != served)
        fail_msg("%s: host %d served %zu requests, the Queue's log has %zu starts: two "
                 "starts not both spaced by the Queue",
                 what, k, served, n);
    double gap = min_gap_of(at, n);
    if (gap < min_ms)
        fail_msg("%s: two starts %.0f ms apart in the Queue's log", what, gap);
    return gap;
}

/* The Queue's first back-off on host k (its -vv log: "queue: back-off on 127.0.0.k at
 * T ms for D ms") lasts want_ms at least, and after it (in the log: its clock is the
 * loop's, one value for a whole turn) it started nothing there until it ended, and
 * something after (the URL tried again). */
static void check_queue_backoff(const crawl_run *r, int k, double want_ms)
{
    char host[32];
    snprintf(host, sizeof host, "127.0.0.%d", k);
    double t = -1, ms = 0;
    const char *p = r->err;
    for (; t < 0 && p && (p = strstr(p, "queue: back-off on ")); p++) {
        char h[64];
        unsigned long long at, d;
        if (sscanf(p, "queue: back-off on %63s at %llu ms for %llu ms", h, &at, &d) == 3
            && strcmp(h, host) == 0) {
            t = (double)at;
            ms = (double)d;
        }
    }
    if (t < 0)
        fail_msg("the Queue never backed off from %s", host);
    if (ms < want_ms)
        fail_msg("the Queue backed off from %s for %.0f ms: want %.0f", host, ms, want_ms);
    double at[64];
    size_t n = queue_starts_from(p, k, at, 64);
    for (size_t i = 0; i < n; i++)
        if (at[i] < t + ms)
            fail_msg("the Queue started on %s %.0f ms into its %.0f ms back-off", host, at[i] - t,
                     ms);
    assert_true(n >= 1);
}

/* crawl-queue -v --format jsonl ROOTS... with the given flags (NULL-terminated). */
static void run_crawl(crawl_run *r, double limit, const char *flag, ...)
{
    char *argv[128];
    int n = 0;
    argv[n++] = crawler();
    argv[n++] = "-v";
    argv[n++] = "--format";
    argv[n++] = "jsonl";
    va_list ap;
    va_start(ap, flag);
    for (const char *a = flag; a && n < 64; a = va_arg(ap, const char *))
        argv[n++] = (char *)a;
    va_end(ap);
    for (int i = 0; i < nsites && n < 126; i++)
        argv[n++] = sites[i].url;
    argv[n] = NULL;
    assert_int_equal(run_crawler(r, argv, limit), 0);
    if (r->exit_code != 0)
        fail_msg("%s", crawl_run_describe(r));
}

/* ---- Retry-After and the autothrottle rule, in process ---- */

static void test_retry_after_values(void **state)
{
    (void)state;
    long long now = 1700000000;
    assert_int_equal(polite_retry_after_ms("2", now), 2000);
    assert_int_equal(polite_retry_after_ms(" 120 ", now), 120000);
    assert_int_equal(polite_retry_after_ms("0", now), 0);
    assert_int_equal(polite_retry_after_ms("99999999999999999999", now),
                     POLITE_MAX_BACKOFF_S * 1000);
    assert_int_equal(polite_retry_after_ms("2x", now), -1);
    assert_int_equal(polite_retry_after_ms("soon", now), -1);
    /* 1700000000 is Tue, 14 Nov 2023 22:13:20 GMT */
    assert_int_equal(polite_retry_after_ms("Tue, 14 Nov 2023 22:13:25 GMT", now), 5000);
    assert_int_equal(polite_retry_after_ms("Tue, 14 Nov 2023 22:13:00 GMT", now), 0);
    assert_int_equal(polite_retry_after_ms("Tuesday, 14-Nov-23 22:13:30 GMT", now), 10000);
}

/* put_nowait of a URL with nothing that travels with it (no redirect left). */
static void put(hostqueue *q, const char *url)
{
    crawl_request r = {url, 0, 0, NULL, NULL};
    hostqueue_put_nowait(q, &r);
}

/* The polite Queue, through the Frontier interface, hands back each request whole:
 * URL, max_redirect, depth, referrer, callback (absent ones absent). */
static void test_request_fields_survive(void **state)
{
    (void)state;
    char err[256];
    selector *loop = selector_new("epoll", err, sizeof err);
    assert_non_null(loop);
    hostqueue_config cfg = {.max_crawl_delay = 30, .max_delay = 60, .target_concurrency = 1};
    frontier fr = hostqueue_frontier(loop, NULL, &cfg);
    host_feedback hosts;
    assert_true(frontier_hosts(&fr, &hosts)); /* it is polite */
    crawl_request deep = {"http://a.example/x", 3, 7, "http://a.example/", "parse_item"};
    crawl_request root = {"http://b.example/", 10, 0, NULL, NULL};
    frontier_put_nowait(&fr, &deep);
    frontier_put_nowait(&fr, &root);
    assert_int_equal(frontier_qsize(&fr), 2);
    crawl_request *got[2];
    for (int i = 0; i < 2; i++) {
        task *t = task_new(loop, frontier_get(&fr), "get");
        assert_int_equal(run_until_complete(loop, t), 0);
        got[i] = task_future(t)->result.p;
        task_free(t);
    }
    if (strcmp(got[0]->url, "http://b.example/") == 0) { /* two hosts: any order */
        crawl_request *x = got[0];
        got[0] = got[1];
        got[1] = x;
    }
    assert_same_request(got[0], &deep);
    assert_same_request(got[1], &root);
    assert_int_equal(frontier_unfinished(&fr), 2);
    for (int i = 0; i < 2; i++) {
        frontier_task_done(&fr, got[i]->url);
        free(got[i]);
    }
    assert_int_equal(frontier_unfinished(&fr), 0);
    frontier_free(&fr);
    selector_free(loop);
}

static void test_autothrottle_rule(void **state)
{
    (void)state;
    char err[256];
    selector *loop = selector_new("epoll", err, sizeof err);
    assert_non_null(loop);
    hostqueue q;
    hostqueue_config cfg = {.delay = 0.05,
                            .autothrottle = true,
                            .target_concurrency = 2,
                            .max_delay = 60,
                            .max_crawl_delay = 30};
    hostqueue_init(&q, loop, NULL, &cfg);
    const char *u = "http://a.example/x";
    put(&q, u);
    hq_slot *h = hostqueue_slot(&q, u);
    assert_non_null(h);
    assert_true(hostqueue_delay_of(&q, h) == 1.0); /* the start delay */
    for (int i = 0; i < 20; i++)                   /* 400 ms answers, aim 2 */
        hostqueue_latency(&q, h, 400, HQ_GOOD);
    double d = hostqueue_delay_of(&q, h);
    assert_true(d > 0.199 && d < 0.201);    /* latency / target */
    hostqueue_latency(&q, h, 10, HQ_OTHER); /* a fast 404: no lower */
    assert_true(hostqueue_delay_of(&q, h) > 0.199);
    hostqueue_latency(&q, h, 400, HQ_TROUBLE); /* a failed try: doubled */
    assert_true(hostqueue_delay_of(&q, h) > 0.39);
    for (int i = 0; i < 20; i++) /* 10 ms answers */
        hostqueue_latency(&q, h, 10, HQ_GOOD);
    assert_true(hostqueue_delay_of(&q, h) >= 0.05); /* never below --delay */
    for (int i = 0; i < 30; i++)                    /* failures: capped */
        hostqueue_latency(&q, h, 30000, HQ_TROUBLE);
    assert_true(hostqueue_delay_of(&q, h) <= 60);
    assert_true(hostqueue_crawl_delay(&q, h, 45)); /* capped at 30 */
    assert_false(hostqueue_crawl_delay(&q, h, 10));
    /* the queue holds the URL: the join counter says so */
    assert_int_equal(q.base.unfinished_tasks, 1);
    hostqueue_clear(&q);
    selector_free(loop);
}

/* --per-ip: hosts of one address share one key (their cap and delay); a host whose
 * name does not resolve keeps its own. The lookups run in the pool (dns.h), here with
 * a resolver of the test's own: a.example and b.example are 10.0.0.1. */
static int fake_resolve(const char *host, struct sockaddr_storage *addr, socklen_t *len, char *err,
                        size_t errlen)
{
    if (strcmp(host, "nowhere.example") == 0) {
        snprintf(err, errlen, "no such host");
        return -1;
    }
    struct sockaddr_in *in = (struct sockaddr_in *)addr;
    memset(addr, 0, sizeof *addr);
    in->sin_family = AF_INET;
    inet_pton(AF_INET, strcmp(host, "c.example") == 0 ? "10.0.0.2" : "10.0.0.1", &in->sin_addr);
    *len = sizeof *in;
    return 0;
}

static void stop_loop(selector *s, void *arg)
{
    (void)arg;
    selector_stop(s);
}

/* Keys with URLs that may start: in the heap, or new (the fresh line). */
static size_t waiting_keys(const hostqueue *q)
{
    size_t n = q->nheap;
    list_for_each(node, &q->fresh) n++;
    return n;
}

static void test_per_ip_keys(void **state)
{
    (void)state;
    char err[256];
    selector *loop = selector_new("epoll", err, sizeof err);
    threadpool *pool = threadpool_new(loop, 2, 64, err, sizeof err);
    assert_non_null(pool);
    dns_config dc = {
        .cache_size = 16, .ttl_ms = 60000, .timeout_ms = 5000, .resolve = fake_resolve};
    dns_resolver *dns = dns_new(loop, pool, &dc);
    hostqueue q;
    hostqueue_config cfg = {.per_host = 1,
                            .per_ip = true,
                            .max_crawl_delay = 30,
                            .max_delay = 60,
                            .target_concurrency = 1};
    hostqueue_init(&q, loop, dns, &cfg);
    const char *a = "http://a.example/1", *b = "http://b.example/2", *c = "http://c.example/3",
               *n = "http://nowhere.example/4", *lit = "http://10.0.0.2:8080/5";
    put(&q, a);
    put(&q, b);
    put(&q, c);
    put(&q, n);
    put(&q, lit);
    for (int i = 0; i < 50 && waiting_keys(&q) < 3; i++) { /* the lookups: 5 s at most */
        selector_call_later(loop, 100, stop_loop, NULL);
        selector_run(loop);
    }
    assert_string_equal(hostqueue_key(hostqueue_slot(&q, a)), "10.0.0.1");
    assert_string_equal(hostqueue_key(hostqueue_slot(&q, b)), "10.0.0.1");
    assert_string_equal(hostqueue_key(hostqueue_slot(&q, c)), "10.0.0.2");
    assert_string_equal(hostqueue_key(hostqueue_slot(&q, lit)), "10.0.0.2"); /* numeric: itself */
    assert_string_equal(hostqueue_key(hostqueue_slot(&q, n)), "nowhere.example");
    assert_int_equal(waiting_keys(&q), 3); /* three keys wait to start */
    assert_int_equal(hostqueue_qsize(&q), 5);
    hostqueue_clear(&q);
    dns_free(dns);
    threadpool_free(pool);
    selector_free(loop);
}

/* ---- at the servers ---- */

/* --per-host 2 --delay 0.1 on 3 hosts: never more than 2 in flight per host (at the
 * servers), the Queue's starts at least 100 ms apart; with --random-delay, 50 to
 * 150 ms apart, and not all alike. */
static void check_three_hosts(bool random)
{
    for (int k = 1; k <= 3; k++)
        start_site(k, NULL, "pages=12,links=4,size=500,seed=3", "--delay", "150");
    char trace[300];
    snprintf(trace, sizeof trace, "%s/trace.json", dir);
    crawl_run r;
    run_crawl(&r, 60, "-v", "--max-tasks", "10", "--per-host", "2", "--delay", "0.1",
              "--trace-events", trace, random ? "--random-delay" : NULL, NULL);
    assert_int_equal(r.nrecords, 36);
    /* the timeline: two lanes per host, named after it; no shared "slot N" lanes */
    FILE *tf = fopen(trace, "r");
    assert_non_null(tf);
    static char text[1 << 20];
    size_t tn = fread(text, 1, sizeof text - 1, tf);
    text[tn] = '\0';
    fclose(tf);
    for (int k = 1; k <= 3; k++) {
        char lane[200];
        for (int i = 0; i < 2; i++) {
            snprintf(lane, sizeof lane, "\"name\": \"%.*s #%d\"", (int)strlen(url_of(k)) - 1,
                     url_of(k), i);
            if (!strstr(text, lane))
                fail_msg("no lane %s in the timeline", lane);
        }
        snprintf(lane, sizeof lane, "\"name\": \"%.*s #2\"", (int)strlen(url_of(k)) - 1, url_of(k));
        assert_null(strstr(text, lane));
    }
    assert_null(strstr(text, "\"slot 0\""));
    /* the Queue's clock: no slack (it counts whole ms, and adds 1 to each delay); its
     * first start on a host is the root's, that sent robots.txt */
    double lo = 1e18;
    for (int k = 1; k <= 3; k++) {
        hit h[64];
        size_t n = read_log_n(k, h, 64, 13);
        assert_int_equal(n, 13); /* robots.txt and 12 pages */
        assert_true(peak_in_flight(h, n) <= 2);
        double gap = random ? check_queue_spacing(&r, k, n, 50, "--delay 0.1 --random-delay")
                            : check_queue_spacing(&r, k, n, 100, "--delay 0.1");
        lo = gap < lo ? gap : lo;
    }
    if (random)
        assert_true(lo < 95); /* some under 0.1 s: it varies */
    crawl_run_free(&r);
    stop_sites();
}

static void test_per_host_and_delay(void **state)
{
    (void)state;
    check_three_hosts(false);
}

static void test_random_delay(void **state)
{
    (void)state;
    check_three_hosts(true);
}

/* robots.txt's Crawl-delay: 0.5 obeyed; 120 capped to --max-crawl-delay 1 (said). */
static void test_crawl_delay(void **state)
{
    (void)state;
    start_site(1,
               "page /robots.txt type=text/plain body=\"User-agent: *\\nCrawl-delay: 0.5\\n\"\n"
               "page /\n link /a /b /c\npage /a\npage /b\npage /c\n",
               NULL, NULL, NULL);
    start_site(2,
               "page /robots.txt type=text/plain body=\"User-agent: *\\nCrawl-delay: 120\\n\"\n"
               "page /\n link /a /b /c\npage /a\npage /b\npage /c\n",
               NULL, NULL, NULL);
    crawl_run r;
    run_crawl(&r, 60, "-v", "--per-host", "1", "--max-crawl-delay", "1", NULL);
    assert_int_equal(r.nrecords, 8);
    hit h[16];
    assert_int_equal(read_log_n(1, h, 16, 5), 5);
    assert_int_equal(read_log_n(2, h, 16, 5), 5);
    /* the root's first start sent robots.txt: its delay counts from there */
    check_queue_spacing(&r, 1, 5, 500, "Crawl-delay 0.5");
    check_queue_spacing(&r, 2, 5, 1000, "Crawl-delay 120, capped at 1");
    double at[8];
    assert_int_equal(queue_starts(&r, 2, at, 8), 5);
    assert_true(at[4] - at[0] < 10000); /* not 120 s apart */
    assert_non_null(strstr(r.err, "asks a Crawl-delay of 120 s: capped at 1 s"));
    crawl_run_free(&r);
    stop_sites();
}

/* robots.txt redirected to another host: its Crawl-delay is the first origin's (host
 * 1's pages 0.5 s apart), not the host it was found on. */
static void test_crawl_delay_redirected(void **state)
{
    (void)state;
    start_site(2, /* sites[0]: host 2 is started first */
               "page /robots.txt type=text/plain body=\"User-agent: *\\nCrawl-delay: 0.5\\n\"\n",
               NULL, NULL, NULL);
    char site1[512];
    snprintf(site1, sizeof site1,
             "page /robots.txt status=301 location=%srobots.txt\n"
             "page /\n link /a /b /c\npage /a\npage /b\npage /c\n",
             sites[0].url);
    start_site(1, site1, NULL, NULL, NULL);
    crawl_run r;
    run_crawl(&r, 60, "-v", "--per-host", "1", NULL);
    hit h[16];
    assert_int_equal(read_log_n(1, h, 16, 5), 5); /* robots.txt (the 301), 4 pages */
    check_queue_spacing(&r, 1, 5, 500, "Crawl-delay 0.5 through a redirect");
    crawl_run_free(&r);
    stop_sites();
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Issue 27 M6: a robots.txt dripping held a worker per URL waiting for it — with 100
 * such origins a good host's 200 pages took 60 s instead of 0.23 s. Here 2 hosts drip
 * their robots.txt over about 5 s (24 octets, one each 200 ms), with 4 roots each,
 * and a good host has 200 pages; with --max-tasks 6 and the slow roots first, every
 * worker used to wait for a drip. Now the waiting URLs are parked: the good host's
 * last page must end within 2.5 s of the crawl's start (its own log; it takes well
 * under a second alone, and 5 s or more means a worker waited for a drip — the slack
 * is for a loaded CI box), and every URL still gets its record once the drips end.
 * The chapter's Queue (--chapter) and the polite one. */
static void test_robots_drip_holds_no_worker(void **state)
{
    (void)state;
    static const char slow[] =
        "page /robots.txt type=text/plain drip=1/200 body=\"User-agent: *\\nDisallow: /x\\n\"\n"
        "page /\n link /a /x\npage /a\npage /b\npage /c\npage /x\n";
    const char *const modes[][2] = {{"--chapter", "--max-tries=1"}, {"--per-host", "2"}};
    for (size_t m = 0; m < 2; m++) {
        for (int k = 1; k <= 2; k++)
            start_site(k, slow, NULL, NULL, NULL);
        char roots[6][300];
        for (int i = 0; i < 6; i++)
            snprintf(roots[i], sizeof roots[i], "%s%s", url_of(1 + i / 3), "a\0b\0c" + 2 * (i % 3));
        start_site(3, NULL, "pages=200,links=5,size=500,seed=3", NULL, NULL);
        crawl_run r;
        double t0 = now_ms();
        run_crawl(&r, 60, "--max-tasks", "6", modes[m][0], modes[m][1], roots[0], roots[1],
                  roots[2], roots[3], roots[4], roots[5], NULL);
        hit *h = calloc(400, sizeof *h);
        assert_non_null(h);
        size_t n = read_log(3, h, 400);
        assert_true(n >= 200);
        double last = 0;
        for (size_t i = 0; i < n; i++)
            last = h[i].end > last ? h[i].end : last;
        printf("%s %s: the good host's %zu requests done %.0f ms after the start; the "
               "crawl took %.1f s\n",
               modes[m][0], modes[m][1], n, last - t0, r.seconds);
        if (last - t0 > 2500)
            fail_msg("the good host's last request ended %.0f ms after the start: workers "
                     "waited for the dripping robots.txt files",
                     last - t0);
        assert_true(r.seconds > 4.8); /* the drips did take their time */
        assert_int_equal(r.nrecords, 200 + 2 * 5);
        int forbidden = 0;
        for (size_t i = 0; i < r.nrecords; i++) {
            const char *ex = jobj_str(r.records[i], "exception");
            forbidden += ex && strstr(ex, "forbidden by robots.txt") != NULL;
        }
        assert_int_equal(forbidden, 2); /* each slow host's /x */
        free(h);
        crawl_run_free(&r);
        stop_sites();
    }
}

/* robots.txt downloads have transfers of their own (docs/politeness.md, Limits): 10
 * hosts drip their robots.txt over about 5 s while a good host, whose rules came
 * first, has 200 pages. With --max-tasks 10 the drips used to take all 10 of libcurl's
 * transfers, and the good host's pages waited for them (its last page 5 s or more
 * after the start); now its pages keep --max-tasks transfers: its last page ends within
 * 2.5 s of the start (it takes well under a second alone; the slack is for a loaded
 * machine). Every URL is still recorded once the drips end. */
enum { DRIP_HOSTS = 10 };

static void test_robots_own_transfers(void **state)
{
    (void)state;
    static const char slow[] =
        "page /robots.txt type=text/plain drip=1/200 body=\"User-agent: *\\nDisallow: /x\\n\"\n"
        "page /\n link /a\npage /a\n";
    start_site(1, NULL, "pages=200,links=5,size=500,seed=3", NULL, NULL); /* the first root */
    for (int k = 2; k <= 1 + DRIP_HOSTS; k++)
        start_site(k, slow, NULL, NULL, NULL);
    crawl_run r;
    double t0 = now_ms();
    run_crawl(&r, 60, "--max-tasks", "10", "--max-tries", "1", NULL);
    static hit h[400];
    size_t n = read_log(1, h, 400);
    assert_int_equal(n, 201); /* robots.txt and 200 pages */
    double last = 0;
    for (size_t i = 0; i < n; i++)
        last = h[i].end > last ? h[i].end : last;
    print_message("the good host's last request ended %.0f ms after the start; the crawl "
                  "took %.1f s\n",
                  last - t0, r.seconds);
    if (last - t0 > 2500)
        fail_msg("the good host's last request ended %.0f ms after the start: its pages "
                 "waited for the dripping robots.txt files' transfers",
                 last - t0);
    assert_true(r.seconds > 4.5); /* the drips did take their time */
    assert_int_equal(r.nrecords, 200 + 2 * DRIP_HOSTS);
    crawl_run_free(&r);
    stop_sites();
}

/* A 429 with Retry-After: 2: that host gets nothing for 2 s, the other goes on; the
 * URL is fetched again and its record is the 200. One that stays 503 past
 * --max-tries is recorded with its 503. */
static void test_retry_after(void **state)
{
    (void)state;
    start_site(1,
               "page /\n link /a /b /c /d\n"
               "page /a busy=1 retry=2\npage /b\npage /c\npage /d busy=9/503\n",
               NULL, NULL, NULL);
    start_site(2, NULL, "pages=40,links=4,size=500,seed=4", "--delay", "100");
    crawl_run r;
    run_crawl(&r, 60, "--per-host", "1", "--max-tries", "3", "--ignore-robots", NULL);
    char a[300], d[300];
    snprintf(a, sizeof a, "%.250sa", url_of(1));
    snprintf(d, sizeof d, "%.250sd", url_of(1));
    const jobj *ra = crawl_run_find(&r, a), *rd = crawl_run_find(&r, d);
    assert_non_null(ra);
    assert_int_equal(jobj_int(ra, "status", 0), 200);
    assert_non_null(rd);
    assert_int_equal(jobj_int(rd, "status", 0), 503);
    assert_int_equal(r.nrecords, 5 + 40);

    hit h1[32], h2[64];
    size_t n1 = read_log(1, h1, 32), n2 = read_log(2, h2, 64);
    assert_int_equal(n2, 40);
    /* the 429: the first /a */
    size_t i429 = 0;
    while (i429 < n1 && strcmp(h1[i429].path, "/a") != 0)
        i429++;
    assert_true(i429 < n1);
    /* at the server, with --per-host 1: nothing else was in flight to host 1, and the
     * 429 ended before the crawler read it, so load only widens the gap after it */
    double t = h1[i429].end;
    int others = 0;
    for (size_t i = 0; i < n1; i++)
        if (h1[i].begin > t && h1[i].begin < t + 2000 - JITTER_MS)
            fail_msg("host 1 got %s %.0f ms after its 429 (Retry-After: 2)", h1[i].path,
                     h1[i].begin - t);
    for (size_t i = 0; i < n2; i++)
        others += h2[i].begin > t && h2[i].begin < t + 2000;
    assert_true(others >= 5); /* host 2 went on meanwhile */
    /* /d: 3 tries, 503 each, the second after 1 s, the third after 2 s of back-off */
    int tries = 0;
    for (size_t i = 0; i < n1; i++)
        tries += strcmp(h1[i].path, "/d") == 0;
    assert_int_equal(tries, 3);
    crawl_run_free(&r);
    stop_sites();
}

/* A host answering 503 with Retry-After forever (issue #27 L3): it is given up after
 * HQ_GIVE_UP_BACKOFFS back-offs in a row, and each of its URLs left is a record "host
 * gave up: ..." without a request — before, 30 URLs x 3 tries x 1 s of back-off each
 * (with Retry-After: 600, hours). Checked at the server (the requests it got) and in
 * the records (every URL one). */
enum { GIVE_UP_PAGES = 30 };

static void test_give_up(void **state)
{
    (void)state;
    char site[4096];
    size_t n = (size_t)snprintf(site, sizeof site, "page /\n link");
    for (int i = 1; i <= GIVE_UP_PAGES; i++)
        n += (size_t)snprintf(site + n, sizeof site - n, " /p%d", i);
    n += (size_t)snprintf(site + n, sizeof site - n, "\n");
    for (int i = 1; i <= GIVE_UP_PAGES; i++)
        n += (size_t)snprintf(site + n, sizeof site - n, "page /p%d busy=1000000/503 retry=1\n", i);
    assert_true(n < sizeof site);
    start_site(1, site, NULL, NULL, NULL);
    crawl_run r;
    run_crawl(&r, 60, "--per-host", "1", "--max-tries", "3", "--ignore-robots", NULL);
    assert_int_equal(r.nrecords, 1 + GIVE_UP_PAGES); /* never a lost URL */
    int gave_up = 0, answered = 0;
    for (int i = 1; i <= GIVE_UP_PAGES; i++) {
        char u[300];
        snprintf(u, sizeof u, "%.250sp%d", url_of(1), i);
        const jobj *o = crawl_run_find(&r, u);
        assert_non_null(o);
        const char *ex = jobj_str(o, "exception");
        if (ex && strstr(ex, "host gave up: "))
            gave_up++;
        else if (jobj_int(o, "status", 0) == 503)
            answered++;
        else
            fail_msg("%s: neither its 503 nor given up", u);
    }
    hit h[128];
    size_t nh = read_log(1, h, 128);
    size_t pages = 0;
    for (size_t i = 0; i < nh; i++)
        pages += strncmp(h[i].path, "/p", 2) == 0;
    print_message("%zu requests for the 503 pages, %d URLs given up, %d recorded with "
                  "their 503\n",
                  pages, gave_up, answered);
    assert_true(pages <= HQ_GIVE_UP_BACKOFFS); /* --per-host 1: one per back-off */
    assert_int_equal(gave_up + answered, GIVE_UP_PAGES);
    assert_true(gave_up >= GIVE_UP_PAGES - HQ_GIVE_UP_BACKOFFS);
    assert_non_null(strstr(r.err, "its host is given up (5 back-offs in a row"));
    crawl_run_free(&r);
    stop_sites();
}

/* Many new hosts, robots.txt obeyed (issue #27 L4): a new host's first start (its
 * robots.txt) takes turns with the pages of the hosts already met, instead of every
 * new host going first. --max-tasks 1 makes the crawler's starts one at a time, so the
 * servers' logs, merged by time, are its order of starts. */
enum { FAIR_HOSTS = 12 };

static void test_new_hosts_take_turns(void **state)
{
    (void)state;
    for (int k = 1; k <= FAIR_HOSTS; k++)
        start_site(k, NULL, "pages=4,links=2,size=300,seed=3", NULL, NULL);
    crawl_run r;
    run_crawl(&r, 60, "--per-host", "1", "--max-tasks", "1", NULL);
    assert_int_equal(r.nrecords, FAIR_HOSTS * 4);
    double first_page = 1e18;
    for (int k = 1; k <= FAIR_HOSTS; k++) {
        hit h[16];
        size_t n = read_log(k, h, 16);
        for (size_t i = 0; i < n; i++)
            if (strcmp(h[i].path, "/robots.txt") != 0 && h[i].begin < first_page)
                first_page = h[i].begin;
    }
    int robots_before = 0;
    for (int k = 1; k <= FAIR_HOSTS; k++) {
        hit h[16];
        size_t n = read_log(k, h, 16);
        for (size_t i = 0; i < n; i++)
            robots_before += strcmp(h[i].path, "/robots.txt") == 0 && h[i].begin < first_page;
    }
    print_message("%d of %d robots.txt files fetched before the first page\n", robots_before,
                  FAIR_HOSTS);
    assert_true(robots_before <= FAIR_HOSTS / 3); /* all of them before the fix */
    crawl_run_free(&r);
    stop_sites();
}

/* ---- the defaults: polite without a flag, the chapter's crawler with --chapter ---- */

/* Four hosts, one thing each: host 1 answers in 200 ms (the cap: requests in flight),
 * host 2's robots.txt asks Crawl-delay: 0.3, host 3's /a answers 429 with Retry-After:
 * 2 once, host 4's /p answers 500 twice (two 5xx in a row: a back-off), then 200. */
static void start_default_sites(void)
{
    start_site(1, NULL, "pages=60,links=20,size=500,seed=5", "--delay", "200");
    start_site(2,
               "page /robots.txt type=text/plain body=\"User-agent: *\\nCrawl-delay: 0.3\\n\"\n"
               "page /\n link /a /b /c\npage /a\npage /b\npage /c\n",
               NULL, NULL, NULL);
    start_site(3, "page /\n link /a /b /c\npage /a busy=1 retry=2\npage /b\npage /c\n", NULL, NULL,
               NULL);
    start_site(4, "page /\n link /p\npage /p busy=2/500\n", NULL, NULL, NULL);
}

static long status_of(const crawl_run *r, int k, const char *path)
{
    char u[300];
    snprintf(u, sizeof u, "%.250s%s", url_of(k), path + 1);
    const jobj *o = crawl_run_find(r, u);
    if (!o)
        fail_msg("no record for %s", u);
    return (long)jobj_int(o, "status", -1);
}

/* The first request of host k to path at or after index from (log order), or n. */
static size_t find_hit(const hit *h, size_t n, size_t from, const char *path)
{
    while (from < n && strcmp(h[from].path, path) != 0)
        from++;
    return from;
}

/* Issue #25, 1: a crawl with no flag is polite, checked at the servers: at most 8
 * requests in flight to one host (and more than one), robots.txt's Crawl-delay, a
 * 429's Retry-After and a back-off after two 5xx in a row, the URLs of both tried again
 * through the Queue (their records: 200). Before, without a flag: 45 in flight at
 * host 1, its pages 0 ms apart at host 2, the 429 and the 500s recorded at once. */
static void test_polite_by_default(void **state)
{
    (void)state;
    start_default_sites();
    crawl_run r;
    run_crawl(&r, 60, "-v", NULL);
    assert_int_equal(r.nrecords, 60 + 4 + 4 + 2);

    static hit h[128];
    size_t n = read_log(1, h, 128);
    assert_int_equal(n, 61); /* robots.txt and 60 pages */
    int peak = peak_in_flight(h, n);
    print_message("no flag: host 1 saw %d requests at once; ", peak);
    if (peak > 8 || peak < 4)
        fail_msg("host 1 saw %d requests at once: want at most 8 (and several)", peak);

    assert_int_equal(read_log_n(2, h, 128, 5), 5);
    /* robots.txt's own start included */
    double gap = check_queue_spacing(&r, 2, 5, 300, "Crawl-delay 0.3");
    print_message("host 2's starts at least %.0f ms apart\n", gap);

    /* host 3's 429: /b and /c may have gone with /a (8 in flight), so the servers'
     * log cannot tell a start made before the 429 arrived from one made after; the
     * Queue's log can */
    check_queue_backoff(&r, 3, 2000);
    n = read_log(3, h, 128);
    size_t i429 = find_hit(h, n, 0, "/a");
    assert_true(i429 < n);
    assert_true(find_hit(h, n, i429 + 1, "/a") < n); /* tried again */
    /* at the server too: the 429 ended before the crawler read it, and load only
     * delays the next start (JITTER_MS: the two logs round differently) */
    assert_true(h[find_hit(h, n, i429 + 1, "/a")].begin >= h[i429].end + 2000 - JITTER_MS);
    assert_int_equal(status_of(&r, 3, "/a"), 200);

    check_queue_backoff(&r, 4, 1000);
    n = read_log(4, h, 128);
    size_t p1 = find_hit(h, n, 0, "/p"), p2 = find_hit(h, n, p1 + 1, "/p"),
           p3 = find_hit(h, n, p2 + 1, "/p");
    assert_true(p3 < n); /* the first 500 tried again at once, then later */
    print_message("host 4: asked again %.0f ms after its second 500 in a row\n",
                  h[p3].begin - h[p2].end);
    /* the server's gap: from before the crawler read the 500 to after it started again,
     * so load only widens it */
    if (h[p3].begin - h[p2].end < 1000 - JITTER_MS)
        fail_msg("host 4 was asked again %.0f ms after its second 500 in a row (back-off: "
                 "1 s)",
                 h[p3].begin - h[p2].end);
    assert_int_equal(status_of(&r, 4, "/p"), 200);
    crawl_run_free(&r);
    stop_sites();
}

/* --chapter: the chapter's crawler, as crawl-queue was without a flag before issue #25
 * — no cap per host, no Crawl-delay, a 429 or a 500 is the record at once. */
static void test_chapter_flag(void **state)
{
    (void)state;
    start_default_sites();
    crawl_run r;
    run_crawl(&r, 60, "--chapter", NULL);
    assert_int_equal(r.nrecords, 60 + 4 + 4 + 2);

    static hit h[128];
    size_t n = read_log(1, h, 128);
    assert_int_equal(n, 61);
    int peak = peak_in_flight(h, n);
    print_message("--chapter: host 1 saw %d requests at once; host 2's starts %.0f ms "
                  "apart at least\n",
                  peak, (n = read_log(2, h, 128), min_gap(h, n)));
    if (peak <= 8)
        fail_msg("--chapter: host 1 saw %d requests at once: want the chapter's, more than 8",
                 peak);
    assert_int_equal(n, 5);
    assert_true(min_gap(h, n) < 300);              /* Crawl-delay not obeyed */
    assert_int_equal(status_of(&r, 3, "/a"), 429); /* recorded, not tried again */
    assert_int_equal(status_of(&r, 4, "/p"), 500);
    n = read_log(4, h, 128);
    assert_int_equal(n, 3); /* robots.txt, /, /p once */
    crawl_run_free(&r);
    stop_sites();
}

/* Head-of-line: 50 hosts of 40 pages, one answering in 2 s: with --max-tasks 20
 * --per-host 2 --delay 0.1 the other 49 reach >= 95 % of their throughput without it.
 * With the delay, the crawl is bound by politeness (49 hosts x 10 starts/s), not by
 * this machine's CPU, so the figure is the scheduler's, whatever else runs: a worker
 * that sat out a host's delay (or waited on the slow host) would show as lost
 * throughput. Measured at the servers: the 49 hosts' requests over the span from their
 * first to their last; the best run each way of 3 to 8 pairs (load only slows a run
 * down). */
typedef struct hol_watch {
    int from, to; /* the fast hosts */
    size_t want;  /* their requests, all served */
} hol_watch;

static size_t served_lines(int k)
{
    hit h[64];
    return read_log(k, h, 64);
}

/* Called 0.2 s into the crawl: wait (30 s at most) until the fast hosts are done,
 * then interrupt the crawl (the slow host would take 40 s more). */
static void hol_stop(pid_t pid, void *ctx)
{
    hol_watch *w = ctx;
    for (int i = 0; i < 3000; i++) {
        size_t got = 0;
        for (int k = w->from; k <= w->to; k++)
            got += served_lines(k);
        if (got >= w->want)
            break;
        usleep(10000);
    }
    kill(pid, SIGINT);
}

static double fast_throughput(int from, int to)
{
    double first = 1e18, last = 0;
    size_t n = 0;
    for (int k = from; k <= to; k++) {
        hit h[64];
        size_t m = read_log(k, h, 64);
        for (size_t i = 0; i < m; i++) {
            first = h[i].begin < first ? h[i].begin : first;
            last = h[i].end > last ? h[i].end : last;
        }
        n += m;
    }
    assert_int_equal(n, (size_t)(to - from + 1) * 41); /* robots.txt, 40 pages */
    return (double)n / ((last - first) / 1000.0);
}

static double hol_run(bool with_slow)
{
    stop_sites();
    for (int k = 1; k <= MAX_HOSTS; k++) {
        if (k == 1 && !with_slow) {
            nsites++; /* keep host k at sites[k - 1]; not started */
            continue;
        }
        start_site(k, NULL, "pages=40,links=5,size=800,seed=9", k == 1 ? "--delay" : NULL,
                   k == 1 ? "2000" : NULL);
    }
    char out[300];
    snprintf(out, sizeof out, "%s/hol.jsonl", dir);
    char *argv[11 + MAX_HOSTS] = {crawler(), "-q",      "--max-tasks", "20",       "--per-host",
                                  "2",       "--delay", "0.1",         "--output", out};
    int n = 10;
    for (int k = with_slow ? 1 : 2; k <= MAX_HOSTS; k++)
        argv[n++] = sites[k - 1].url;
    argv[n] = NULL;
    hol_watch w = {2, MAX_HOSTS, (size_t)(MAX_HOSTS - 1) * 41};
    crawl_run r;
    assert_int_equal(run_crawler_at(&r, argv, 90, 0.2, hol_stop, &w), 0);
    if (!r.term_signal && r.exit_code != 0)
        fail_msg("%s", crawl_run_describe(&r));
    crawl_run_free(&r);
    double t = fast_throughput(2, MAX_HOSTS);
    for (int k = 1; k <= MAX_HOSTS; k++)
        if (sites[k - 1].pid)
            testsite_stop(&sites[k - 1]);
    nsites = 0;
    return t;
}

static void test_head_of_line(void **state)
{
    (void)state;
    /* Load from elsewhere only ever slows a run down: the best run each way is the
     * estimate; 3 pairs, and up to 5 more while they disagree. */
    double without = 0, with = 0;
    for (int i = 0; i < 8 && (i < 3 || with < 0.95 * without); i++) {
        double a = hol_run(false), b = hol_run(true);
        without = a > without ? a : without;
        with = b > with ? b : with;
    }
    print_message("49 fast hosts: %.0f pages/s alone, %.0f with the slow one (%.1f %%)\n", without,
                  with, 100 * with / without);
    assert_true(with >= 0.95 * without);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_retry_after_values, stop_all),
        cmocka_unit_test_teardown(test_request_fields_survive, stop_all),
        cmocka_unit_test_teardown(test_autothrottle_rule, stop_all),
        cmocka_unit_test_teardown(test_per_ip_keys, stop_all),
        cmocka_unit_test_teardown(test_per_host_and_delay, stop_all),
        cmocka_unit_test_teardown(test_random_delay, stop_all),
        cmocka_unit_test_teardown(test_crawl_delay, stop_all),
        cmocka_unit_test_teardown(test_crawl_delay_redirected, stop_all),
        cmocka_unit_test_teardown(test_robots_drip_holds_no_worker, stop_all),
        cmocka_unit_test_teardown(test_robots_own_transfers, stop_all),
        cmocka_unit_test_teardown(test_retry_after, stop_all),
        cmocka_unit_test_teardown(test_give_up, stop_all),
        cmocka_unit_test_teardown(test_new_hosts_take_turns, stop_all),
        cmocka_unit_test_teardown(test_polite_by_default, stop_all),
        cmocka_unit_test_teardown(test_chapter_flag, stop_all),
        cmocka_unit_test_teardown(test_head_of_line, stop_all),
    };
    /* env CRAWL_TEST_FILTER: only the cases it matches (a cmocka glob), as the
     * stage3-robots grader runs the Crawl-delay ones. */
    const char *only = getenv("CRAWL_TEST_FILTER");
    if (only && *only)
        cmocka_set_test_filter(only);
    return cmocka_run_group_tests(tests, scratch_setup, scratch_teardown);
}
