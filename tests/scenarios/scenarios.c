/* scenarios.c — the scenario tests: the same cases against every crawler.
 *
 *   scenarios BINARY TRANSPORT SELECTOR       every case against one crawler
 *   scenarios --cross-stage --stage BIN...    the stages give identical records
 *   scenarios --https --stage BIN...          https through the curl transport
 *   scenarios --h2 --stage crawl-queue        HTTP/2 against nginx (exit 77: no nginx)
 *   scenarios --valgrind VG --stage BIN...    one crawl per stage x transport under
 *                                             valgrind memcheck (ctest -L valgrind)
 *   scenarios --oom --stage BIN...            each stage x transport runs out of memory
 *                                             on a page of 200,000 links, loudly
 *   scenarios --nofile N PROGRAM ARGS...      exec PROGRAM with its open-file limit,
 *                                             soft and hard, set to N (used by a case)
 *   scenarios --vmem KB PROGRAM ARGS...       exec PROGRAM with its address space
 *                                             limited to KB KiB, no core dump (--oom)
 *
 * Environment: SCENARIO_FILTER=sub1,sub2 runs only the cases whose name contains one
 * of the substrings; SCENARIO_TIME_LIMIT=SECS caps each crawler run (default 60).
 *
 * Each case starts testsite on a site of its own (tests/sites/scenario-*.site, or a
 * generated one), crawls it with --format jsonl and checks the records exactly. Every
 * child process (testsite, openssl) belongs to the case's state and is killed and
 * reaped in the teardown, whether the case passed or not; crawlers are run to the end
 * (or killed at their time limit) inside run_crawler.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <zlib.h>

#include "jsonl.h"
#include "testsite_helper.h"

#define CRAWL_LIMIT_SECS 60.0
#define MAX_SERVERS      2
#define MAX_STAGES       8
#define SKIPPED          77 /* ctest's SKIP_RETURN_CODE */

/* The crawler under test (per-stage mode). */
static const char *g_bin, *g_transport, *g_selector, *g_stage;
/* > 0: crawl_bin runs the crawler through `scenarios --nofile N` (g_self). */
static int g_nofile;
/* More arguments crawl_bin appends (g_nmore of them): a case's hundred roots. */
static char **g_more;
static int g_nmore;
static char g_self[1024];
/* The stages (cross-stage and https modes). */
static const char *g_stages[MAX_STAGES];
static int g_nstages;

/* ---- small helpers ------------------------------------------------------------------ */

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* "crawl-queue" -> "queue" */
static const char *stage_of(const char *bin)
{
    const char *b = strrchr(bin, '/');
    b = b ? b + 1 : bin;
    return strncmp(b, "crawl-", 6) == 0 ? b + 6 : b;
}

static bool port_accepts(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    bool ok = connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
    close(fd);
    return ok;
}

/* Kill (TERM, then KILL after a grace period) and reap a child. Bounded. */
static void kill_and_reap(pid_t pid)
{
    if (pid <= 0)
        return;
    kill(pid, SIGTERM);
    for (int i = 0; i < 200; i++) { /* up to 2 s */
        pid_t w = waitpid(pid, NULL, WNOHANG);
        if (w == pid || (w < 0 && errno != EINTR))
            return;
        sleep_ms(10);
    }
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
}

/* fork + exec argv in dir (NULL: here), stdin from /dev/null, stdout to out_fd (or
 * /dev/null when < 0), stderr to err_fd (or /dev/null). The child dies with us. */
static pid_t spawn(char *const argv[], const char *dir, int out_fd, int err_fd)
{
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(127);
    int devnull = open("/dev/null", O_RDWR);
    if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(out_fd >= 0 ? out_fd : devnull, 1) < 0
        || dup2(err_fd >= 0 ? err_fd : devnull, 2) < 0)
        _exit(127);
    close_range(3, ~0U, 0);
    if (dir && chdir(dir) < 0)
        _exit(127);
    signal(SIGPIPE, SIG_DFL);
    execvp(argv[0], argv);
    _exit(127);
}

/* ---- testsite (through tests/harness/testsite_helper.h) ----------------------------- */

typedef struct ts_server {
    testsite ts;
    char base[128]; /* ts.url without its trailing slash: "http://127.0.0.1:P" */
} ts_server;

static void ts_stop(ts_server *s)
{
    testsite_stop(&s->ts);
}

/* One counter of /__stats, or -1. */
static long ts_stat(const ts_server *s, const char *key)
{
    struct testsite_stats st;
    if (testsite_stats(&s->ts, &st) < 0)
        return -1;
    if (!strcmp(key, "served"))
        return st.served;
    if (!strcmp(key, "dropped"))
        return st.dropped;
    if (!strcmp(key, "peak_in_progress"))
        return st.peak_in_progress;
    if (!strcmp(key, "peak_connections"))
        return st.peak_connections;
    if (!strcmp(key, "robots_txt"))
        return st.robots_txt;
    return -1;
}

/* ---- per-case state ----------------------------------------------------------------- */

typedef struct case_ctx {
    ts_server srv[MAX_SERVERS];
    int nsrv;
    crawl_run run; /* the last crawl */
    bool have_run;
    pid_t extra_pid;  /* openssl s_server */
    char tmpdir[256]; /* removed in teardown */
} case_ctx;

static int case_setup(void **state)
{
    case_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return -1;
    c->extra_pid = -1;
    *state = c;
    g_more = NULL; /* a case that failed inside its crawl left its roots there */
    g_nmore = 0;
    return 0;
}

static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char path[512];
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path); /* flat: only files inside */
    }
    closedir(d);
    rmdir(dir);
}

static int case_teardown(void **state)
{
    case_ctx *c = *state;
    if (!c)
        return 0;
    for (int i = 0; i < c->nsrv; i++)
        ts_stop(&c->srv[i]);
    kill_and_reap(c->extra_pid);
    if (c->have_run)
        crawl_run_free(&c->run);
    if (c->tmpdir[0])
        remove_tree(c->tmpdir);
    free(c);
    *state = NULL;
    return 0;
}

/* Start a testsite: args NULL-terminated, e.g. ("scenario-x.site", NULL) — a bare
 * site name is looked up in SITES_DIR. Returns the base URL. */
static const char *start_site(case_ctx *c, const char *first, ...)
{
    assert_true(c->nsrv < MAX_SERVERS);
    const char *args[24];
    char path[512];
    int n = 0;
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a && n < 23; a = va_arg(ap, const char *)) {
        if (strstr(a, ".site") && a[0] != '/') {
            snprintf(path, sizeof path, "%s/%s", SITES_DIR, a);
            a = path;
        }
        args[n++] = a;
    }
    va_end(ap);
    args[n] = NULL;
    ts_server *s = &c->srv[c->nsrv];
    memset(s, 0, sizeof *s);
    c->nsrv++; /* stopped in teardown either way */
    if (testsite_start(&s->ts, args) < 0)
        fail_msg("testsite %s did not start", args[0] ? args[0] : "");
    _Static_assert(sizeof s->base == sizeof s->ts.url, "same size");
    memcpy(s->base, s->ts.url, sizeof s->base);
    s->base[sizeof s->base - 1] = '\0';
    size_t len = strlen(s->base);
    while (len > 0 && s->base[len - 1] == '/')
        s->base[--len] = '\0';
    return s->base;
}

/* base + path, in a rotating set of static buffers. */
static const char *U(const char *base, const char *path)
{
    static char bufs[16][512];
    static int next;
    char *b = bufs[next++ % 16];
    snprintf(b, 512, "%s%s", base, path);
    return b;
}

/* The time limit of one crawler run: CRAWL_LIMIT_SECS, or env SCENARIO_TIME_LIMIT
 * (seconds; the exercise grader sets it lower, as a stub may never finish). */
static double crawl_limit_secs(void)
{
    const char *e = getenv("SCENARIO_TIME_LIMIT");
    double v = e ? strtod(e, NULL) : 0;
    return v > 0 ? v : CRAWL_LIMIT_SECS;
}

/* Run bin with args (NULL-terminated, first = ...) for at most crawl_limit_secs();
 * result in c->run. */
static void run_argv(case_ctx *c, char **argv)
{
    if (c->have_run)
        crawl_run_free(&c->run);
    c->have_run = true;
    double limit = crawl_limit_secs();
    if (run_crawler(&c->run, argv, limit) < 0)
        fail_msg("cannot run %s: %s", argv[0], c->run.parse_error ? c->run.parse_error : "?");
    if (c->run.timed_out)
        fail_msg("%s ran past %.0f s and was killed\n%s", argv[0], limit,
                 crawl_run_describe(&c->run));
}

/* argv[0..n) then the NULL-ended arguments first, ... (at most cap - 1 in all), run as
 * run_argv does. */
static void run_appended(case_ctx *c, char **argv, int n, int cap, const char *first, va_list ap)
{
    for (const char *a = first; a && n < cap - 1; a = va_arg(ap, const char *))
        argv[n++] = (char *)a;
    argv[n] = NULL;
    run_argv(c, argv);
}

/* A record of bin has exactly the nine keys; crawl-queue's three more, http_version,
 * fetched_at and elapsed, by default (not --chapter: the chapter's crawler) "depth"
 * and "referrer" too (the spider middlewares'), and "url_normalized" when its URL is not
 * in RFC 3986's normal form: NULL, or what is wrong. */
static const char *record_keys_missing(const jobj *o, const char *bin, bool chapter)
{
    static const char *const keys[] = {"url",          "next_url",     "status",     "exception",
                                       "size",         "content_type", "encoding",   "num_urls",
                                       "num_new_urls", "http_version", "fetched_at", "elapsed",
                                       "depth",        "referrer"};
    static char why[64];
    size_t nkeys = strcmp(stage_of(bin), "queue") != 0 ? 9 : chapter ? 12 : 14;
    size_t more = nkeys > 9 && jobj_get(o, "url_normalized") ? 1 : 0;
    if (o->n != nkeys + more) {
        snprintf(why, sizeof why, "%zu keys, not %zu", o->n, nkeys + more);
        return why;
    }
    for (size_t k = 0; k < nkeys; k++)
        if (!jobj_get(o, keys[k])) {
            snprintf(why, sizeof why, "no \"%s\"", keys[k]);
            return why;
        }
    return NULL;
}

/* Crawl with the crawler under test: BIN --format jsonl -q --transport T --selector S
 * then the given arguments (options and roots, NULL-terminated). Checks the exit code
 * (0), the output's form and the summary. */
static const crawl_run *crawl_bin(case_ctx *c, const char *bin, const char *transport,
                                  const char *selector, const char *first, va_list ap)
{
    char *argv[160];
    char nofile[16];
    int n = 0;
    if (g_nofile > 0) {
        snprintf(nofile, sizeof nofile, "%d", g_nofile);
        argv[n++] = g_self;
        argv[n++] = "--nofile";
        argv[n++] = nofile;
    }
    argv[n++] = (char *)bin;
    argv[n++] = "--format";
    argv[n++] = "jsonl";
    argv[n++] = "-q";
    argv[n++] = "--transport";
    argv[n++] = (char *)transport;
    if (selector) {
        argv[n++] = "--selector";
        argv[n++] = (char *)selector;
    }
    for (const char *a = first; a && n < 47; a = va_arg(ap, const char *))
        argv[n++] = (char *)a;
    for (int i = 0; i < g_nmore && n < 159; i++)
        argv[n++] = g_more[i];
    argv[n] = NULL;
    run_argv(c, argv);
    const crawl_run *r = &c->run;
    char cmd[2048] = "";
    for (int i = 0; argv[i] && strlen(cmd) + 2 < sizeof cmd; i++) {
        /* the command line, cut short when long (a case's hundred roots) */
        strncat(cmd, argv[i], sizeof cmd - strlen(cmd) - 2);
        strcat(cmd, " ");
    }
    if (r->exit_code != 0 || r->parse_error || !r->summary)
        fail_msg("crawl failed: %s\n%s", cmd, crawl_run_describe(r));
    const jobj *s = r->summary;
    const char *st = jobj_str(s, "stage"), *tr = jobj_str(s, "transport"),
               *se = jobj_str(s, "selector");
    if (jobj_int(s, "done", -1) != (long long)r->nrecords || jobj_int(s, "todo", -1) != 0
        || !jobj_get(s, "interrupted") || jobj_get(s, "interrupted")->b || !st
        || strcmp(st, stage_of(bin)) || !tr || strcmp(tr, transport)
        || (selector && (!se || strcmp(se, selector))))
        fail_msg("bad summary (want done=%zu todo=0 stage=%s transport=%s selector=%s): "
                 "%s\n%s",
                 r->nrecords, stage_of(bin), transport, selector ? selector : "*", cmd,
                 crawl_run_describe(r));
    bool chapter = false;
    for (int i = 0; argv[i]; i++)
        chapter = chapter || strcmp(argv[i], "--chapter") == 0;
    for (size_t i = 0; i < r->nrecords; i++) {
        const char *missing = record_keys_missing(r->records[i], bin, chapter);
        if (missing)
            fail_msg("record %zu: %s\n%s", i, missing, crawl_run_describe(r));
    }
    return r;
}

static const crawl_run *crawl(case_ctx *c, const char *first, ...)
{
    va_list ap;
    va_start(ap, first);
    const crawl_run *r = crawl_bin(c, g_bin, g_transport, g_selector, first, ap);
    va_end(ap);
    return r;
}

static const crawl_run *crawl_with(case_ctx *c, const char *bin, const char *transport,
                                   const char *first, ...)
{
    va_list ap;
    va_start(ap, first);
    const crawl_run *r = crawl_bin(c, bin, transport, NULL, first, ap);
    va_end(ap);
    return r;
}

/* ---- expectations --------------------------------------------------------------------- */

#define ANY     ((const char *)1) /* a string field that is not checked */
#define NUL_    ((const char *)0) /* a string field that must be null */
#define NOCHECK (-2)              /* a number that is not checked */

typedef struct exp_rec {
    const char *url;            /* path under the base ("/x"), or a whole URL */
    int status;                 /* -1: null */
    const char *next_url;       /* path or URL; NUL_: null */
    long long size;             /* NOCHECK: any */
    const char *content_type;   /* NUL_, ANY or the value */
    const char *encoding;       /* NUL_, ANY or the value */
    int num_urls, num_new_urls; /* NOCHECK: any */
    bool exception;             /* the exception must be a non-empty string (else null) */
} exp_rec;

/* A page: 200, html, utf-8, n links of which k new. */
#define PAGE(u, n, k)                                                                              \
    {                                                                                              \
        u, 200, NUL_, NOCHECK, "text/html", "utf-8", n, k, false                                   \
    }
/* A redirect record. */
#define REDIR(u, code, to)                                                                         \
    {                                                                                              \
        u, code, to, 0, NUL_, NUL_, 0, 0, false                                                    \
    }
/* A network failure. */
#define FAILED(u)                                                                                  \
    {                                                                                              \
        u, -1, NUL_, 0, NUL_, NUL_, 0, 0, true                                                     \
    }

static const char *full(const char *base, const char *u)
{
    return strncmp(u, "http", 4) == 0 ? u : U(base, u);
}

static void check_str(const crawl_run *r, const char *url, const jobj *rec, const char *key,
                      const char *want, const char *base)
{
    if (want == ANY)
        return;
    const jv *v = jobj_get(rec, key);
    if (!want) {
        if (!v || v->type != JV_NULL)
            fail_msg("%s: \"%s\" should be null, is %s\n%s", url, key,
                     v && v->type == JV_STR ? v->str : "not a string", crawl_run_describe(r));
        return;
    }
    const char *w = base ? full(base, want) : want;
    if (!v || v->type != JV_STR || strcmp(v->str, w) != 0)
        fail_msg("%s: \"%s\" should be \"%s\", is %s\n%s", url, key, w,
                 v && v->type == JV_STR ? v->str : "null or absent", crawl_run_describe(r));
}

static void check_num(const crawl_run *r, const char *url, const jobj *rec, const char *key,
                      long long want)
{
    if (want == NOCHECK)
        return;
    const jv *v = jobj_get(rec, key);
    if (want == -1) {
        if (!v || v->type != JV_NULL)
            fail_msg("%s: \"%s\" should be null, is %g\n%s", url, key,
                     v && v->type == JV_NUM ? v->num : 0.0, crawl_run_describe(r));
        return;
    }
    if (!v || v->type != JV_NUM || (long long)v->num != want)
        fail_msg("%s: \"%s\" should be %lld, is %s%lld\n%s", url, key, want,
                 v && v->type == JV_NUM ? "" : "(not a number) ",
                 v && v->type == JV_NUM ? (long long)v->num : 0, crawl_run_describe(r));
}

static const jobj *expect_record(const crawl_run *r, const char *base, const exp_rec *e)
{
    const char *url = full(base, e->url);
    const jobj *rec = crawl_run_find(r, url);
    if (!rec)
        fail_msg("no record for %s\n%s", url, crawl_run_describe(r));
    check_num(r, url, rec, "status", e->status);
    check_str(r, url, rec, "next_url", e->next_url, base);
    check_num(r, url, rec, "size", e->size);
    check_str(r, url, rec, "content_type", e->content_type, NULL);
    check_str(r, url, rec, "encoding", e->encoding, NULL);
    check_num(r, url, rec, "num_urls", e->num_urls);
    check_num(r, url, rec, "num_new_urls", e->num_new_urls);
    const char *ex = jobj_str(rec, "exception");
    if (e->exception && (!ex || !ex[0]))
        fail_msg("%s: expected an exception\n%s", url, crawl_run_describe(r));
    if (!e->exception && !jobj_is_null(rec, "exception"))
        fail_msg("%s: unexpected exception '%s'\n%s", url, ex ? ex : "?", crawl_run_describe(r));
    return rec;
}

/* Exactly these records, no others. */
static void expect_records(const crawl_run *r, const char *base, const exp_rec *e, size_t n)
{
    for (size_t i = 0; i < n; i++)
        expect_record(r, base, &e[i]);
    if (r->nrecords != n)
        fail_msg("%zu records, expected %zu\n%s", r->nrecords, n, crawl_run_describe(r));
}

#define EXPECT(r, base, ...)                                                                       \
    do {                                                                                           \
        const exp_rec exp_[] = {__VA_ARGS__};                                                      \
        expect_records((r), (base), exp_, sizeof exp_ / sizeof exp_[0]);                           \
    } while (0)

static bool is_queue(void)
{
    return g_stage && strcmp(g_stage, "queue") == 0;
}

/* The server answered `want` page requests (each page once) besides robots.txt, which
 * crawl-queue asks for once (it obeys robots.txt) and stages 1 and 2 never. */
static void expect_served(case_ctx *c, int srv, long want)
{
    long got = ts_stat(&c->srv[srv], "served");
    long robots = ts_stat(&c->srv[srv], "robots_txt");
    long want_robots = is_queue() ? 1 : 0;
    if (robots != want_robots)
        fail_msg("testsite saw %ld request(s) for /robots.txt, expected %ld\n%s", robots,
                 want_robots, crawl_run_describe(&c->run));
    if (got - robots != want)
        fail_msg("testsite served %ld requests besides robots.txt, expected %ld (each page "
                 "once)\n%s",
                 got - robots, want, crawl_run_describe(&c->run));
}

/* ---- the cases -------------------------------------------------------------------------- */

/* 1: a link to a page that is not there: a 404 record. */
static void test_missing_page(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "scenario-missing.site", NULL);
    const crawl_run *r = crawl(c, U(b, "/"), NULL);
    EXPECT(r, b, PAGE("/", 2, 2), PAGE("/a.html", 0, 0),
           {"/missing", 404, NUL_, NOCHECK, "text/html", "utf-8", 0, 0, false});
    expect_served(c, 0, 3);
}

/* 2: a -> b -> c -> a: every page once. */
static void test_link_cycle(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "scenario-cycle.site", NULL);
    const crawl_run *r = crawl(c, U(b, "/a"), NULL);
    EXPECT(r, b, PAGE("/a", 1, 1), PAGE("/b", 1, 1), PAGE("/c", 1, 0));
    expect_served(c, 0, 3);
}

/* 3: off-site and non-http links: neither fetched nor counted. */
static void test_offsite_links(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "scenario-offsite.site", NULL);
    const crawl_run *r = crawl(c, U(b, "/"), NULL);
    EXPECT(r, b, PAGE("/", 1, 1), PAGE("/ok", 0, 0));
    expect_served(c, 0, 2);
}

/* 4: --exclude: excluded links neither fetched nor counted. */
static void test_exclude(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "scenario-exclude.site", NULL);
    const crawl_run *r = crawl(c, "--exclude", "/private/|\\.pdf$", U(b, "/"), NULL);
    EXPECT(r, b, PAGE("/", 2, 2), PAGE("/keep.html", 0, 0), PAGE("/keep2.html", 0, 0));
    expect_served(c, 0, 3);
}

/* 5: two roots on one server: both page sets, nothing else. */
static void test_two_roots(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "scenario-tworoots.site", NULL);
    const crawl_run *r = crawl(c, "--max-tasks", "1", U(b, "/a/"), U(b, "/b/"), NULL);
    EXPECT(r, b, PAGE("/a/", 1, 1), PAGE("/a/1.html", 1, 0), PAGE("/b/", 2, 1),
           PAGE("/b/1.html", 0, 0));
    expect_served(c, 0, 4);
}

/* 6: a deep root with a fragment: recorded without it. */
static void test_deep_root_fragment(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "scenario-deep.site", NULL);
    const crawl_run *r = crawl(c, U(b, "/deep/page.html#frag"), NULL);
    EXPECT(r, b, PAGE("/deep/page.html", 3, 2), PAGE("/deep/other.html", 0, 0),
           PAGE("/top.html", 0, 0));
    expect_served(c, 0, 3);
}

/* 7: r1 -> r2 -> r3 -> page. */
static void test_redirect_chain(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "scenario-redirect-chain.site", NULL);
    const crawl_run *r = crawl(c, U(b, "/"), NULL);
    EXPECT(r, b, PAGE("/", 1, 1), REDIR("/r1", 301, "/r2"), REDIR("/r2", 302, "/r3"),
           REDIR("/r3", 307, "/page.html"), PAGE("/page.html", 1, 0));
    expect_served(c, 0, 5);
}

/* 8: --max-redirect 2 on a chain of five: three redirect records. */
static void test_redirect_limit(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "scenario-redirect-limit.site", NULL);
    const crawl_run *r = crawl(c, "--max-redirect", "2", U(b, "/r1"), NULL);
    EXPECT(r, b, REDIR("/r1", 302, "/r2"), REDIR("/r2", 302, "/r3"), REDIR("/r3", 302, "/r4"));
    expect_served(c, 0, 3);
}

/* 9: r1 -> r2 -> r1 ends. */
static void test_redirect_cycle(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "scenario-redirect-cycle.site", NULL);
    const crawl_run *r = crawl(c, U(b, "/r1"), NULL);
    EXPECT(r, b, REDIR("/r1", 302, "/r2"), REDIR("/r2", 301, "/r1"));
    expect_served(c, 0, 2);
}

/* 10: foo -> baz, bar -> baz: baz once. */
static void test_redirect_join(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "scenario-redirect-join.site", NULL);
    const crawl_run *r = crawl(c, U(b, "/"), NULL);
    EXPECT(r, b, PAGE("/", 2, 2), REDIR("/foo", 302, "/baz"), REDIR("/bar", 302, "/baz"),
           PAGE("/baz", 0, 0));
    expect_served(c, 0, 4);
}

/* 11: each of 300, 301, 302, 303, 307, 308 followed; an off-site one recorded only. */
static void test_redirect_codes(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "scenario-redirect-codes.site", NULL);
    const crawl_run *r = crawl(c, U(b, "/"), NULL);
    EXPECT(r, b, PAGE("/", 7, 7), REDIR("/c300", 300, "/t300"), REDIR("/c301", 301, "/t301"),
           REDIR("/c302", 302, "/t302"), REDIR("/c303", 303, "/t303"), REDIR("/c307", 307, "/t307"),
           REDIR("/c308", 308, "/t308"), REDIR("/coff", 301, "http://elsewhere.example/away"),
           PAGE("/t300", 0, 0), PAGE("/t301", 0, 0), PAGE("/t302", 0, 0), PAGE("/t303", 0, 0),
           PAGE("/t307", 0, 0), PAGE("/t308", 0, 0));
    expect_served(c, 0, 14);
}

/* Every record a 200 without exception; returns the sum of num_new_urls. */
static long long expect_all_ok(const crawl_run *r)
{
    long long sum = 0;
    for (size_t i = 0; i < r->nrecords; i++) {
        const jobj *o = r->records[i];
        if (jobj_int(o, "status", -1) != 200 || !jobj_is_null(o, "exception"))
            fail_msg("%s: status %lld, exception %s\n%s", jobj_str(o, "url"),
                     jobj_int(o, "status", -1), jobj_str(o, "exception"), crawl_run_describe(r));
        sum += jobj_int(o, "num_new_urls", 0);
    }
    return sum;
}

/* Each page of a generated site: "/" and "/p/1" .. "/p/N-1". */
static void expect_generated(const crawl_run *r, const char *b, long pages)
{
    if (r->nrecords != (size_t)pages)
        fail_msg("%zu records, expected %ld\n%s", r->nrecords, pages, crawl_run_describe(r));
    char path[64];
    for (long i = 0; i < pages; i++) {
        if (i == 0)
            snprintf(path, sizeof path, "/");
        else
            snprintf(path, sizeof path, "/p/%ld", i);
        if (!crawl_run_find(r, U(b, path)))
            fail_msg("no record for %s%s", b, path);
    }
    long long sum = expect_all_ok(r);
    if (sum != pages - 1)
        fail_msg("num_new_urls add up to %lld, expected %ld (each page new once)", sum, pages - 1);
}

/* 12: --max-tasks 3 seen from the server. */
static void test_max_tasks(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "--delay", "100", "--generate", "pages=40,links=4", NULL);
    const crawl_run *r = crawl(c, "--max-tasks", "3", U(b, "/"), NULL);
    expect_generated(r, b, 40);
    long peak = ts_stat(&c->srv[0], "peak_in_progress");
    long long inflight = jobj_int(r->summary, "peak_in_flight", -1);
    if (peak > 3 || peak < 2)
        fail_msg("testsite saw %ld requests at once; with --max-tasks 3 want 2..3", peak);
    if (inflight > 3 || inflight < 1)
        fail_msg("summary peak_in_flight %lld; with --max-tasks 3 want <= 3", inflight);
    assert_int_equal(jobj_int(r->summary, "max_tasks", -1), 3);
    expect_served(c, 0, 40);
}

/* 13: dropped twice, then served: --max-tries 4 gets it, --max-tries 1 does not. */
static void test_dropped_connection(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "scenario-drop.site", NULL);
    /* crawl-queue without robots.txt: after that request the curl transport would send
     * /flaky2 on the kept-alive connection, and libcurl sends a request again, once, on
     * a fresh one when a reused connection closes without an answer — a second drop in
     * one try. */
    const char *ignore = is_queue() ? "--ignore-robots" : NULL;
    const crawl_run *r = crawl(c, "--max-tries", "4", U(b, "/flaky1"), ignore, NULL);
    EXPECT(r, b, {"/flaky1", 200, NUL_, NOCHECK, "text/html", "utf-8", 0, 0, false});
    r = crawl(c, "--max-tries", "1", U(b, "/flaky2"), ignore, NULL);
    EXPECT(r, b, FAILED("/flaky2"));
    long dropped = ts_stat(&c->srv[0], "dropped");
    if (dropped != 3)
        fail_msg("testsite dropped %ld requests, expected 3", dropped);
}

/* 14: a port nobody listens on. */
static void test_refused_port(void **state)
{
    case_ctx *c = *state;
    int port = testsite_free_port();
    assert_true(port > 0);
    char root[64];
    snprintf(root, sizeof root, "http://127.0.0.1:%d/", port);
    const crawl_run *r = crawl(c, "--max-tries", "2", root, NULL);
    EXPECT(r, "", FAILED(root));
    const char *ex = jobj_str(r->records[0], "exception");
    if (!strcasestr(ex, "refused"))
        fail_msg("exception '%s' does not say 'refused'", ex);
    /* crawl-queue: robots.txt could not be had either, so the URL is not even tried */
    if (is_queue() && !strstr(ex, "robots.txt"))
        fail_msg("exception '%s' does not say 'robots.txt'", ex);
}

/* 15: Content-Type charset -> encoding. */
static void test_charset(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "scenario-charset.site", NULL);
    const crawl_run *r = crawl(c, U(b, "/"), NULL);
    EXPECT(r, b, PAGE("/", 4, 4),
           {"/latin1", 200, NUL_, NOCHECK, "text/html", "iso-8859-1", 0, 0, false},
           {"/nocharset", 200, NUL_, NOCHECK, "text/html", "utf-8", 0, 0, false},
           {"/quoted", 200, NUL_, NOCHECK, "text/html", "windows-1252", 0, 0, false},
           {"/spaced", 200, NUL_, NOCHECK, "text/html", "utf-8", 0, 0, false});
}

/* 16: no type, TEXT/HTML, xhtml, text/plain. */
static void test_content_types(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "scenario-types.site", NULL);
    const crawl_run *r = crawl(c, U(b, "/"), NULL);
    EXPECT(r, b, PAGE("/", 4, 4), {"/notype", 200, NUL_, 18, NUL_, NUL_, 0, 0, false},
           {"/upper", 200, NUL_, 18, "text/html", "utf-8", 1, 1, false},
           {"/xhtml", 200, NUL_, NOCHECK, "application/xhtml+xml", "utf-8", 1, 1, false},
           {"/plain", 200, NUL_, 20, "text/plain", "utf-8", 0, 0, false}, PAGE("/u1", 0, 0),
           PAGE("/x1", 0, 0));
}

/* 17: application/xml with href attributes. */
static void test_xml_links(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "scenario-xml.site", NULL);
    const crawl_run *r = crawl(c, U(b, "/feed.xml"), NULL);
    EXPECT(r, b, {"/feed.xml", 200, NUL_, NOCHECK, "application/xml", "utf-8", 3, 3, false},
           PAGE("/e1", 0, 0), PAGE("/e2", 0, 0), PAGE("/e3", 0, 0));
}

/* 18: an image/png body with href bytes: not parsed. */
static void test_binary_ignored(void **state)
{
    case_ctx *c = *state;
    char path[512];
    struct stat st;
    snprintf(path, sizeof path, "%s/files/scenario-image.png", SITES_DIR);
    assert_int_equal(stat(path, &st), 0);
    const char *b = start_site(c, "scenario-binary.site", NULL);
    const crawl_run *r = crawl(c, U(b, "/"), NULL);
    EXPECT(r, b, PAGE("/", 1, 1),
           {"/img.png", 200, NUL_, (long long)st.st_size, "image/png", "utf-8", 0, 0, false});
}

/* 19: <base>, unquoted, upper case, <area>, <link>, whitespace, entities. */
static void test_html_oddities(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "scenario-html-oddities.site", NULL);
    const crawl_run *r = crawl(c, U(b, "/"), NULL);
    EXPECT(r, b, PAGE("/", 7, 7), PAGE("/sub/one.html", 0, 0), PAGE("/sub/two.html", 0, 0),
           PAGE("/sub/three.html", 0, 0), PAGE("/sub/four.html", 0, 0),
           PAGE("/sub/five.html?x=1&y=2", 0, 0),
           {"/sub/style.css", 200, NUL_, 21, "text/css", "utf-8", 0, 0, false},
           PAGE("/abs.html", 0, 0));
}

/* 20: a response slower than --timeout. */
static void test_timeout(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "scenario-timeout.site", NULL);
    const crawl_run *r = crawl(c, "--timeout", "1", "--max-tries", "1", U(b, "/slow"), NULL);
    EXPECT(r, b, FAILED("/slow"));
    if (r->seconds >= 10)
        fail_msg("the crawl took %.1f s with --timeout 1", r->seconds);
}

/* 21: size is the body length. */
static void test_size(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "scenario-size.site", NULL);
    const crawl_run *r = crawl(c, U(b, "/"), NULL);
    EXPECT(r, b, PAGE("/", 3, 3), {"/exact.txt", 200, NUL_, 16, "text/plain", "utf-8", 0, 0, false},
           {"/filler.bin", 200, NUL_, 54321, "application/octet-stream", "utf-8", 0, 0, false},
           {"/drip.txt", 200, NUL_, 1000, "text/plain", "utf-8", 0, 0, false});
}

/* 22: a generated site of 2,000 pages: every page found. */
static void test_generated_2000(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "--generate", "pages=2000,links=12", NULL);
    const crawl_run *r = crawl(c, "--max-tasks", "50", U(b, "/"), NULL);
    expect_generated(r, b, 2000);
    expect_served(c, 0, 2000);
}

/* 23: --transport raw refuses an https root: exit 2, one line naming --transport curl. */
static void test_raw_refuses_https(void **state)
{
    case_ctx *c = *state;
    char *argv[] = {(char *)g_bin,
                    "--format",
                    "jsonl",
                    "--transport",
                    "raw",
                    "--selector",
                    (char *)g_selector,
                    "https://127.0.0.1:9/",
                    NULL};
    run_argv(c, argv);
    const crawl_run *r = &c->run;
    size_t lines = 0;
    for (size_t i = 0; i < r->err_len; i++)
        lines += r->err[i] == '\n';
    if (r->exit_code != 2 || lines != 1 || !strstr(r->err, "--transport curl") || r->out_len)
        fail_msg("want exit 2 and one stderr line naming --transport curl\n%s",
                 crawl_run_describe(r));
}

/* The User-Agent the server saw last. */
static void expect_user_agent(case_ctx *c, const char *want)
{
    struct testsite_stats st;
    if (testsite_stats(&c->srv[0].ts, &st) < 0)
        fail_msg("no /__stats from testsite");
    if (strcmp(st.user_agent, want) != 0)
        fail_msg("testsite saw User-Agent '%s', expected '%s'", st.user_agent, want);
}

/* 23b: the User-Agent header: crawlstages/VERSION from every stage and transport;
 * crawl-queue's --user-agent NAME sends NAME; stages 1 and 2 refuse the flag. */
static void test_user_agent(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "scenario-cycle.site", NULL);
    crawl(c, U(b, "/a"), NULL);
    expect_user_agent(c, "crawlstages/" CRAWL_VERSION);
    if (!is_queue()) {
        char *argv[] = {(char *)g_bin,
                        "--transport",
                        (char *)g_transport,
                        "--user-agent",
                        "scenariobot/1.0",
                        (char *)U(b, "/a"),
                        NULL};
        run_argv(c, argv);
        const crawl_run *r = &c->run;
        if (r->exit_code != 2 || !strstr(r->err, "unknown option '--user-agent'")
            || !strstr(r->err, "are crawl-queue's") || r->out_len)
            fail_msg("want exit 2 and one line refusing --user-agent\n%s", crawl_run_describe(r));
        return;
    }
    const crawl_run *r = crawl(c, "--user-agent", "scenariobot/1.0 (+http://x/)", U(b, "/a"), NULL);
    EXPECT(r, b, PAGE("/a", 1, 1), PAGE("/b", 1, 1), PAGE("/c", 1, 0));
    expect_user_agent(c, "scenariobot/1.0 (+http://x/)");
}

/* ---- hostile servers: a record for every URL, never a crash or a hang ------------------- */

/* The exception of path's record contains needle (case-insensitive), or with exact, is
 * exactly that. */
static void expect_exception(const crawl_run *r, const char *base, const char *path,
                             const char *needle, bool exact)
{
    const jobj *rec = crawl_run_find(r, full(base, path));
    const char *ex = rec ? jobj_str(rec, "exception") : NULL;
    if (!ex || (exact ? strcmp(ex, needle) != 0 : !strcasestr(ex, needle)))
        fail_msg("%s: exception '%s' does not say '%s'\n%s", path, ex ? ex : "(none)", needle,
                 crawl_run_describe(r));
}

static void expect_exception_has(const crawl_run *r, const char *base, const char *path,
                                 const char *needle)
{
    expect_exception(r, base, path, needle, false);
}

static void expect_exception_is(const crawl_run *r, const char *base, const char *path,
                                const char *want)
{
    expect_exception(r, base, path, want, true);
}

static bool is_raw(void)
{
    return strcmp(g_transport, "raw") == 0;
}

/* 24: answers that are not HTTP: a failure record each, in the same words on both
 * transports (common/web/http_head.h). */
static void test_hostile_status_line(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "scenario-hostile-status.site", NULL);
    const crawl_run *r = crawl(c, "--max-tries", "2", U(b, "/"), NULL);
    EXPECT(r, b, PAGE("/", 3, 3), FAILED("/nothttp"), FAILED("/badcode"), FAILED("/empty"));
    expect_exception_is(r, b, "/nothttp", "malformed status line");
    expect_exception_is(r, b, "/badcode", "malformed status line");
    expect_exception_is(r, b, "/empty", "connection closed before the response head");
}

/* 25b: responses at the edge of HTTP/1.1 (tests/sites/scenario-borderline.site lists
 * them with the rule each follows): the same record, word for word, on both transports
 * (issue 12 defect 1, issue 13 item 7). */
static void test_borderline_heads(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "scenario-borderline.site", NULL);
    const crawl_run *r = crawl(c, "--max-tries", "1", U(b, "/"), NULL);
    EXPECT(r, b, PAGE("/", 17, 17), {"/ok", 200, NUL_, 13, "text/html", "utf-8", 0, 0, false},
           {"/dup-type", 200, NUL_, 22, "text/html", "iso-8859-1", 1, NOCHECK, false},
           REDIR("/dup-loc", 302, "/ok"), FAILED("/two-loc"),
           {"/fold-type", 200, NUL_, 22, "text/html", "iso-8859-1", 1, NOCHECK, false},
           REDIR("/fold-loc", 302, "/fold%20ed"),
           {"/fold%20ed", 404, NUL_, NOCHECK, "text/html", "utf-8", 0, 0, false},
           FAILED("/no-colon"), FAILED("/space-colon"), FAILED("/cl-two"), FAILED("/cl-plus"),
           FAILED("/cl-hex"), FAILED("/s101"), FAILED("/s600"), FAILED("/s999"), FAILED("/big-loc"),
           {"/chunk-ext", 200, NUL_, 20, "text/html", "utf-8", 1, NOCHECK, false},
           {"/gzip", 200, NUL_, 18, "text/html", "utf-8", 1, NOCHECK, false}, FAILED("/brotli"));
    static const char *const failures[][2] = {
        {"/two-loc", "conflicting Location headers"},
        {"/no-colon", "malformed header line"},
        {"/space-colon", "whitespace between a header name and its colon"},
        {"/cl-two", "bad Content-Length"},
        {"/cl-plus", "bad Content-Length"},
        {"/cl-hex", "bad Content-Length"},
        {"/s101", "unrequested 101 Switching Protocols"},
        {"/s600", "malformed status line"},
        {"/s999", "malformed status line"},
        {"/big-loc", "header section over 65536 bytes"},
        {"/brotli", "unsupported Content-Encoding 'br'"},
    };
    for (size_t i = 0; i < sizeof failures / sizeof *failures; i++)
        expect_exception_is(r, b, failures[i][0], failures[i][1]);
}

/* 25: a head over 64 KB fails on both transports, in the same words; just under is fine. */
static void test_hostile_big_head(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "scenario-hostile-bighead.site", NULL);
    const crawl_run *r = crawl(c, "--max-tries", "2", U(b, "/"), NULL);
    EXPECT(r, b, PAGE("/", 2, 2), FAILED("/bighead"), PAGE("/okhead", 0, 0));
    expect_exception_has(r, b, "/bighead", "header section over 65536 bytes");
}

/* 26: --max-size: the first max_size bytes are kept and the record says so; a body of
 * exactly max_size is whole. */
static void test_hostile_max_size(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "scenario-hostile-maxsize.site", NULL);
    const crawl_run *r = crawl(c, "--max-size", "100000", U(b, "/"), NULL);
    EXPECT(r, b, PAGE("/", 2, 2), {"/big", 200, NUL_, 100000, "text/html", "utf-8", 0, 0, true},
           {"/fits", 200, NUL_, 100000, "text/html", "utf-8", 0, 0, false});
    expect_exception_has(r, b, "/big", "body truncated at 100000 bytes (--max-size)");
}

/* 27: Content-Length says more than the server sends before closing. */
static void test_hostile_short_body(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "scenario-hostile-short.site", NULL);
    const crawl_run *r = crawl(c, "--max-tries", "2", U(b, "/"), NULL);
    EXPECT(r, b, PAGE("/", 1, 1), FAILED("/short"));
    expect_exception_has(r, b, "/short", is_raw() ? "shorter than Content-Length" : "partial");
}

/* 28: an RST in the middle of the body. */
static void test_hostile_reset(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "scenario-hostile-reset.site", NULL);
    const crawl_run *r = crawl(c, "--max-tries", "2", U(b, "/"), NULL);
    EXPECT(r, b, PAGE("/", 1, 1), FAILED("/reset"));
    expect_exception_has(r, b, "/reset", "reset by peer");
}

/* 29: a body, and a head, dripping slower than --timeout: timeouts, in bounded time. */
static void test_hostile_drip(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "scenario-hostile-drip.site", NULL);
    const crawl_run *r = crawl(c, "--timeout", "1", "--max-tries", "1", U(b, "/"), NULL);
    EXPECT(r, b, PAGE("/", 2, 2), FAILED("/drip"), FAILED("/driphead"));
    expect_exception_has(r, b, "/drip", "timeout");
    expect_exception_has(r, b, "/driphead", "timeout");
    if (r->seconds >= 5)
        fail_msg("the crawl took %.1f s with --timeout 1", r->seconds);
}

/* 30: a redirect without Location, and Locations that are not URLs: recorded, with why. */
static void test_hostile_redirects(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "scenario-hostile-redirect.site", NULL);
    const crawl_run *r = crawl(c, U(b, "/"), NULL);
    EXPECT(r, b, PAGE("/", 3, 3), {"/noloc", 302, NUL_, 0, NUL_, NUL_, 0, 0, true},
           {"/badloc", 301, NUL_, 0, NUL_, NUL_, 0, 0, true},
           {"/badport", 302, NUL_, 0, NUL_, NUL_, 0, 0, true});
    expect_exception_has(r, b, "/noloc", "redirect without Location");
    expect_exception_has(r, b, "/badloc", "unparseable Location");
    expect_exception_has(r, b, "/badport", "unparseable Location");
}

/* 31: 100,000 distinct links on a page: counted right, --max-pages obeyed; 100,000
 * off-site ones: neither counted nor followed. */
static void test_hostile_many_links(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "scenario-hostile-manylinks.site", NULL);
    const crawl_run *r = crawl(c, "--max-pages", "5", U(b, "/many"), NULL);
    EXPECT(r, b, {"/many", 200, NUL_, NOCHECK, "text/html", "utf-8", 100000, 100000, false},
           {"/l/1", 404, NUL_, NOCHECK, "text/html", "utf-8", 0, 0, false},
           {"/l/2", 404, NUL_, NOCHECK, "text/html", "utf-8", 0, 0, false},
           {"/l/3", 404, NUL_, NOCHECK, "text/html", "utf-8", 0, 0, false},
           {"/l/4", 404, NUL_, NOCHECK, "text/html", "utf-8", 0, 0, false});
    if (r->seconds >= 20)
        fail_msg("a page of 100,000 links took %.1f s", r->seconds);
    r = crawl(c, U(b, "/offsite"), NULL);
    EXPECT(r, b, PAGE("/offsite", 0, 0));
    if (r->seconds >= 20)
        fail_msg("a page of 100,000 off-site links took %.1f s", r->seconds);
}

/* 32: 32 KB of random bytes labelled text/html: a 200 of the right size; whatever
 * links the parser finds there are fetched and recorded. */
static void test_hostile_junk(void **state)
{
    case_ctx *c = *state;
    char path[512];
    struct stat st;
    snprintf(path, sizeof path, "%s/files/hostile-junk.bin", SITES_DIR);
    assert_int_equal(stat(path, &st), 0);
    const char *b = start_site(c, "scenario-hostile-junk.site", NULL);
    const crawl_run *r = crawl(c, U(b, "/"), NULL);
    expect_record(r, b, &(exp_rec)PAGE("/", 1, 1));
    const jobj *junk = expect_record(r, b,
                                     &(exp_rec){"/junk.html", 200, NUL_, (long long)st.st_size,
                                                "text/html", "utf-8", NOCHECK, NOCHECK, false});
    long long n = jobj_int(junk, "num_urls", -1);
    if (r->nrecords != (size_t)(2 + n))
        fail_msg("%zu records; want 2 + the %lld links found in the junk\n%s", r->nrecords, n,
                 crawl_run_describe(r));
    if (n == 1) /* the one real link, after 16 KB of junk */
        expect_record(
            r, b, &(exp_rec){"/after-junk", 404, NUL_, NOCHECK, "text/html", "utf-8", 0, 0, false});
}

/* The one record whose url starts with base + prefix. */
static void expect_prefixed(const crawl_run *r, const char *base, const char *prefix)
{
    const char *want = U(base, prefix);
    size_t hits = 0;
    for (size_t i = 0; i < r->nrecords; i++) {
        const char *u = jobj_str(r->records[i], "url");
        if (u && strncmp(u, want, strlen(want)) == 0)
            hits++;
    }
    if (hits != 1)
        fail_msg("%zu records for %s...; want 1\n%s", hits, want, crawl_run_describe(r));
}

/* 33: NUL bytes and invalid UTF-8 in HTML (the links around them count) and in headers
 * (a NUL fails the response, bad UTF-8 does not). */
static void test_hostile_nul_utf8(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "scenario-hostile-nul.site", NULL);
    const crawl_run *r = crawl(c, "--max-tries", "2", U(b, "/"), NULL);
    const exp_rec e[] = {
        PAGE("/", 3, 3),
        {"/nul.html", 200, NUL_, 261, "text/html", "utf-8", 6, 6, false},
        FAILED("/nulhead"),
        {"/badutf8head", 200, NUL_, 24, "text/html", "utf-8", 1, 1, false},
        {"/n1", 404, NUL_, NOCHECK, "text/html", "utf-8", 0, 0, false},
        {"/n2", 404, NUL_, NOCHECK, "text/html", "utf-8", 0, 0, false},
        {"/n5", 404, NUL_, NOCHECK, "text/html", "utf-8", 0, 0, false},
        {"/n6", 404, NUL_, NOCHECK, "text/html", "utf-8", 0, 0, false},
        {"/n7", 404, NUL_, NOCHECK, "text/html", "utf-8", 0, 0, false},
    };
    for (size_t i = 0; i < sizeof e / sizeof e[0]; i++)
        expect_record(r, b, &e[i]);
    expect_prefixed(r, b, "/n3");  /* href "/n3<NUL>x": the NUL becomes U+FFFD */
    expect_prefixed(r, b, "/caf"); /* href "/caf<0xE9>" */
    if (r->nrecords != 11)
        fail_msg("%zu records, expected 11\n%s", r->nrecords, crawl_run_describe(r));
    expect_exception_has(r, b, "/nulhead", "nul byte");
}

/* 34: HTML nested 100,000 levels deep. */
static void test_hostile_deep_nesting(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "scenario-hostile-deep.site", NULL);
    const crawl_run *r = crawl(c, U(b, "/deep"), NULL);
    EXPECT(r, b, PAGE("/deep", 1, 1), PAGE("/before", 0, 0));
    if (r->seconds >= 10)
        fail_msg("a page nested 100,000 deep took %.1f s", r->seconds);
}

/* ---- hostile, round 2: what a server sends never reaches the terminal raw --------- */

/* Run the crawler under test with --transport and --selector, then args (NULL-ended),
 * as run_argv does (no --format, no -q). */
static const crawl_run *run_bin(case_ctx *c, const char *first, ...)
{
    char *argv[40] = {(char *)g_bin, "--transport", (char *)g_transport, "--selector",
                      (char *)g_selector};
    va_list ap;
    va_start(ap, first);
    run_appended(c, argv, 5, 40, first, ap);
    va_end(ap);
    return &c->run;
}

/* Exit status exit, nothing on stdout and exactly one line on stderr, containing
 * needle. */
static void expect_one_line_exit(const crawl_run *r, int exit, const char *needle)
{
    size_t lines = 0;
    for (size_t i = 0; i < r->err_len; i++)
        lines += r->err[i] == '\n';
    if (r->exit_code != exit || lines != 1 || !strstr(r->err, needle) || r->out_len)
        fail_msg("want exit %d, no output and one stderr line with \"%s\"\n%s", exit, needle,
                 crawl_run_describe(r));
}

/* Whether text (len bytes) is safe on a terminal: no control byte but newline, no DEL,
 * valid UTF-8 and no C1 control in it. Returns the offset of the first bad byte, or -1. */
static long terminal_unsafe_at(const char *text, size_t len)
{
    const unsigned char *p = (const unsigned char *)text;
    for (size_t i = 0; i < len;) {
        unsigned char b = p[i];
        if (b == '\n' || (b >= 0x20 && b < 0x7f)) {
            i++;
            continue;
        }
        size_t n = b >= 0xC2 && b <= 0xDF ? 2
            : b >= 0xE0 && b <= 0xEF      ? 3
            : b >= 0xF0 && b <= 0xF4      ? 4
                                          : 0;
        if (n == 0 || i + n > len || (b == 0xC2 && p[i + 1] <= 0x9F))
            return (long)i;
        for (size_t k = 1; k < n; k++)
            if ((p[i + k] & 0xC0) != 0x80)
                return (long)i;
        i += n;
    }
    return -1;
}

/* 38: ESC, DEL, a C1 control and bad UTF-8 in a Content-Type, a charset and Locations;
 * "user:secret@" in a link and a Location. The text report has every one escaped; no
 * record, no log line (-v) and no trace event holds the password. */
static void test_hostile_escapes(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "scenario-hostile-escapes.site", NULL);
    snprintf(c->tmpdir, sizeof c->tmpdir, "/tmp/crawlstages-escapes-XXXXXX");
    assert_non_null(mkdtemp(c->tmpdir));
    char trace_path[300];
    snprintf(trace_path, sizeof trace_path, "%s/trace.json", c->tmpdir);

    const crawl_run *r = crawl(c, "-v", "--trace-events", trace_path, U(b, "/"), NULL);
    EXPECT(r, b, PAGE("/", 6, 6),
           /* (JSON writes the bad byte 0xff as \u00ff: U+00FF once parsed) */
           {"/type", 200, NUL_, NOCHECK, "text/\x1b[2j\x7f\xc2\x9b\xc3\xbf", "utf-8", 0, 0, false},
           {"/charset", 200, NUL_, NOCHECK, "text/plain", "x\x1b]0", 0, 0, false},
           REDIR("/loc", 302, "/t%1b[31m%ff"), {"/badloc", 301, NUL_, 0, NUL_, NUL_, 0, 0, true},
           REDIR("/credloc", 302, "/credtarget"),
           {"/t%1b[31m%ff", 200, NUL_, NOCHECK, "text/html", "utf-8", 0, 0, false},
           PAGE("/credtarget", 0, 0), PAGE("/credlink", 0, 0));
    if (memmem(r->out, r->out_len, "secret", 6) || memmem(r->err, r->err_len, "secret", 6))
        fail_msg("the password reached the report or the log\n%s", crawl_run_describe(r));
    FILE *tf = fopen(trace_path, "r");
    assert_non_null(tf);
    char line[4096];
    while (fgets(line, sizeof line, tf))
        if (strstr(line, "secret"))
            fail_msg("the password reached the trace: %s", line);
    fclose(tf);

    r = run_bin(c, "-q", U(b, "/"), NULL);
    long bad = terminal_unsafe_at(r->out, r->out_len);
    if (r->exit_code != 0 || bad >= 0)
        fail_msg("the text report has a raw control byte or bad UTF-8 at offset %ld\n%s", bad,
                 crawl_run_describe(r));
    static const char *const shown[] = {
        " 200 text/\\x1b[2j\\x7f\\u009b\\xff utf-8 ", " 200 text/plain x\\x1b]0 ",
        " error redirect to unparseable Location 'http://[\\x1b[2J\\xff'", "/loc 302 redirect ",
        "/credloc 302 redirect http://127.0.0.1:"};
    for (size_t i = 0; i < sizeof shown / sizeof shown[0]; i++)
        if (!strstr(r->out, shown[i]))
            fail_msg("the text report lacks \"%s\"\n%s", shown[i], crawl_run_describe(r));
    if (strstr(r->out, "secret"))
        fail_msg("the password reached the text report\n%s", crawl_run_describe(r));
}

/* 39: --timeout values that round to 0 ms are refused (libcurl would read 0 as "no
 * limit"); 1 ms is the least, and a real limit on both transports. */
static void test_timeout_never_zero(void **state)
{
    case_ctx *c = *state;
    static const char *const tiny[] = {"0.0004", "4.9e-324"};
    for (int i = 0; i < 2; i++)
        expect_one_line_exit(run_bin(c, "--timeout", tiny[i], "http://127.0.0.1:9/", NULL), 2,
                             "--timeout");
    const char *b = start_site(c, "scenario-timeout.site", NULL);
    const crawl_run *r = crawl(c, "--timeout", "0.001", "--max-tries", "1", U(b, "/slow"), NULL);
    EXPECT(r, b, FAILED("/slow"));
    expect_exception_has(r, b, "/slow", "time");
    if (r->seconds >= 2.5)
        fail_msg("--timeout 0.001 took %.1f s: no limit reached the transport", r->seconds);
}

/* 40: the files of the command line: a missing --cacert (either transport), --output and
 * --trace-events on one file, an --output FIFO nobody reads (no wait for a reader), a
 * trace that cannot be written (its own words, not the report's). */
static void test_output_files(void **state)
{
    case_ctx *c = *state;
    snprintf(c->tmpdir, sizeof c->tmpdir, "/tmp/crawlstages-files-XXXXXX");
    assert_non_null(mkdtemp(c->tmpdir));
    char out[300], fifo[300], root[64];
    snprintf(out, sizeof out, "%s/out", c->tmpdir);
    snprintf(fifo, sizeof fifo, "%s/fifo", c->tmpdir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    int port = testsite_free_port();
    assert_true(port > 0);
    snprintf(root, sizeof root, "http://127.0.0.1:%d/", port); /* refused: quick */

    expect_one_line_exit(run_bin(c, "--cacert", "/nonexistent/ca.pem", root, NULL), 2,
                         "--cacert: cannot read '/nonexistent/ca.pem'");
    expect_one_line_exit(run_bin(c, "--output", out, "--trace-events", out, root, NULL), 2,
                         "are the same file");
    const crawl_run *r = run_bin(c, "--output", fifo, root, NULL);
    expect_one_line_exit(r, 1, "a FIFO with no reader");
    if (r->seconds >= 5)
        fail_msg("an --output FIFO without a reader took %.1f s", r->seconds);
    if (access("/dev/full", W_OK) == 0) {
        r = run_bin(c, "-q", "--output", out, "--trace-events", "/dev/full", root, NULL);
        expect_one_line_exit(r, 1,
                             "writing --trace-events '/dev/full' failed: No space left on device");
    }
}

/* 41: pages libxml2's push parser would hold whole — NUL bytes, text without '<', gzip
 * bombs — fetched 8 at once, each cut at --max-size 4 MiB: the peak RSS grows
 * by little per page in flight (the link parser's memory is bounded per fetch,
 * links.h), where it grew by 12 to 50 MB per page. One selector is enough (memory does
 * not depend on it); not under ASan, whose RSS means something else. */
static void test_hostile_memory(void **state)
{
#ifdef __SANITIZE_ADDRESS__
    (void)state;
    skip();
#else
    case_ctx *c = *state;
    if (strcmp(g_selector, "epoll") != 0)
        skip();
    const char *b = start_site(c, "scenario-hostile-bombs.site", NULL);
    const crawl_run *r = crawl(c, "--max-tasks", "8", "--max-size", "4194304", U(b, "/one"), NULL);
    EXPECT(r, b, PAGE("/one", 1, 1),
           {"/nul?1", 200, NUL_, 4194304, "text/html", "utf-8", 0, 0, true});
    long one = r->maxrss_kb;
    r = crawl(c, "--max-tasks", "8", "--max-size", "4194304", U(b, "/eight"), NULL);
    if (r->nrecords != 9 || jobj_int(r->summary, "peak_in_flight", 0) != 8)
        fail_msg("want 9 records, 8 fetched at once\n%s", crawl_run_describe(r));
    for (size_t i = 0; i < r->nrecords; i++) {
        const char *u = jobj_str(r->records[i], "url");
        if (strstr(u, "?") && jobj_int(r->records[i], "size", -1) != 4194304)
            fail_msg("%s: want 4194304 bytes kept (--max-size)\n%s", u, crawl_run_describe(r));
    }
    long per_page = (r->maxrss_kb - one) / 7;
    print_message("peak RSS: 1 page %ld KB, 8 pages at once %ld KB: %ld KB per page\n", one,
                  r->maxrss_kb, per_page);
    if (per_page > 2048)
        fail_msg("peak RSS grew by %ld KB per page in flight (1 page: %ld KB, 8: %ld KB); "
                 "want at most 2048",
                 per_page, one, r->maxrss_kb);
#endif
}

/* ---- robots.txt: crawl-queue obeys it, stages 1 and 2 (the chapter's) never ask ------ */

/* A URL robots.txt forbids: a record with status null and an exception that says so
 * (expect_forbidden checks the words). */
#define FORBIDDEN(u)                                                                               \
    {                                                                                              \
        u, -1, NUL_, 0, NUL_, NUL_, 0, 0, true                                                     \
    }

static void expect_forbidden(const crawl_run *r, const char *b, const char *path)
{
    expect_exception_has(r, b, path, "forbidden by robots.txt");
}

/* Requests testsite saw for /robots.txt. */
static void expect_robots_fetches(case_ctx *c, int srv, long want)
{
    long got = ts_stat(&c->srv[srv], "robots_txt");
    if (got != want)
        fail_msg("testsite saw %ld request(s) for /robots.txt, expected %ld\n%s", got, want,
                 crawl_run_describe(&c->run));
}

/* 38: rules for everyone: a longer Allow beats a Disallow, $ anchors at the end; a
 * forbidden URL is a record, never fetched. */
static void test_robots_forbidden(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "scenario-robots.site", NULL);
    const crawl_run *r = crawl(c, U(b, "/"), NULL);
    if (!is_queue()) {
        EXPECT(r, b, PAGE("/", 5, 5), PAGE("/a.html", 0, 0), PAGE("/private/secret.html", 0, 0),
               PAGE("/private/ok.html", 0, 0),
               {"/doc.pdf", 200, NUL_, 3, "application/pdf", "utf-8", 0, 0, false},
               {"/doc.pdf?v=2", 200, NUL_, 3, "application/pdf", "utf-8", 0, 0, false});
        expect_served(c, 0, 6);
        return;
    }
    EXPECT(r, b, PAGE("/", 5, 5), PAGE("/a.html", 0, 0), PAGE("/private/ok.html", 0, 0),
           FORBIDDEN("/private/secret.html"), FORBIDDEN("/doc.pdf"),
           {"/doc.pdf?v=2", 200, NUL_, 3, "application/pdf", "utf-8", 0, 0, false});
    expect_forbidden(r, b, "/private/secret.html");
    expect_forbidden(r, b, "/doc.pdf");
    expect_served(c, 0, 4);
}

/* 39: --user-agent's product token picks its own group (case-insensitive), which
 * forbids everything, the root too; --ignore-robots fetches everything and never asks
 * for robots.txt. Stages 1 and 2 refuse --ignore-robots. */
static void test_robots_agent_and_ignore(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "scenario-robots.site", NULL);
    if (!is_queue()) {
        char *argv[] = {(char *)g_bin,     "--transport",     (char *)g_transport,
                        "--ignore-robots", (char *)U(b, "/"), NULL};
        run_argv(c, argv);
        const crawl_run *r = &c->run;
        if (r->exit_code != 2 || !strstr(r->err, "unknown option '--ignore-robots'")
            || !strstr(r->err, "are crawl-queue's") || r->out_len)
            fail_msg("want exit 2 and one line refusing --ignore-robots\n%s",
                     crawl_run_describe(r));
        return;
    }
    const crawl_run *r = crawl(c, "--user-agent", "scenariobot/1.0", U(b, "/"), NULL);
    EXPECT(r, b, FORBIDDEN("/"));
    expect_forbidden(r, b, "/");
    expect_served(c, 0, 0);

    const char *b2 = start_site(c, "scenario-robots.site", NULL);
    r = crawl(c, "--ignore-robots", U(b2, "/"), NULL);
    EXPECT(r, b2, PAGE("/", 5, 5), PAGE("/a.html", 0, 0), PAGE("/private/secret.html", 0, 0),
           PAGE("/private/ok.html", 0, 0),
           {"/doc.pdf", 200, NUL_, 3, "application/pdf", "utf-8", 0, 0, false},
           {"/doc.pdf?v=2", 200, NUL_, 3, "application/pdf", "utf-8", 0, 0, false});
    expect_robots_fetches(c, 1, 0);
}

/* 100 roots on one host, robots.txt taking 300 ms: one download, and the rules hold for
 * all of them — 12 forbidden, 88 fetched. The polite Queue holds the host's URLs while
 * its robots.txt comes (the download starts when the Queue meets the host); the
 * chapter's Queue (--chapter) hands all 100 to the workers at once, and each waits on
 * the origin's one Future. */
static void robots_shared(case_ctx *c, bool chapter)
{
    const char *b = start_site(c, "scenario-robots-wait.site", NULL);
    int srv = c->nsrv - 1;
    static char roots[100][96];
    static char *args[100];
    for (int i = 0; i < 100; i++) {
        snprintf(roots[i], sizeof roots[i], "%s/page?n=%d", b, i + 1);
        args[i] = roots[i];
    }
    g_more = args;
    g_nmore = 100;
    const crawl_run *r = chapter ? crawl(c, "--chapter", "--max-tasks", "100", NULL)
                                 : crawl(c, "--max-tasks", "100", NULL);
    g_more = NULL;
    g_nmore = 0;
    if (r->nrecords != 100)
        fail_msg("%zu records, expected 100\n%s", r->nrecords, crawl_run_describe(r));
    long fetched = 0;
    for (int i = 0; i < 100; i++) {
        int n = i + 1;
        bool forbidden = is_queue() && (n == 1 || (n >= 10 && n <= 19) || n == 100);
        const char *path = roots[i] + strlen(b);
        if (forbidden) {
            expect_record(r, b, &(exp_rec)FORBIDDEN(path));
            expect_forbidden(r, b, path);
        } else {
            expect_record(r, b, &(exp_rec)PAGE(path, 0, 0));
            fetched++;
        }
    }
    expect_served(c, srv, fetched); /* and robots.txt once (crawl-queue) or never */
}

/* 40: the same rules for the polite Queue and (crawl-queue) the chapter's. */
static void test_robots_shared(void **state)
{
    case_ctx *c = *state;
    robots_shared(c, false);
    if (is_queue())
        robots_shared(c, true);
}

/* 40b: requests park while robots.txt is on its way, and are answered when it comes.
 * The polite Queue holds a host's URLs while the robots.txt it met first is fetched,
 * so nothing parks for that one; but it knows hosts by name, and a robots.txt is an
 * origin's (host:port): a second server on 127.0.0.1, its robots.txt taking 300 ms
 * (scenario-robots-wait.site), has its origin met by the workers, not the Queue. Its
 * ten roots reach the workers behind the first server's root; the first starts that
 * origin's robots.txt and parks, the others find the entry and park too; once the
 * rules come each must be handed back and visited again: 8 fetched, 2 forbidden,
 * robots.txt once on each server. The crawler's records and testsite's counts say it,
 * whatever the time taken. */
static void test_robots_parked(void **state)
{
    case_ctx *c = *state;
    const char *a = start_site(c, "scenario-missing.site", NULL);
    const char *b = start_site(c, "scenario-robots-wait.site", NULL);
    static char roots[10][96];
    static char *args[10];
    for (int i = 0; i < 10; i++) {
        snprintf(roots[i], sizeof roots[i], "%s/page?n=%d", b, i + 1);
        args[i] = roots[i];
    }
    g_more = args;
    g_nmore = 10;
    const crawl_run *r = crawl(c, "--max-tasks", "4", U(a, "/"), NULL);
    g_more = NULL;
    g_nmore = 0;
    if (r->nrecords != 3 + 10)
        fail_msg("%zu records, expected 13\n%s", r->nrecords, crawl_run_describe(r));
    expect_record(r, a, &(exp_rec)PAGE("/", 2, 2));
    long fetched = 0;
    for (int i = 0; i < 10; i++) {
        int n = i + 1;
        const char *path = roots[i] + strlen(b);
        if (is_queue() && (n == 1 || n == 10)) {
            expect_record(r, b, &(exp_rec)FORBIDDEN(path));
            expect_forbidden(r, b, path);
        } else {
            expect_record(r, b, &(exp_rec)PAGE(path, 0, 0));
            fetched++;
        }
    }
    expect_served(c, 0, 3);
    expect_served(c, 1, fetched); /* and robots.txt once (crawl-queue) or never */
}

/* 41: robots.txt answers 500, or never answers: everything forbidden, the records say
 * why; stages 1 and 2 fetch the pages. */
static void test_robots_unreachable(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "scenario-robots-500.site", NULL);
    const crawl_run *r = crawl(c, U(b, "/"), NULL);
    if (!is_queue()) {
        EXPECT(r, b, PAGE("/", 1, 1), PAGE("/a.html", 0, 0));
        expect_served(c, 0, 2);
    } else {
        EXPECT(r, b, FORBIDDEN("/"));
        expect_forbidden(r, b, "/");
        expect_exception_has(r, b, "/", "500");
        expect_served(c, 0, 0);
    }

    const char *b2 = start_site(c, "scenario-robots-drop.site", NULL);
    r = crawl(c, "--max-tries", "2", U(b2, "/"), NULL);
    if (!is_queue()) {
        EXPECT(r, b2, PAGE("/", 1, 1), PAGE("/a.html", 0, 0));
        expect_robots_fetches(c, 1, 0);
        return;
    }
    EXPECT(r, b2, FORBIDDEN("/"));
    expect_exception_has(r, b2, "/", "host could not be reached: ");
    expect_exception_has(r, b2, "/", "nothing fetched without its robots.txt");
    expect_robots_fetches(c, 1, 2); /* --max-tries 2 attempts, then no more */
    if (ts_stat(&c->srv[1], "served") != 0)
        fail_msg("testsite served %ld requests, expected none\n%s", ts_stat(&c->srv[1], "served"),
                 crawl_run_describe(r));
}

/* 42: robots.txt behind 5 redirects (relative, absolute, each code) is followed and
 * obeyed; behind 6 it is taken for unavailable: everything allowed. */
static void test_robots_redirects(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "scenario-robots-redirect.site", NULL);
    const crawl_run *r = crawl(c, U(b, "/"), NULL);
    if (!is_queue()) {
        EXPECT(r, b, PAGE("/", 2, 2), PAGE("/a.html", 0, 0), PAGE("/secret.html", 0, 0));
        expect_served(c, 0, 3);
    } else {
        EXPECT(r, b, PAGE("/", 2, 2), PAGE("/a.html", 0, 0), FORBIDDEN("/secret.html"));
        expect_forbidden(r, b, "/secret.html");
        expect_served(c, 0, 2 + 5); /* the pages, and /r1 .. /r4, /rules.txt */
    }

    const char *b2 = start_site(c, "scenario-robots-redirect6.site", NULL);
    r = crawl(c, U(b2, "/"), NULL);
    EXPECT(r, b2, PAGE("/", 1, 1), PAGE("/a.html", 0, 0));
    expect_served(c, 1, is_queue() ? 2 + 5 : 2); /* /r1 .. /r5, never /rules.txt */
}

/* ---- interruption: SIGINT / SIGTERM end the crawl at once, with a complete report ----- */

/* Bit sig of a "SigXxx:" hex mask line of /proc/PID/status. */
static bool proc_sigmask_has(pid_t pid, const char *field, int sig)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool has = false;
    size_t n = strlen(field);
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, field, n) == 0 && line[n] == ':') {
            unsigned long long mask = strtoull(line + n + 1, NULL, 16);
            has = (mask >> (sig - 1)) & 1;
            break;
        }
    }
    fclose(f);
    return has;
}

typedef struct interrupt_ctx {
    int sig;
    bool handlers; /* SIGINT and SIGTERM caught, SIGPIPE ignored, when it was sent */
    bool sent;
} interrupt_ctx;

/* Called by run_crawler_at: wait (2 s at most) until the handlers are installed, then
 * send the signal. */
static void send_signal(pid_t pid, void *arg)
{
    interrupt_ctx *ic = arg;
    for (int i = 0; i < 200 && !ic->handlers; i++) {
        ic->handlers = proc_sigmask_has(pid, "SigCgt", SIGINT)
            && proc_sigmask_has(pid, "SigCgt", SIGTERM) && proc_sigmask_has(pid, "SigIgn", SIGPIPE);
        if (!ic->handlers)
            sleep_ms(10);
    }
    ic->sent = kill(pid, ic->sig) == 0;
}

static void interrupt_case(case_ctx *c, int sig)
{
    const char *b = start_site(c, "scenario-interrupt.site", NULL);
    char *argv[] = {(char *)g_bin, "--format",         "jsonl",
                    "-q",          "--transport",      (char *)g_transport,
                    "--selector",  (char *)g_selector, "--max-tasks",
                    "5",           (char *)U(b, "/"),  NULL};
    interrupt_ctx ic = {.sig = sig};
    if (c->have_run)
        crawl_run_free(&c->run);
    c->have_run = true;
    if (run_crawler_at(&c->run, argv, CRAWL_LIMIT_SECS, 0.7, send_signal, &ic) < 0)
        fail_msg("cannot run %s", g_bin);
    const crawl_run *r = &c->run;
    if (!ic.sent)
        fail_msg("the crawler ended before the signal could be sent\n%s", crawl_run_describe(r));
    if (!ic.handlers)
        fail_msg("SIGINT/SIGTERM not caught or SIGPIPE not ignored while crawling");
    /* the 20 pages take 3 s each: ending well before proves they were abandoned */
    if (r->exit_code != 0 || r->seconds >= 2.5 || r->parse_error || !r->summary)
        fail_msg("want exit 0 within 2.5 s and a whole report after %s\n%s", strsignal(sig),
                 crawl_run_describe(r));
    const jobj *s = r->summary;
    const jv *intr = jobj_get(s, "interrupted");
    if (!intr || intr->type != JV_BOOL || !intr->b || jobj_int(s, "todo", -1) != 20
        || jobj_int(s, "done", -1) != 1 || jobj_int(s, "peak_in_flight", -1) != 5)
        fail_msg("want interrupted true, todo 20 (5 in flight + 15 waiting), done 1, "
                 "peak_in_flight 5\n%s",
                 crawl_run_describe(r));
    EXPECT(r, b, PAGE("/", 20, 20));
}

/* 35, 36 */
static void test_interrupt_sigint(void **state)
{
    interrupt_case(*state, SIGINT);
}

/* crawl-queue interrupted while three roots wait for their host's robots.txt: they
 * are the URLs left to do (not the robots.txt download, which is no URL of the
 * crawl). The polite Queue holds them while robots.txt comes; with --chapter the
 * workers have them, parked on the origin's Future. Stages 1 and 2 never wait: they
 * fetch the three pages. */
static void robots_interrupted(case_ctx *c, bool chapter)
{
    const char *b = start_site(c, "scenario-robots-slow.site", NULL);
    char *argv[16];
    int n = 0;
    const char *fixed[] = {g_bin,         "--format",  "jsonl",      "-q",
                           "--transport", g_transport, "--selector", g_selector};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
        argv[n++] = (char *)fixed[i];
    if (chapter)
        argv[n++] = "--chapter";
    argv[n++] = (char *)U(b, "/");
    argv[n++] = (char *)U(b, "/a");
    argv[n++] = (char *)U(b, "/b");
    argv[n] = NULL;
    interrupt_ctx ic = {.sig = SIGINT};
    if (c->have_run)
        crawl_run_free(&c->run);
    c->have_run = true;
    if (run_crawler_at(&c->run, argv, CRAWL_LIMIT_SECS, 0.7, send_signal, &ic) < 0)
        fail_msg("cannot run %s", g_bin);
    const crawl_run *r = &c->run;
    const jobj *s = r->summary;
    const jv *intr = s ? jobj_get(s, "interrupted") : NULL;
    if (!ic.sent || r->exit_code != 0 || r->seconds >= 2.5 || !intr || !intr->b
        || jobj_int(s, "todo", -1) != 3 || jobj_int(s, "done", -1) != 0 || r->nrecords != 0)
        fail_msg("%swant exit 0 within 2.5 s, interrupted, todo 3, done 0\n%s",
                 chapter ? "--chapter: " : "", crawl_run_describe(r));
}

static void test_robots_interrupted(void **state)
{
    case_ctx *c = *state;
    if (!is_queue()) {
        const char *b = start_site(c, "scenario-robots-slow.site", NULL);
        const crawl_run *r = crawl(c, U(b, "/"), U(b, "/a"), U(b, "/b"), NULL);
        EXPECT(r, b, PAGE("/", 0, 0), PAGE("/a", 0, 0), PAGE("/b", 0, 0));
        expect_served(c, 0, 3);
        return;
    }
    robots_interrupted(c, false);
    robots_interrupted(c, true);
}

static void test_interrupt_sigterm(void **state)
{
    interrupt_case(*state, SIGTERM);
}

/* ---- --warc: our own strict reader, and warcio.js's ----------------------------------- */

/* "sha1:" + base32 of SHA-1 (38 bytes with the NUL). */
static void sha1_b32(const void *data, size_t len, char out[38])
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    unsigned char md[20];
    unsigned mdlen = 0;
    assert_int_equal(EVP_Digest(data, len, md, &mdlen, EVP_sha1(), NULL), 1);
    char *o = out + 5;
    memcpy(out, "sha1:", 5);
    unsigned buf = 0;
    int bits = 0;
    for (unsigned i = 0; i < mdlen; i++) {
        buf = buf << 8 | md[i];
        for (bits += 8; bits >= 5; bits -= 5)
            *o++ = abc[(buf >> (bits - 5)) & 31];
    }
    *o = '\0';
}

/* The whole file (malloc'd), members of a .gz inflated one after the other; offsets[i]:
 * where member i starts in the compressed file (for the index), *nmembers of them. */
static char *read_warc(const char *path, bool gz, size_t *len, size_t *offsets, size_t max_members,
                       size_t *nmembers)
{
    FILE *in = fopen(path, "rb");
    assert_non_null(in);
    size_t n = 0, cap = 1 << 16;
    char *raw = malloc(cap);
    size_t got;
    while ((got = fread(raw + n, 1, cap - n, in)) > 0)
        if ((n += got) == cap)
            raw = realloc(raw, cap *= 2);
    fclose(in);
    *nmembers = 0;
    if (!gz) {
        *len = n;
        return raw;
    }
    size_t outn = 0, outcap = 4 * n + 4096;
    char *out = malloc(outcap);
    size_t pos = 0;
    while (pos < n) { /* one member at a time: each must end cleanly */
        if (*nmembers < max_members)
            offsets[*nmembers] = pos;
        (*nmembers)++;
        z_stream z;
        memset(&z, 0, sizeof z);
        assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
        z.next_in = (Bytef *)raw + pos;
        z.avail_in = (uInt)(n - pos);
        int r;
        do {
            if (outcap - outn < 65536)
                out = realloc(out, outcap *= 2);
            z.next_out = (Bytef *)out + outn;
            z.avail_out = (uInt)(outcap - outn);
            r = inflate(&z, Z_NO_FLUSH);
            outn = (size_t)((char *)z.next_out - out);
        } while (r == Z_OK);
        if (r != Z_STREAM_END)
            fail_msg("%s: gzip member %zu at %zu does not inflate (%d)", path, *nmembers, pos, r);
        pos += z.total_in;
        inflateEnd(&z);
    }
    free(raw);
    *len = outn;
    return out;
}

typedef struct wrec {
    size_t offset; /* in the (uncompressed) file */
    char type[16], id[64], date[32], uri[512], concurrent[64], refers_to[64];
    char block_digest[64], payload_digest[64], ctype[64], ip[64], protocol[16];
    const char *block;
    size_t block_len;
    int status;      /* of an HTTP response block */
    size_t head_len; /* of the HTTP head in the block, "\r\n\r\n" included */
} wrec;

/* The value of name in the WARC head [h, e), copied to out, or fail if required. */
static bool warc_field(const char *h, const char *e, const char *name, char *out, size_t outlen)
{
    size_t nl = strlen(name);
    for (const char *p = h; p < e;) {
        const char *eol = memmem(p, (size_t)(e - p), "\r\n", 2);
        if (!eol)
            break;
        if ((size_t)(eol - p) > nl + 2 && strncasecmp(p, name, nl) == 0 && p[nl] == ':'
            && p[nl + 1] == ' ') {
            snprintf(out, outlen, "%.*s", (int)(eol - p - nl - 2), p + nl + 2);
            return true;
        }
        p = eol + 2;
    }
    out[0] = '\0';
    return false;
}

/* Strict: "WARC/1.1", "Name: value" lines, the empty line, Content-Length bytes,
 * "\r\n\r\n"; the fields every record has, well formed. */
static size_t parse_warc(const char *data, size_t len, wrec *recs, size_t max)
{
    size_t n = 0, pos = 0;
    while (pos < len) {
        if (n == max)
            fail_msg("more than %zu WARC records", max);
        wrec *r = &recs[n];
        memset(r, 0, sizeof *r);
        r->offset = pos;
        if (len - pos < 10 || memcmp(data + pos, "WARC/1.1\r\n", 10) != 0)
            fail_msg("record %zu at %zu does not start with WARC/1.1", n, pos);
        const char *h = data + pos + 10;
        const char *he = memmem(h, len - pos - 10, "\r\n\r\n", 4);
        if (!he)
            fail_msg("record %zu: no end of its head", n);
        he += 2;                           /* the head's last line's CRLF kept */
        for (const char *p = h; p < he;) { /* every line "Name: value" */
            const char *eol = memmem(p, (size_t)(he - p), "\r\n", 2);
            const char *colon = memchr(p, ':', (size_t)(eol - p));
            if (!colon || colon == p || colon[1] != ' ')
                fail_msg("record %zu: bad head line '%.*s'", n, (int)(eol - p), p);
            p = eol + 2;
        }
        char cl[32];
        if (!warc_field(h, he, "WARC-Type", r->type, sizeof r->type)
            || !warc_field(h, he, "WARC-Record-ID", r->id, sizeof r->id)
            || !warc_field(h, he, "WARC-Date", r->date, sizeof r->date)
            || !warc_field(h, he, "Content-Length", cl, sizeof cl))
            fail_msg("record %zu: WARC-Type, WARC-Record-ID, WARC-Date or Content-Length "
                     "missing",
                     n);
        unsigned u[5];
        int end = 0;
        if (sscanf(r->id, "<urn:uuid:%8x-%4x-%4x-%4x-%12x>%n", &u[0], &u[1], &u[2], &u[3], &u[4],
                   &end)
                != 5
            || r->id[end] != '\0' || strlen(r->id) != 47)
            fail_msg("record %zu: WARC-Record-ID '%s' is not a urn:uuid", n, r->id);
        int y, mo, d, hh, mi, ss;
        end = 0;
        if (sscanf(r->date, "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &y, &mo, &d, &hh, &mi, &ss, &end) != 6
            || r->date[end] != '\0' || strlen(r->date) != 20)
            fail_msg("record %zu: WARC-Date '%s' is not UTC", n, r->date);
        warc_field(h, he, "WARC-Target-URI", r->uri, sizeof r->uri);
        warc_field(h, he, "WARC-Concurrent-To", r->concurrent, sizeof r->concurrent);
        warc_field(h, he, "WARC-Refers-To", r->refers_to, sizeof r->refers_to);
        warc_field(h, he, "WARC-Block-Digest", r->block_digest, sizeof r->block_digest);
        warc_field(h, he, "WARC-Payload-Digest", r->payload_digest, sizeof r->payload_digest);
        warc_field(h, he, "Content-Type", r->ctype, sizeof r->ctype);
        warc_field(h, he, "WARC-IP-Address", r->ip, sizeof r->ip);
        warc_field(h, he, "WARC-Protocol", r->protocol, sizeof r->protocol);
        size_t blen = strtoul(cl, NULL, 10);
        r->block = he + 2;
        r->block_len = blen;
        size_t after = (size_t)(r->block - data) + blen;
        if (after + 4 > len || memcmp(data + after, "\r\n\r\n", 4) != 0)
            fail_msg("record %zu (%s %s): the block is not followed by CRLF CRLF", n, r->type,
                     r->uri);
        char dig[38];
        sha1_b32(r->block, blen, dig);
        if (strcmp(dig, r->block_digest) != 0)
            fail_msg("record %zu (%s %s): WARC-Block-Digest %s, the block's is %s", n, r->type,
                     r->uri, r->block_digest, dig);
        if (!strncmp(r->ctype, "application/http;msgtype=response", 33)) {
            const char *hend = memmem(r->block, blen, "\r\n\r\n", 4);
            if (!hend || sscanf(r->block, "HTTP/1.%*1d %3d", &r->status) != 1)
                fail_msg("record %zu: the block is no HTTP response head", n);
            r->head_len = (size_t)(hend + 4 - r->block);
        }
        pos = after + 4;
        n++;
    }
    return n;
}

/* The payload of a response block: the body with chunked framing undone. */
static char *dechunk(const wrec *r, size_t *len)
{
    const char *b = r->block + r->head_len, *e = r->block + r->block_len;
    char *out = malloc((size_t)(e - b) + 1);
    bool chunked = memmem(r->block, r->head_len, "Transfer-Encoding: chunked", 26) != NULL;
    if (!chunked) {
        memcpy(out, b, (size_t)(e - b));
        *len = (size_t)(e - b);
        return out;
    }
    size_t n = 0;
    for (;;) {
        char *after;
        unsigned long size = strtoul(b, &after, 16);
        const char *eol = memmem(b, (size_t)(e - b), "\r\n", 2);
        if (!eol || after == b)
            fail_msg("%s: bad chunk", r->uri);
        b = eol + 2;
        if (size == 0)
            break;
        memcpy(out + n, b, size);
        n += size;
        b += size + 2;
    }
    *len = n;
    return out;
}

static const wrec *find_wrec(const wrec *recs, size_t n, const char *field, const char *v)
{
    for (size_t i = 0; i < n; i++) {
        const char *f = !strcmp(field, "id") ? recs[i].id : recs[i].uri;
        if (!strcmp(f, v) && (strcmp(field, "uri") || strcmp(recs[i].type, "request")))
            return &recs[i];
    }
    return NULL;
}

/* warcio.js reads the archive: the same records in the same order, the same payload
 * digests, and the payloads it decodes are the pages as served, uncompressed — those
 * at gz_path (the end of their URL), gz_plain once decoded. */
static void check_with_warcio(const char *warcio, const char *path, const wrec *recs, size_t n,
                              const char *gz_path, const char *gz_plain)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "node %s/warcio_check.mjs '%s' '%s' 2>&1", SCENARIOS_DIR, warcio,
             path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char line[8192];
    size_t i = 0;
    while (fgets(line, sizeof line, p)) {
        char why[200];
        jobj *o = jobj_parse(line, strcspn(line, "\n"), why, sizeof why);
        if (!o)
            fail_msg("warcio.js on %s: %s", path, line);
        if (i >= n)
            fail_msg("warcio.js finds more records than %zu", n);
        const wrec *r = &recs[i++];
        const char *type = jobj_str(o, "type"), *id = jobj_str(o, "id");
        if (!type || strcmp(type, r->type) || !id || strcmp(id, r->id))
            fail_msg("warcio.js: record %zu is %s %s, ours %s %s", i, type, id, r->type, r->id);
        if (r->status && jobj_int(o, "status", -1) != r->status)
            fail_msg("warcio.js: %s has status %lld, ours %d", r->uri, jobj_int(o, "status", -1),
                     r->status);
        if (!strcmp(r->type, "response")) {
            const char *pd = jobj_str(o, "payload_digest"), *dd = jobj_str(o, "decoded_sha1");
            if (!pd || strcmp(pd, r->payload_digest))
                fail_msg("warcio.js: %s payload digest %s, ours %s", r->uri, pd, r->payload_digest);
            const char *want = r->payload_digest;
            char plain[38];
            size_t ulen = strlen(r->uri), glen = strlen(gz_path);
            if (ulen >= glen && !strcmp(r->uri + ulen - glen, gz_path)) {
                sha1_b32(gz_plain, strlen(gz_plain), plain);
                want = plain;
            }
            if (!dd || strcmp(dd, want))
                fail_msg("warcio.js decodes %s to %s, want %s", r->uri, dd, want);
        }
        jobj_free(o);
    }
    int st = pclose(p);
    if (st != 0 || i != n)
        fail_msg("warcio.js read %zu of %zu records of %s (exit %d)", i, n, path, st);
}

/* The --cdx index: every line points at the response or revisit record of its url. */
static void check_cdx(const char *path, const wrec *recs, size_t n, bool gz, const size_t *members,
                      size_t nmembers, size_t *nlines)
{
    FILE *in = fopen(path, "r");
    assert_non_null(in);
    char line[4096], prev[4096] = "";
    *nlines = 0;
    while (fgets(line, sizeof line, in)) {
        if (strcmp(prev, line) > 0)
            fail_msg("--cdx is not sorted: %s after %s", line, prev);
        snprintf(prev, sizeof prev, "%s", line);
        const char *js = strchr(line, '{');
        char why[200];
        jobj *o = js ? jobj_parse(js, strcspn(js, "\n"), why, sizeof why) : NULL;
        if (!o)
            fail_msg("--cdx line is no CDXJ: %s", line);
        const char *url = jobj_str(o, "url"), *dg = jobj_str(o, "digest"),
                   *off = jobj_str(o, "offset");
        size_t offset = off ? strtoul(off, NULL, 10) : (size_t)-1;
        const wrec *hit = NULL;
        for (size_t i = 0; i < n && !hit; i++) {
            size_t at = gz ? (i < nmembers ? members[i] : (size_t)-1) : recs[i].offset;
            if (at == offset)
                hit = &recs[i];
        }
        if (!hit || !url || strcmp(hit->uri, url) || !dg || strcmp(hit->payload_digest + 5, dg))
            fail_msg("--cdx line points at no record of its url: %s", line);
        jobj_free(o);
        (*nlines)++;
    }
    fclose(in);
}

/* One archive of scenario-warc.site, checked against the JSONL records of its crawl. */
static void check_warc(case_ctx *c, const crawl_run *r, const char *b, const char *path,
                       const char *cdx)
{
    bool gz = strlen(path) > 3 && !strcmp(path + strlen(path) - 3, ".gz");
    size_t len, members[256], nmembers;
    char *data = read_warc(path, gz, &len, members, 256, &nmembers);
    static wrec recs[256];
    size_t n = parse_warc(data, len, recs, 256);
    if (gz && nmembers != n)
        fail_msg("%zu gzip members for %zu records: one member per record", nmembers, n);
    if (n == 0 || strcmp(recs[0].type, "warcinfo"))
        fail_msg("the first record is not warcinfo");
    size_t responses = 0, revisits = 0, requests = 0, robots = 0;
    for (size_t i = 1; i < n; i++) {
        const wrec *w = &recs[i];
        bool resp = !strcmp(w->type, "response"), rev = !strcmp(w->type, "revisit");
        if (!resp && !rev && strcmp(w->type, "request"))
            fail_msg("record %zu: type %s", i, w->type);
        if (strcmp(w->ip, "127.0.0.1"))
            fail_msg("%s %s: WARC-IP-Address '%s'", w->type, w->uri, w->ip);
        if (!strcmp(w->uri, U(b, "/robots.txt"))) {
            /* robots.txt is archived too (no record of the crawl): as testsite
             * answers it */
            int st;
            size_t slen;
            char *served = testsite_fetch(&c->srv[0].ts, "/robots.txt", &st, &slen);
            robots += resp;
            if (!served || ((resp || rev) && st != w->status))
                fail_msg("robots.txt archived with status %d, testsite answers %d", w->status,
                         served ? st : -1);
            free(served);
            continue;
        }
        if (!strcmp(w->type, "request")) {
            requests++;
            const wrec *to = find_wrec(recs, n, "id", w->concurrent);
            if (strcmp(w->ctype, "application/http;msgtype=request") || !to
                || strcmp(to->uri, w->uri) || strncmp(w->block, "GET /", 5))
                fail_msg("request %s: bad type, block or WARC-Concurrent-To", w->uri);
            continue;
        }
        if (strcmp(w->ctype, "application/http;msgtype=response"))
            fail_msg("%s: Content-Type %s", w->uri, w->ctype);
        const jobj *rec = crawl_run_find(r, w->uri);
        if (!rec || jobj_int(rec, "status", -1) != w->status)
            fail_msg("%s %s: status %d, the JSONL record says %lld", w->type, w->uri, w->status,
                     rec ? jobj_int(rec, "status", -1) : -2);
        size_t plen;
        char *payload = dechunk(w, &plen), dig[38];
        sha1_b32(payload, plen, dig);
        if (resp && strcmp(dig, w->payload_digest)) /* a revisit's: checked below */
            fail_msg("%s: WARC-Payload-Digest %s, the payload's is %s", w->uri, w->payload_digest,
                     dig);
        if (rev) {
            revisits++;
            const wrec *first = find_wrec(recs, n, "id", w->refers_to);
            if (!first || strcmp(first->type, "response")
                || strcmp(first->payload_digest, w->payload_digest) || w->block_len != w->head_len)
                fail_msg("revisit %s: refers to no response of its payload, or has a body", w->uri);
        } else {
            responses++;
            /* the bytes testsite sends for the path (not the raw /chunk page, whose
             * bytes are the site file's) */
            const char *path_of = w->uri + strlen(b);
            if (strcmp(path_of, "/chunk")) {
                int st;
                size_t slen;
                char *served = testsite_fetch(&c->srv[0].ts, path_of, &st, &slen);
                if (!served || st != w->status || slen != plen || memcmp(served, payload, plen))
                    fail_msg("%s: the archived payload (%zu bytes) is not what testsite "
                             "sends (%zu bytes)",
                             w->uri, plen, served ? slen : 0);
                free(served);
            } else if (plen != 16 || memcmp(payload, "<a href=/b>b</a>", 16)) {
                fail_msg("/chunk: the payload is not the chunks joined");
            }
        }
        free(payload);
    }
    /* every record with a status has its response (or revisit); a failure has none */
    size_t with_status = 0;
    for (size_t i = 0; i < r->nrecords; i++) {
        const char *u = jobj_str(r->records[i], "url");
        bool has = find_wrec(recs, n, "uri", u) != NULL;
        if (!jobj_is_null(r->records[i], "status")) {
            with_status++;
            if (!has)
                fail_msg("%s has a JSONL record with a status but nothing archived", u);
        } else if (has) {
            fail_msg("%s failed (no response) but is archived", u);
        }
    }
    if (responses + revisits != with_status || requests != with_status || revisits != 1
        || robots != 1)
        fail_msg("%zu responses, %zu revisits, %zu requests for %zu records with a status "
                 "(want one revisit: /dup2), %zu robots.txt responses (want one)",
                 responses, revisits, requests, with_status, robots);
    if (cdx) {
        size_t lines;
        check_cdx(cdx, recs, n, gz, members, nmembers, &lines);
        if (lines != with_status + robots)
            fail_msg("--cdx has %zu lines for %zu responses", lines, with_status + robots);
    }
    const char *warcio = getenv("WARCIO");
    if (warcio && *warcio)
        check_with_warcio(warcio, path, recs, n, "/gz", "<html><a href=/a>compressed</a></html>");
    else
        print_message("warcio (webrecorder's warcio.js) not installed: the independent "
                      "reader's check is skipped (install it: scripts/install-warcio.sh)\n");
    free(data);
}

/* 45: --warc FILE and --warc FILE.gz with --cdx on scenario-warc.site: every record
 * parses (strictly), digests match the bytes, the payloads are what testsite sent, the
 * records match the JSONL, the index points at them, and warcio.js reads the same.
 * Stages 1 and 2 refuse --warc and --cdx with one line. */
static void test_warc(void **state)
{
    case_ctx *c = *state;
    snprintf(c->tmpdir, sizeof c->tmpdir, "/tmp/crawlstages-warc-XXXXXX");
    assert_non_null(mkdtemp(c->tmpdir));
    char warc[300], warcgz[300], cdx[300];
    snprintf(warc, sizeof warc, "%s/a.warc", c->tmpdir);
    snprintf(warcgz, sizeof warcgz, "%s/a.warc.gz", c->tmpdir);
    snprintf(cdx, sizeof cdx, "%s/a.cdxj", c->tmpdir);
    if (!is_queue()) {
        expect_one_line_exit(run_bin(c, "--warc", warc, "http://127.0.0.1:1/", NULL), 2,
                             "unknown option '--warc' (see --help); this is the chapter's");
        expect_one_line_exit(run_bin(c, "--cdx", cdx, "http://127.0.0.1:1/", NULL), 2,
                             "are crawl-queue's");
        return;
    }
    const char *b = start_site(c, "scenario-warc.site", NULL);
    const crawl_run *r = crawl(c, "--max-tries", "1", "--warc", warc, U(b, "/"), NULL);
    check_warc(c, r, b, warc, NULL);
    r = crawl(c, "--max-tries", "1", "--warc", warcgz, "--cdx", cdx, U(b, "/"), NULL);
    check_warc(c, r, b, warcgz, cdx);
    expect_one_line_exit(run_bin(c, "--cdx", cdx, U(b, "/"), NULL), 2, "give --warc too");
}

/* Lines (count of '\n') in the file at path now; -1 when it cannot be read. */
static long count_lines(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    long n = 0;
    char chunk[65536];
    ssize_t got;
    while ((got = read(fd, chunk, sizeof chunk)) > 0)
        for (ssize_t i = 0; i < got; i++)
            n += chunk[i] == '\n';
    close(fd);
    return n;
}

typedef struct kill_ctx {
    const char *path; /* the crawler's --output */
    long want;        /* kill once it has this many lines */
    long lines_at_kill;
    bool sent;
} kill_ctx;

/* Called by run_crawler_at: wait (20 s at most) until the --output file has k->want
 * lines, then SIGKILL: no handler runs, no buffer is flushed. */
static void kill_when_written(pid_t pid, void *arg)
{
    kill_ctx *k = arg;
    for (int i = 0; i < 2000; i++) {
        k->lines_at_kill = count_lines(k->path);
        if (k->lines_at_kill >= k->want)
            break;
        sleep_ms(10);
    }
    k->sent = kill(pid, SIGKILL) == 0;
}

/* 44: records as they finish. --format jsonl --output FILE on 3,000 pages served 20 ms
 * each, killed with SIGKILL as soon as the file has 30 lines: the file holds only whole
 * records (each line a JSON object with the nine keys, a URL of the site, no URL twice,
 * no summary), except at most a last piece without its '\n' — the line being written
 * at the kill. Before, every record was held in memory until the end: nothing. */
static void test_killed_mid_crawl(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "--delay", "20", "--generate", "pages=3000,links=4", NULL);
    snprintf(c->tmpdir, sizeof c->tmpdir, "/tmp/crawlstages-kill-XXXXXX");
    assert_non_null(mkdtemp(c->tmpdir));
    char out[300];
    snprintf(out, sizeof out, "%s/crawl.jsonl", c->tmpdir);
    char *argv[] = {(char *)g_bin,     "--format",
                    "jsonl",           "-q",
                    "--transport",     (char *)g_transport,
                    "--selector",      (char *)g_selector,
                    "--max-tasks",     "10",
                    "--output",        out,
                    (char *)U(b, "/"), NULL};
    kill_ctx k = {.path = out, .want = 30};
    if (c->have_run)
        crawl_run_free(&c->run);
    c->have_run = true;
    if (run_crawler_at(&c->run, argv, CRAWL_LIMIT_SECS, 0.05, kill_when_written, &k) < 0)
        fail_msg("cannot run %s", g_bin);
    const crawl_run *r = &c->run;
    if (!k.sent || r->term_signal != SIGKILL)
        fail_msg("the crawler was not killed mid-crawl (%ld lines in the file)\n%s",
                 k.lines_at_kill, crawl_run_describe(r));
    if (k.lines_at_kill < k.want)
        fail_msg("%ld lines in --output after 20 s of crawling: records are not written "
                 "as they finish",
                 k.lines_at_kill);

    int fd = open(out, O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    char *text = malloc((size_t)st.st_size + 1);
    assert_non_null(text);
    assert_int_equal(read(fd, text, (size_t)st.st_size), st.st_size);
    close(fd);
    text[st.st_size] = '\0';
    size_t nrec = 0, cap = 0;
    char **urls = NULL;
    char *p = text, *end = text + st.st_size;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            break; /* the line being written at the kill: a reader drops it */
        char why[200];
        jobj *o = jobj_parse(p, (size_t)(nl - p), why, sizeof why);
        if (!o)
            fail_msg("line %zu is no JSON object (%s): %.200s", nrec + 1, why, p);
        bool ok = !record_keys_missing(o, g_bin, false);
        const char *u = jobj_str(o, "url");
        if (!ok || !u || strncmp(u, b, strlen(b)) != 0)
            fail_msg("line %zu is not a record of the site: %.200s", nrec + 1, p);
        if (nrec == cap) {
            cap = cap ? 2 * cap : 64;
            urls = realloc(urls, cap * sizeof *urls);
            assert_non_null(urls);
        }
        urls[nrec++] = strdup(u);
        jobj_free(o);
        p = nl + 1;
    }
    size_t torn = (size_t)(end - p);
    free(text);
    for (size_t i = 0; i < nrec; i++)
        for (size_t j = i + 1; j < nrec; j++)
            if (!strcmp(urls[i], urls[j]))
                fail_msg("%s recorded twice", urls[i]);
    for (size_t i = 0; i < nrec; i++)
        free(urls[i]);
    free(urls);
    if ((long)nrec < k.want)
        fail_msg("%zu whole records, but %ld lines were there at the kill", nrec, k.lines_at_kill);
    if (nrec >= 3000)
        fail_msg("the crawl had finished before the kill: nothing was tested");
    print_message("killed after %ld lines: %zu whole records, %zu torn bytes\n", k.lines_at_kill,
                  nrec, torn);
}

/* 42: --max-tasks 100000 on 5,000 links with 1,024 descriptors. The crawl finishes,
 * every page fetched once and never more at once than there are descriptors (libcurl
 * was given all 5,000 transfers, most failing for want of a socket, and at 30,000 and
 * 20,000 each of its calls ran for seconds); a SIGTERM in the middle ends it within a
 * bound generous for a loaded machine (the pages take 6 s each, five rounds of them;
 * the signal comes at 4 s, once / is surely done even under ASan, where starting
 * 100,000 workers takes a second or two, and before any page behind it is),
 * and the summary's todo counts all 5,000, those waiting for a descriptor included.
 * Memory and descriptors do not depend on the selector: epoll only. */
static void test_high_concurrency(void **state)
{
    case_ctx *c = *state;
    if (strcmp(g_selector, "epoll") != 0)
        skip();
    const char *b = start_site(c, "scenario-hostile-concurrency.site", NULL);
    g_nofile = 1024;
    const crawl_run *r = crawl(c, "--max-tasks", "100000", U(b, "/"), NULL);
    g_nofile = 0;
    if (r->nrecords != 5001 || jobj_int(r->summary, "peak_in_flight", -1) > 1024)
        fail_msg("want 5001 records and at most 1024 fetches at once\n%s", crawl_run_describe(r));
    expect_served(c, 0, 5001);

    const char *slow = start_site(c, "--delay", "6000", "scenario-hostile-concurrency.site", NULL);
    char nofile[] = "1024";
    char *argv[] = {g_self,        "--nofile",           nofile,
                    (char *)g_bin, "--format",           "jsonl",
                    "-q",          "--transport",        (char *)g_transport,
                    "--selector",  (char *)g_selector,   "--max-tasks",
                    "100000",      (char *)U(slow, "/"), NULL};
    interrupt_ctx ic = {.sig = SIGTERM};
    crawl_run_free(&c->run);
    if (run_crawler_at(&c->run, argv, CRAWL_LIMIT_SECS, 4.0, send_signal, &ic) < 0)
        fail_msg("cannot run %s", g_bin);
    r = &c->run;
    if (!ic.sent || !ic.handlers)
        fail_msg("the signal was not sent to a crawler that handles it\n%s", crawl_run_describe(r));
    print_message("SIGTERM at 4 s: the crawler ended after %.2f s\n", r->seconds);
    if (r->exit_code != 0 || r->seconds >= 10 || !r->summary)
        fail_msg("want exit 0 and a report within 10 s after a SIGTERM at 4 s\n%s",
                 crawl_run_describe(r));
    const jv *intr = jobj_get(r->summary, "interrupted");
    if (!intr || !intr->b || jobj_int(r->summary, "done", -1) != 1
        || jobj_int(r->summary, "todo", -1) != 5000)
        fail_msg("want interrupted, done 1, todo 5000 (in flight and waiting)\n%s",
                 crawl_run_describe(r));
}

/* ---- cross-stage: the same records from every stage and transport --------------------- */

/* Drop ", \"num_new_urls\": N" from each line (it depends on the order of completion). */
static char *strip_new_urls(const char *text)
{
    char *out = malloc(strlen(text) + 1), *o = out;
    const char *key = ", \"num_new_urls\": ";
    assert_non_null(out);
    while (*text) {
        const char *nl = strchr(text, '\n');
        size_t n = nl ? (size_t)(nl - text) : strlen(text);
        const char *k = strstr(text, key);
        size_t keep = (k && k < text + n) ? (size_t)(k - text) : n;
        memcpy(o, text, keep);
        o += keep;
        *o++ = '\n';
        text += n + (nl ? 1 : 0);
    }
    *o = '\0';
    return out;
}

/* Drop ", \"KEY\": V" from each line, in place, for the keys crawl-queue's records have
 * and stages 1 and 2's do not: http_version (which HTTP version answered: the raw
 * transport's server may answer 1.0 to its 1.0 request, libcurl asks for 1.1), the
 * times (fetched_at, elapsed: a run's own), url_normalized, and by default the spider
 * middlewares' depth and referrer. V: a string, a number or null. */
static void drop_queue_keys(char *text)
{
    static const char *const keys[] = {
        ", \"url_normalized\": ", ", \"http_version\": ", ", \"fetched_at\": ",
        ", \"elapsed\": ",        ", \"depth\": ",        ", \"referrer\": "};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char *k;
        while ((k = strstr(text, keys[i]))) {
            char *end = k + strlen(keys[i]);
            if (*end == '"') {
                for (end++; *end && *end != '"'; end++)
                    if (*end == '\\' && end[1])
                        end++;
                end += *end == '"';
            } else {
                end += strspn(end, "nul-.0123456789");
            }
            memmove(k, end, strlen(end) + 1);
        }
    }
}

static void first_difference(const char *a, const char *b, char *msg, size_t len)
{
    size_t line = 1;
    const char *la = a, *lb = b;
    while (*a && *a == *b) {
        if (*a == '\n') {
            line++;
            la = a + 1;
            lb = b + 1;
        }
        a++;
        b++;
    }
    snprintf(msg, len, "line %zu:\n  %.300s\n  %.300s", line, la, lb);
    char *nl;
    if ((nl = strchr(msg, '\n')) && (nl = strchr(nl + 1, '\n')) && (nl = strchr(nl + 1, '\n')))
        *nl = '\0';
}

static void cross_compare(case_ctx *c, const char *b, const char *max_tasks, bool strip)
{
    static const char *const transports[] = {"raw", "curl"};
    /* crawl-queue as the chapter's crawler (--chapter), obeying robots.txt (a 404 here),
     * then with --ignore-robots (no middleware at all); then as it runs by default
     * (polite: one host, at most 8 in flight, no Crawl-delay here) */
    static const char *const queue_runs[][2] = {
        {"--chapter", NULL}, {"--chapter", "--ignore-robots"}, {NULL, NULL}};
    char *ref = NULL, refname[256] = "";
    for (int s = 0; s < g_nstages; s++) {
        bool queue = strcmp(stage_of(g_stages[s]), "queue") == 0;
        for (int t = 0; t < 2 * (queue ? 3 : 1); t++) {
            const char *f0 = queue ? queue_runs[t / 2][0] : NULL;
            const char *f1 = queue ? queue_runs[t / 2][1] : NULL;
            const crawl_run *r = crawl_with(c, g_stages[s], transports[t % 2], "--max-tasks",
                                            max_tasks, U(b, "/"), f0, f1, NULL);
            expect_generated(r, b, 300);
            char *text = strip ? strip_new_urls(r->records_text) : strdup(r->records_text);
            drop_queue_keys(text);
            char name[256];
            snprintf(name, sizeof name, "%s --transport %s --max-tasks %s%s%s%s%s",
                     stage_of(g_stages[s]), transports[t % 2], max_tasks, f0 ? " " : "",
                     f0 ? f0 : "", f1 ? " " : "", f1 ? f1 : "");
            if (!ref) {
                ref = text;
                snprintf(refname, sizeof refname, "%s", name);
                continue;
            }
            if (strcmp(ref, text) != 0) {
                char diff[1024];
                first_difference(ref, text, diff, sizeof diff);
                free(ref);
                free(text);
                fail_msg("records differ%s: %s vs %s at %s",
                         strip ? " (num_new_urls left out)" : "", refname, name, diff);
            }
            free(text);
        }
    }
    free(ref);
}

/* With one task the order of fetches is the FIFO order in every stage: byte-identical. */
static void test_cross_stage_sequential(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "--generate", "pages=300,links=8", NULL);
    cross_compare(c, b, "1", false);
}

/* With 20 tasks only num_new_urls may differ (it depends on which page came first). */
static void test_cross_stage_concurrent(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "--generate", "pages=300,links=8", NULL);
    cross_compare(c, b, "20", true);
}

/* ---- https through the curl transport -------------------------------------------------- */

static const char *find_in_path(const char *prog)
{
    static char buf[1024];
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/bin:/bin";
    while (*path) {
        const char *e = strchr(path, ':');
        size_t n = e ? (size_t)(e - path) : strlen(path);
        snprintf(buf, sizeof buf, "%.*s/%s", (int)n, path, prog);
        if (n && access(buf, X_OK) == 0)
            return buf;
        path += n + (e ? 1 : 0);
    }
    return NULL;
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

/* Run openssl with args (NULL-terminated; every path in them absolute); it must exit 0. */
static void openssl(case_ctx *c, const char *ssl, const char *first, ...)
{
    char *argv[40] = {(char *)ssl};
    va_list ap;
    va_start(ap, first);
    run_appended(c, argv, 1, 40, first, ap);
    va_end(ap);
    if (c->run.exit_code != 0)
        fail_msg("openssl %s failed: %s", first, crawl_run_describe(&c->run));
}

/* A test CA (d/ca.pem) and a server certificate it signed (d/server.pem, its key
 * d/server.key) for the addresses san names ("IP:127.0.0.1,IP:127.0.0.2"). */
static void make_certs(case_ctx *c, const char *ssl, const char *d, const char *san)
{
    char ca_key[300], ca_pem[300], key[300], csr[300], pem[300], ext[300], srl[300];
    snprintf(ca_key, sizeof ca_key, "%s/ca.key", d);
    snprintf(ca_pem, sizeof ca_pem, "%s/ca.pem", d);
    snprintf(key, sizeof key, "%s/server.key", d);
    snprintf(csr, sizeof csr, "%s/server.csr", d);
    snprintf(pem, sizeof pem, "%s/server.pem", d);
    snprintf(ext, sizeof ext, "%s/ext.cnf", d);
    snprintf(srl, sizeof srl, "%s/ca.srl", d);
    char exts[512];
    snprintf(exts, sizeof exts,
             "subjectAltName=%s\nbasicConstraints=critical,CA:FALSE\n"
             "keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n",
             san);
    write_file(d, "ext.cnf", exts);
    openssl(c, ssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-keyout", ca_key, "-out", ca_pem, "-days", "2", "-subj",
            "/CN=crawlstages test CA", "-addext", "basicConstraints=critical,CA:TRUE", "-addext",
            "keyUsage=critical,keyCertSign,cRLSign", NULL);
    openssl(c, ssl, "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", key, "-out", csr, "-subj", "/CN=127.0.0.1", NULL);
    openssl(c, ssl, "x509", "-req", "-in", csr, "-CA", ca_pem, "-CAkey", ca_key, "-CAserial", srl,
            "-CAcreateserial", "-out", pem, "-days", "2", "-extfile", ext, NULL);
}

static void test_https(void **state)
{
    case_ctx *c = *state;
    const char *found = find_in_path("openssl");
    if (!found) {
        print_message("openssl not found in PATH: skipping the https test\n");
        skip();
    }
    char ssl[1024];
    snprintf(ssl, sizeof ssl, "%s", found);
    snprintf(c->tmpdir, sizeof c->tmpdir, "/tmp/crawlstages-https-XXXXXX");
    assert_non_null(mkdtemp(c->tmpdir));
    const char *d = c->tmpdir;
    make_certs(c, ssl, d, "IP:127.0.0.1");
    char ca_pem[300], key[300], pem[300];
    snprintf(ca_pem, sizeof ca_pem, "%s/ca.pem", d);
    snprintf(key, sizeof key, "%s/server.key", d);
    snprintf(pem, sizeof pem, "%s/server.pem", d);
    write_file(d, "index.html",
               "<html><body><a href=\"a.html\">a</a>\n"
               "<a href=\"/b.html\">b</a></body></html>\n");
    write_file(d, "a.html",
               "<html><body><a href=\"b.html\">b</a>\n"
               "<a href=\"index.html\">home</a></body></html>\n");
    write_file(d, "b.html", "<html><body><a href=\"index.html\">home</a></body></html>\n");

    int port = -1;
    /* a few tries in case another process takes the port between probe and bind */
    for (int attempt = 0; attempt < 3 && port < 0; attempt++) {
        int p = testsite_free_port();
        assert_true(p > 0);
        char accept[64];
        snprintf(accept, sizeof accept, "127.0.0.1:%d", p);
        char *argv[] = {ssl, "s_server", "-WWW", "-accept", accept, "-cert",
                        pem, "-key",     key,    "-quiet",  NULL};
        kill_and_reap(c->extra_pid);
        c->extra_pid = spawn(argv, d, -1, -1);
        assert_true(c->extra_pid > 0);
        for (int i = 0; i < 100; i++) { /* up to 5 s */
            if (port_accepts(p)) {
                port = p;
                break;
            }
            if (waitpid(c->extra_pid, NULL, WNOHANG) == c->extra_pid) {
                c->extra_pid = -1;
                break;
            }
            sleep_ms(50);
        }
    }
    if (port < 0)
        fail_msg("openssl s_server did not start");
    char base[64], root[96];
    snprintf(base, sizeof base, "https://127.0.0.1:%d", port);
    snprintf(root, sizeof root, "%s/index.html", base);

    for (int s = 0; s < g_nstages; s++) {
        const crawl_run *r =
            crawl_with(c, g_stages[s], "curl", "--max-tasks", "2", "--cacert", ca_pem, root, NULL);
        EXPECT(r, base, PAGE("/index.html", 2, 2), PAGE("/a.html", 2, 0), PAGE("/b.html", 1, 0));
        r = crawl_with(c, g_stages[s], "curl", "--max-tries", "1", root, NULL);
        EXPECT(r, base, FAILED("/index.html"));
        const char *ex = jobj_str(r->records[0], "exception");
        if (!strcasestr(ex, "certificate"))
            fail_msg("%s without --cacert: exception '%s' does not mention the certificate",
                     stage_of(g_stages[s]), ex);
    }
    /* crawl-queue defaults to curl: also without --transport */
    for (int s = 0; s < g_nstages; s++) {
        if (strcmp(stage_of(g_stages[s]), "queue") != 0)
            continue;
        char *argv[] = {(char *)g_stages[s], "--format", "jsonl", "-q",
                        "--cacert",          ca_pem,     root,    NULL};
        run_argv(c, argv);
        if (c->run.exit_code != 0 || c->run.nrecords != 3)
            fail_msg("crawl-queue (default transport) over https\n%s", crawl_run_describe(&c->run));
        expect_all_ok(&c->run);
    }
}

/* ---- HTTP/2: nginx over TLS, two hosts ------------------------------------------------ */

#define H2_PAGES 40
#define H2_GZ_PAGE                                                                                 \
    "<html><body><p>Compressed by nginx and sent over HTTP/2 with no Content-Length: "             \
    "our own decoder undoes it for --warc.</p><a href=\"p3.html\">p3</a></body></html>\n"

static const char *nginx_path(void)
{
    const char *p = find_in_path("nginx");
    return p ? p : access("/usr/sbin/nginx", X_OK) == 0 ? "/usr/sbin/nginx" : NULL;
}

/* The site, flat in d: p0.html .. p{H2_PAGES-1}.html (index.html is p0), each linking
 * to two others, to gz.html (sent gzip-compressed), old.html (a 301 to p1.html) and
 * missing.html (404); p5.html also to p7.html on the other host. */
static void write_h2_site(const char *d, int port)
{
    static char page[4096];
    for (int i = 0; i <= H2_PAGES; i++) {
        int n = snprintf(page, sizeof page,
                         "<html><body><h1>page %d</h1><a href=\"p%d.html\">next</a> "
                         "<a href=\"p%d.html\">skip</a> <a href=\"gz.html\">gz</a> "
                         "<a href=\"old.html\">old</a> <a href=\"missing.html\">gone</a>\n",
                         i % H2_PAGES, (i + 1) % H2_PAGES, (3 * i + 1) % H2_PAGES);
        if (i == 5)
            n += snprintf(page + n, sizeof page - (size_t)n,
                          "<a href=\"https://127.0.0.2:%d/p7.html\">there</a>\n", port);
        for (int k = 0; k < 20; k++)
            n += snprintf(page + n, sizeof page - (size_t)n,
                          "<p>Filler line %d of page %d, so that bodies take a few "
                          "frames.</p>\n",
                          k, i);
        snprintf(page + n, sizeof page - (size_t)n, "</body></html>\n");
        char name[32];
        snprintf(name, sizeof name, i < H2_PAGES ? "p%d.html" : "index.html", i % H2_PAGES);
        write_file(d, name, page);
    }
    write_file(d, "gz.html", H2_GZ_PAGE);
}

/* nginx's config: HTTP/2 over TLS on 127.0.0.1:port and 127.0.0.2:port, one process,
 * every path in d; the access log says the address, connection serial and protocol
 * of each request. */
static void write_nginx_conf(const char *d, int port)
{
    char conf[4096];
    snprintf(conf, sizeof conf,
             "worker_processes 1;\nmaster_process off;\ndaemon off;\n"
             "pid %1$s/nginx.pid;\nerror_log %1$s/error.log;\n"
             "events { worker_connections 256; }\n"
             "http {\n"
             "  types { text/html html; }\n"
             "  default_type application/octet-stream;\n"
             "  client_body_temp_path %1$s;\n  proxy_temp_path %1$s;\n"
             "  fastcgi_temp_path %1$s;\n  uwsgi_temp_path %1$s;\n  scgi_temp_path %1$s;\n"
             "  log_format h2 '$server_addr $connection $server_protocol $status "
             "$request_uri';\n"
             "  access_log %1$s/access.log h2;\n"
             "  server {\n"
             "    listen 127.0.0.1:%2$d ssl http2;\n    listen 127.0.0.2:%2$d ssl http2;\n"
             "    ssl_certificate %1$s/server.pem;\n"
             "    ssl_certificate_key %1$s/server.key;\n"
             "    root %1$s;\n"
             "    location = /old.html { return 301 /p1.html; }\n"
             "    location = /gz.html { gzip on; gzip_min_length 1; }\n"
             "  }\n"
             "}\n",
             d, port);
    write_file(d, "nginx.conf", conf);
}

/* Start nginx on a free port (a few tries, in case another process takes it between
 * probe and bind); returns the port. */
static int start_nginx(case_ctx *c, const char *nginx, const char *ssl, const char *d)
{
    make_certs(c, ssl, d, "IP:127.0.0.1,IP:127.0.0.2");
    char conf[300], errlog[300];
    snprintf(conf, sizeof conf, "%s/nginx.conf", d);
    snprintf(errlog, sizeof errlog, "%s/error.log", d);
    for (int attempt = 0; attempt < 3; attempt++) {
        int p = testsite_free_port();
        assert_true(p > 0);
        write_h2_site(d, p);
        write_nginx_conf(d, p);
        char *argv[] = {(char *)nginx, "-p", (char *)d, "-c", conf, "-e", errlog, NULL};
        kill_and_reap(c->extra_pid);
        c->extra_pid = spawn(argv, d, -1, -1);
        assert_true(c->extra_pid > 0);
        for (int i = 0; i < 100; i++) { /* up to 5 s */
            if (port_accepts(p))
                return p;
            if (waitpid(c->extra_pid, NULL, WNOHANG) == c->extra_pid) {
                c->extra_pid = -1;
                break;
            }
            sleep_ms(50);
        }
    }
    char *log = NULL;
    size_t len = 0;
    FILE *f = fopen(errlog, "r");
    if (f) {
        log = calloc(1, 2049);
        len = fread(log, 1, 2048, f);
        fclose(f);
    }
    fail_msg("nginx did not start; its error log: %.*s", (int)len, log ? log : "");
    return -1;
}

/* check_access_log's reading, once. */
static size_t read_access_log(const char *path, long from, const char *proto, int conns[2])
{
    char line[1024];
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    assert_int_equal(fseek(f, from, SEEK_SET), 0);
    long seen[2][64];
    size_t lines = 0;
    conns[0] = conns[1] = 0;
    while (fgets(line, sizeof line, f)) {
        char addr[64], got[32];
        long conn;
        if (sscanf(line, "%63s %ld %31s", addr, &conn, got) != 3)
            fail_msg("access log line '%s' is not 'ADDRESS CONNECTION PROTOCOL ...'", line);
        if (strcmp(got, proto))
            fail_msg("a request over %s, not %s: %s", got, proto, line);
        int h = !strcmp(addr, "127.0.0.2");
        bool known = false;
        for (int i = 0; i < conns[h]; i++)
            known |= seen[h][i] == conn;
        if (!known && conns[h] < 64)
            seen[h][conns[h]++] = conn;
        lines++;
    }
    fclose(f);
    return lines;
}

/* The access log from byte `from` on, once it has `want` lines (nginx writes a line
 * after it has sent the response, so it may come just after the crawler has ended:
 * waited for, 2 s at most): every line's protocol must be proto. Returns the lines;
 * conns[0], conns[1]: the connections 127.0.0.1 and 127.0.0.2 saw. */
static size_t check_access_log(const char *d, long from, const char *proto, size_t want,
                               int conns[2])
{
    char path[300];
    snprintf(path, sizeof path, "%s/access.log", d);
    size_t lines = 0;
    for (int i = 0; i < 40; i++) {
        lines = read_access_log(path, from, proto, conns);
        if (lines >= want)
            break;
        sleep_ms(50);
    }
    return lines;
}

static long file_size(const char *d, const char *name)
{
    char path[300];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", d, name);
    return stat(path, &st) == 0 ? (long)st.st_size : 0;
}

/* Every record with a status says http_version `want`; the others null. */
static void expect_http_version(const crawl_run *r, const char *want)
{
    for (size_t i = 0; i < r->nrecords; i++) {
        const char *v = jobj_str(r->records[i], "http_version");
        bool status = !jobj_is_null(r->records[i], "status");
        if (status ? !v || strcmp(v, want) : !jobj_is_null(r->records[i], "http_version"))
            fail_msg("%s: http_version %s, want %s\n%s", jobj_str(r->records[i], "url"),
                     v ? v : "null", status ? want : "null", crawl_run_describe(r));
    }
}

/* The h2 archive: read strictly (parse_warc: a status line HTTP/1.x), each response
 * and request record says WARC-Protocol: h2, its request line HTTP/1.1; each payload
 * digest is its payload's, a page's payload is its file on disk; warcio.js reads the
 * same and decodes gz.html to the page. */
static void check_h2_warc(const char *d, const char *path, const char *proto)
{
    size_t len, nmembers;
    char *data = read_warc(path, false, &len, NULL, 0, &nmembers);
    static wrec recs[512];
    size_t n = parse_warc(data, len, recs, 512), responses = 0;
    for (size_t i = 1; i < n; i++) {
        const wrec *w = &recs[i];
        if (strcmp(w->protocol, proto))
            fail_msg("%s %s: WARC-Protocol '%s', want '%s'", w->type, w->uri, w->protocol, proto);
        if (!strcmp(w->type, "request")) {
            const char *eol = memmem(w->block, w->block_len, "\r\n", 2);
            if (!eol || eol - w->block < 9 || memcmp(eol - 9, " HTTP/1.1", 9))
                fail_msg("request %s: the request line does not end in HTTP/1.1", w->uri);
            continue;
        }
        if (strcmp(w->type, "response"))
            continue; /* a revisit: the same payload as a response */
        responses++;
        size_t plen;
        char *payload = dechunk(w, &plen), dig[38];
        sha1_b32(payload, plen, dig);
        if (strcmp(dig, w->payload_digest))
            fail_msg("%s: WARC-Payload-Digest %s, the payload's is %s", w->uri, w->payload_digest,
                     dig);
        const char *name = strrchr(w->uri, '/') + 1;
        if (w->status == 200 && strcmp(name, "gz.html")) {
            char file[64];
            snprintf(file, sizeof file, "%s", *name ? name : "index.html");
            char fpath[400];
            snprintf(fpath, sizeof fpath, "%s/%s", d, file);
            size_t flen;
            char *served = read_warc(fpath, false, &flen, NULL, 0, &nmembers); /* as is */
            if (flen != plen || memcmp(served, payload, plen))
                fail_msg("%s: the archived payload (%zu bytes) is not the file (%zu bytes)", w->uri,
                         plen, flen);
            free(served);
        }
        free(payload);
    }
    if (responses < H2_PAGES)
        fail_msg("%zu response records in %s", responses, path);
    const char *warcio = getenv("WARCIO");
    if (warcio && *warcio)
        check_with_warcio(warcio, path, recs, n, "/gz.html", H2_GZ_PAGE);
    else
        print_message("warcio (webrecorder's warcio.js) not installed: the independent "
                      "reader's check is skipped (install it: scripts/install-warcio.sh)\n");
    free(data);
}

/* Records sorted by url, num_new_urls, http_version, depth and referrer left out: what
 * two crawls of one site over two protocols must share (malloc'd). */
static char *comparable(const crawl_run *r)
{
    char *t = strip_new_urls(r->records_text);
    drop_queue_keys(t);
    return t;
}

/* nginx serves a site over HTTP/2 with a certificate of a CA of the test's own, on
 * 127.0.0.1 and 127.0.0.2 (one port):
 *  - with neither --insecure nor --cacert, every record says why: robots.txt
 *    unreachable: SSL certificate problem (--ignore-robots: the certificate problem);
 *  - --cacert the CA, or --insecure: every request over HTTP/2, one connection per
 *    host (nginx's log: the connection serial of each request), every record says
 *    "http_version": "HTTP/2"; --insecure warns once;
 *  - --http1.1: every request over HTTP/1.1, and the same records;
 *  - the WARC of either reads strictly as HTTP/1.x (WARC-Protocol: h2 for HTTP/2),
 *    digests exact, warcio.js agrees;
 *  - --transport raw refuses --insecure and --http1.1 (one line, exit 2). */
static void test_h2(void **state)
{
    case_ctx *c = *state;
    const char *bin = g_stages[0];
    g_bin = bin;
    char ssl[1024], nginx[1024];
    snprintf(ssl, sizeof ssl, "%s", find_in_path("openssl"));
    snprintf(nginx, sizeof nginx, "%s", nginx_path());
    snprintf(c->tmpdir, sizeof c->tmpdir, "/tmp/crawlstages-h2-XXXXXX");
    assert_non_null(mkdtemp(c->tmpdir));
    const char *d = c->tmpdir;
    int port = start_nginx(c, nginx, ssl, d);
    char root1[96], root2[96], base1[64], base2[64], ca[300], h2warc[300], h1warc[300];
    snprintf(base1, sizeof base1, "https://127.0.0.1:%d", port);
    snprintf(base2, sizeof base2, "https://127.0.0.2:%d", port);
    snprintf(root1, sizeof root1, "%s/", base1);
    snprintf(root2, sizeof root2, "%s/p20.html", base2);
    snprintf(ca, sizeof ca, "%s/ca.pem", d);
    snprintf(h2warc, sizeof h2warc, "%s/h2.warc", d);
    snprintf(h1warc, sizeof h1warc, "%s/h1.warc", d);
    /* each host its pages, gz, old and missing; the first "/" too */
    size_t want = 2 * (H2_PAGES + 3) + 1;

    const char *raw_flags[] = {"--insecure", "--http1.1"};
    for (int i = 0; i < 2; i++) {
        char *argv[] = {(char *)bin, "--transport", "raw", (char *)raw_flags[i], root1, NULL};
        run_argv(c, argv);
        expect_one_line_exit(&c->run, 2, raw_flags[i]);
    }

    const crawl_run *r = crawl_with(c, bin, "curl", "--max-tries", "1", root1, root2, NULL);
    if (r->nrecords != 2)
        fail_msg("without --insecure: %zu records, want the 2 roots\n%s", r->nrecords,
                 crawl_run_describe(r));
    for (size_t i = 0; i < 2; i++) {
        const char *ex = jobj_str(r->records[i], "exception");
        char tail[160];
        snprintf(tail, sizeof tail,
                 "(fetching %s/robots.txt; RFC 9309: nothing fetched without its robots.txt)",
                 i == 0 ? base1 : base2);
        static const char head[] =
            "IgnoreRequest: host could not be reached: SSL certificate problem: ";
        if (!ex || strncmp(ex, head, sizeof head - 1) || !strstr(ex, tail))
            fail_msg("without --insecure: exception '%s', want it to end %s", ex ? ex : "null",
                     tail);
    }
    r = crawl_with(c, bin, "curl", "--max-tries", "1", "--ignore-robots", root1, NULL);
    const char *ex = r->nrecords == 1 ? jobj_str(r->records[0], "exception") : NULL;
    if (!ex || strncmp(ex, "SSL certificate problem: ", 25))
        fail_msg("--ignore-robots without --insecure: want the certificate problem\n%s",
                 crawl_run_describe(r));

    long from = file_size(d, "access.log");
    int conns[2];
    r = crawl_with(c, bin, "curl", "--cacert", ca, root1, root2, NULL);
    if (r->nrecords != want)
        fail_msg("--cacert: %zu records, want %zu\n%s", r->nrecords, want, crawl_run_describe(r));
    expect_http_version(r, "HTTP/2");
    check_access_log(d, from, "HTTP/2.0", want + 2, conns);

    from = file_size(d, "access.log");
    char *argv[] = {(char *)bin, "--insecure", "--max-pages", "1", root1, NULL};
    run_argv(c, argv);
    check_access_log(d, from, "HTTP/2.0", 2, conns);
    size_t warned = 0;
    for (const char *p = c->run.err; (p = strstr(p, "certificates are not checked")); p++)
        warned++;
    if (c->run.exit_code != 0 || warned != 1)
        fail_msg("--insecure: want one warning line\n%s", crawl_run_describe(&c->run));

    from = file_size(d, "access.log");
    r = crawl_with(c, bin, "curl", "--insecure", "--warc", h2warc, root1, root2, NULL);
    if (r->nrecords != want)
        fail_msg("--insecure: %zu records, want %zu\n%s", r->nrecords, want, crawl_run_describe(r));
    expect_http_version(r, "HTTP/2");
    size_t lines = check_access_log(d, from, "HTTP/2.0", want + 2, conns);
    if (conns[0] != 1 || conns[1] != 1 || lines != want + 2)
        fail_msg("HTTP/2: %zu requests (want %zu, robots.txt included) on %d and %d "
                 "connections (want one per host)",
                 lines, want + 2, conns[0], conns[1]);
    print_message("HTTP/2: %zu requests to 2 hosts on %d + %d connections\n", lines, conns[0],
                  conns[1]);
    char *h2 = comparable(r);

    /* ten requests to a new host at once (no robots.txt first): they wait for its one
     * connection (CURLOPT_PIPEWAIT) rather than each opening its own */
    from = file_size(d, "access.log");
    char roots[10][96];
    for (int i = 0; i < 10; i++)
        snprintf(roots[i], sizeof roots[i], "%s/p%d.html", base1, i);
    r = crawl_with(c, bin, "curl", "--insecure", "--ignore-robots", "--max-pages", "10", roots[0],
                   roots[1], roots[2], roots[3], roots[4], roots[5], roots[6], roots[7], roots[8],
                   roots[9], NULL);
    lines = check_access_log(d, from, "HTTP/2.0", 10, conns);
    if (r->nrecords != 10 || lines != 10 || conns[0] != 1)
        fail_msg("10 roots at once: %zu records, %zu requests on %d connections (want 10 "
                 "on one)\n%s",
                 r->nrecords, lines, conns[0], crawl_run_describe(r));

    from = file_size(d, "access.log");
    r = crawl_with(c, bin, "curl", "--insecure", "--http1.1", "--warc", h1warc, root1, root2, NULL);
    expect_http_version(r, "HTTP/1.1");
    lines = check_access_log(d, from, "HTTP/1.1", want + 2, conns);
    if (lines != want + 2)
        fail_msg("--http1.1: %zu requests, want %zu", lines, want + 2);
    char *h1 = comparable(r);
    if (strcmp(h1, h2)) {
        char diff[1024];
        first_difference(h2, h1, diff, sizeof diff);
        free(h1);
        free(h2);
        fail_msg("records over HTTP/2 and HTTP/1.1 differ at %s", diff);
    }
    free(h1);
    free(h2);
    check_h2_warc(d, h2warc, "h2");
    check_h2_warc(d, h1warc, "");
}

/* ---- out of descriptors ------------------------------------------------------------------ */

/* 37: --max-tasks 200 with a hard limit of 64 open files (the crawler cannot raise it):
 * socket() fails with EMFILE for most fetches. They wait for a free descriptor
 * instead of failing: every page is fetched once, none is recorded as failed, and the
 * server never sees more requests at once than the limit allows. crawl-queue with
 * --per-host 0: politeness without its cap of 8 per host, so that the descriptors are
 * what bounds it. */
static void test_out_of_descriptors(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "--delay", "50", "--generate", "pages=300,links=8", NULL);
    g_nofile = 64;
    const crawl_run *r =
        crawl(c, "--max-tasks", "200", U(b, "/"), is_queue() ? "--per-host" : NULL, "0", NULL);
    g_nofile = 0;
    expect_generated(r, b, 300);
    expect_served(c, 0, 300);
    long peak = ts_stat(&c->srv[0], "peak_in_progress");
    if (peak > 64 || peak < 32)
        fail_msg("testsite saw %ld requests at once; with 64 descriptors want 32..64", peak);
}

/* ---- out of memory: loud, never a completed crawl ------------------------------------ */

/* Run stage on url with the curl or raw transport through `scenarios --vmem KB`. */
static void run_limited(case_ctx *c, const char *stage, const char *transport, long kb,
                        const char *url)
{
    char limit[32];
    snprintf(limit, sizeof limit, "%ld", kb);
    char *argv[] = {g_self,  "--vmem", limit,         (char *)stage,     "--format",
                    "jsonl", "-q",     "--transport", (char *)transport, (char *)url,
                    NULL};
    run_argv(c, argv);
}

/* The smallest address-space limit (a multiple of 8 MiB) under which stage crawls a
 * one-page site to the end: what its libraries and a start take on this machine. */
static long smallest_working_limit(case_ctx *c, const char *stage, const char *transport,
                                   const char *url)
{
    for (long kb = 32 * 1024; kb <= 1024 * 1024; kb += 8 * 1024) {
        run_limited(c, stage, transport, kb, url);
        if (c->run.exit_code == 0 && c->run.summary)
            return kb;
    }
    fail_msg("%s --transport %s: no crawl of one page under 1 GiB of address space\n%s",
             stage_of(stage), transport, crawl_run_describe(&c->run));
    return 0;
}

/* Issue 13, item 3: under `ulimit -v`, a page of 200,000 links used to end in exit 0,
 * a summary with todo 0, records dropped with a log line each, and URLs lost without
 * one (a failed allocation read as "already seen"). Now a failed allocation anywhere
 * (ours, libcurl's, libxml2's) ends the process with one line. Each stage and
 * transport gets 16 MiB more than it needs for a one-page crawl: room for the page's
 * 7 MB body, less than its 200,000 links then take, and must die by SIGABRT with one
 * "STAGE: out of memory" line on stderr and no summary on stdout. Seen in gdb (Debug,
 * raw transport): crawl-callbacks dies growing crawl.c's fpset in add_url, crawl-queue
 * a page's link set in on_link: the path of issue 13. It was 24 MiB until the packed
 * jobq (jobq.c, about 60 B a queued URL instead of 106): with that, crawl-callbacks
 * holds all 200,000 links in 19 MiB over its one-page limit (VmPeak 84.8 MB under
 * 88 MiB), finishes the crawl and exits 0. */
#define OOM_HEADROOM_KB (16 * 1024)

static void test_out_of_memory(void **state)
{
    case_ctx *c = *state;
    static const char *const transports[] = {"raw", "curl"};
    const char *b = start_site(c, "scenario-oom.site", NULL);
    for (int s = 0; s < g_nstages; s++) {
        for (int t = 0; t < 2; t++) {
            const char *stage = g_stages[s], *tr = transports[t];
            long kb = smallest_working_limit(c, stage, tr, U(b, "/l/1")) + OOM_HEADROOM_KB;
            run_limited(c, stage, tr, kb, U(b, "/"));
            const crawl_run *r = &c->run;
            char want[64];
            snprintf(want, sizeof want, "crawl-%s: out of memory", stage_of(stage));
            bool one_line = r->err_len > 0 && strchr(r->err, '\n') == r->err + r->err_len - 1;
            if (r->term_signal != SIGABRT || r->summary || strncmp(r->err, want, strlen(want))
                || !one_line)
                fail_msg("%s --transport %s under %ld KiB on 200,000 links: want SIGABRT, one "
                         "line \"%s (N bytes)\" on stderr and no summary\n%s",
                         stage_of(stage), tr, kb, want, crawl_run_describe(r));
            printf("# %s --transport %s: %ld KiB; %.2f s, then: %s", stage_of(stage), tr, kb,
                   r->seconds, r->err);
        }
    }
}

/* 43: a site crawled by name, http://localhost:PORT/, from two roots at once (their
 * lookups start together): every page fetched once, and -v tells how names were
 * resolved — on the raw transport one lookup in all (stages 1-2: the chapter's cache;
 * stage 3: the thread pool, where the two concurrent lookups share one), on the curl
 * transport which resolver libcurl has. (Counting libcurl's own lookups takes an
 * interposed getaddrinfo: tests/unit/test_curldns.c.) */
static void test_dns_by_name(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, "scenario-dns.site", NULL);
    char base[128], root2[160];
    snprintf(base, sizeof base, "http://localhost%s", strrchr(b, ':'));
    snprintf(root2, sizeof root2, "%s/d1", base);
    char *argv[] = {(char *)g_bin,
                    "--format",
                    "jsonl",
                    "-v",
                    "--transport",
                    (char *)g_transport,
                    "--selector",
                    (char *)g_selector,
                    (char *)U(base, "/"),
                    root2,
                    NULL};
    run_argv(c, argv);
    const crawl_run *r = &c->run;
    if (r->exit_code != 0 || !r->summary)
        fail_msg("crawl of %s failed\n%s", base, crawl_run_describe(r));
    EXPECT(r, base, PAGE("/", 20, 19), PAGE("/d1", 0, 0), PAGE("/d2", 0, 0), /* d1: a root */
           PAGE("/d3", 0, 0), PAGE("/d4", 0, 0), PAGE("/d5", 0, 0), PAGE("/d6", 0, 0),
           PAGE("/d7", 0, 0), PAGE("/d8", 0, 0), PAGE("/d9", 0, 0), PAGE("/d10", 0, 0),
           PAGE("/d11", 0, 0), PAGE("/d12", 0, 0), PAGE("/d13", 0, 0), PAGE("/d14", 0, 0),
           PAGE("/d15", 0, 0), PAGE("/d16", 0, 0), PAGE("/d17", 0, 0), PAGE("/d18", 0, 0),
           PAGE("/d19", 0, 0), PAGE("/d20", 0, 0));
    expect_served(c, 0, 21);
    const char *want =
        strcmp(g_transport, "raw") == 0 ? "DNS: 1 lookup(s)" : "libcurl's resolver: ";
    if (!strstr(r->err, want))
        fail_msg("stderr does not say \"%s\"\n%s", want, crawl_run_describe(r));
}

/* ---- valgrind: one crawl per stage and transport, memcheck-clean ------------------------ */

static const char *g_valgrind;

/* The crawl of case 11 (every 3xx, an off-site redirect, links) under valgrind's memcheck:
 * any memory error or definite/indirect leak makes valgrind exit 99. crawl-queue runs
 * with its robots.txt middleware (the default) and --store, so the thread pool and the
 * SQLite pipeline are checked too. */
static void test_valgrind(void **state)
{
    case_ctx *c = *state;
    static const char *const transports[] = {"raw", "curl"};
    const char *b = start_site(c, "scenario-redirect-codes.site", NULL);
    snprintf(c->tmpdir, sizeof c->tmpdir, "/tmp/crawlstages-valgrind-XXXXXX");
    assert_non_null(mkdtemp(c->tmpdir));
    for (int s = 0; s < g_nstages; s++) {
        for (int t = 0; t < 2; t++) {
            char store[300];
            snprintf(store, sizeof store, "%s/%s.db", c->tmpdir, transports[t]);
            bool queue = strcmp(stage_of(g_stages[s]), "queue") == 0;
            char *argv[] = {(char *)g_valgrind,
                            "-q",
                            "--leak-check=full",
                            "--errors-for-leak-kinds=definite,indirect",
                            "--error-exitcode=99",
                            (char *)g_stages[s],
                            "--format",
                            "jsonl",
                            "-q",
                            "--transport",
                            (char *)transports[t],
                            "--max-tasks",
                            "4",
                            (char *)U(b, "/"),
                            queue ? "--store" : NULL,
                            store,
                            NULL};
            run_argv(c, argv);
            const crawl_run *r = &c->run;
            if (r->exit_code != 0 || !r->summary)
                fail_msg("%s --transport %s under valgrind: exit %d (99: memcheck errors)\n%s",
                         stage_of(g_stages[s]), transports[t], r->exit_code, crawl_run_describe(r));
            EXPECT(r, b, PAGE("/", 7, 7), REDIR("/c300", 300, "/t300"),
                   REDIR("/c301", 301, "/t301"), REDIR("/c302", 302, "/t302"),
                   REDIR("/c303", 303, "/t303"), REDIR("/c307", 307, "/t307"),
                   REDIR("/c308", 308, "/t308"),
                   REDIR("/coff", 301, "http://elsewhere.example/away"), PAGE("/t300", 0, 0),
                   PAGE("/t301", 0, 0), PAGE("/t302", 0, 0), PAGE("/t303", 0, 0),
                   PAGE("/t307", 0, 0), PAGE("/t308", 0, 0));
        }
    }
}

/* ---- main ------------------------------------------------------------------------------ */

#define CASE(f) cmocka_unit_test_setup_teardown(f, case_setup, case_teardown)

static bool name_has(const char *name, const char *word, size_t len)
{
    return len > 0 && memmem(name, strlen(name), word, len) != NULL;
}

/* Keep only the cases whose name contains one of the comma-separated substrings of
 * env SCENARIO_FILTER (e.g. "redirect,charset"); all of them when it is unset or
 * empty. Returns the number kept, moved to the front of tests, or 0 (with a message)
 * when a substring matches no case: a renamed case must not silently drop out of the
 * exercise grader's list. */
static size_t filter_cases(struct CMUnitTest *tests, size_t n)
{
    const char *filter = getenv("SCENARIO_FILTER");
    if (!filter || !*filter)
        return n;
    for (const char *p = filter; *p;) {
        size_t len = strcspn(p, ","), i = 0;
        while (len > 0 && i < n && !name_has(tests[i].name, p, len))
            i++;
        if (len > 0 && i == n) {
            fprintf(stderr, "scenarios: SCENARIO_FILTER: no case matches \"%.*s\"\n", (int)len, p);
            return 0;
        }
        p += len + (p[len] == ',');
    }
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        for (const char *p = filter; *p;) {
            size_t len = strcspn(p, ",");
            if (name_has(tests[i].name, p, len)) {
                tests[kept++] = tests[i];
                break;
            }
            p += len + (p[len] == ',');
        }
    }
    return kept;
}

static int usage(void)
{
    fprintf(stderr,
            "usage: scenarios BINARY TRANSPORT SELECTOR\n"
            "       scenarios --cross-stage --stage BINARY...\n"
            "       scenarios --https --stage BINARY...\n"
            "       scenarios --h2 --stage crawl-queue\n"
            "       scenarios --valgrind VALGRIND --stage BINARY...\n"
            "       scenarios --oom --stage BINARY...\n"
            "       scenarios --nofile N PROGRAM ARGS...\n"
            "       scenarios --vmem KB PROGRAM ARGS...\n");
    return 2;
}

/* scenarios --nofile N PROGRAM ARGS... (test_out_of_descriptors) and
 * scenarios --vmem KB PROGRAM ARGS... (test_out_of_memory): set the limit, soft and
 * hard, and exec PROGRAM. Under --vmem, no core dump either. */
static int exec_with_limit(char **argv)
{
    bool vmem = !strcmp(argv[1], "--vmem");
    rlim_t n = (rlim_t)strtoul(argv[2], NULL, 10);
    struct rlimit rl = {vmem ? n * 1024 : n, vmem ? n * 1024 : n}, none = {0, 0};
    if (setrlimit(vmem ? RLIMIT_AS : RLIMIT_NOFILE, &rl) < 0
        || (vmem && setrlimit(RLIMIT_CORE, &none) < 0)) {
        fprintf(stderr, "scenarios %s: setrlimit: %s\n", argv[1], strerror(errno));
        return 127;
    }
    execv(argv[3], argv + 3);
    fprintf(stderr, "scenarios %s: exec %s: %s\n", argv[1], argv[3], strerror(errno));
    return 127;
}

/* Stage 1's hidden cases (tests/hidden/README.md), when the build has them. */
#ifdef CRAWL_HIDDEN_DIR
#include "scenarios_hidden.h"
#else
#define NHIDDEN_CASES 0
#endif

int main(int argc, char **argv)
{
    if (argc >= 4 && (!strcmp(argv[1], "--nofile") || !strcmp(argv[1], "--vmem")))
        return exec_with_limit(argv);
    ssize_t self = readlink("/proc/self/exe", g_self, sizeof g_self - 1);
    if (self > 0)
        g_self[self] = '\0';
    signal(SIGPIPE, SIG_IGN);
    if (argc >= 3 && !strcmp(argv[1], "--valgrind")) {
        g_valgrind = argv[2];
        for (int i = 3; i + 1 < argc && g_nstages < MAX_STAGES; i += 2) {
            if (strcmp(argv[i], "--stage") != 0)
                return usage();
            g_stages[g_nstages++] = argv[i + 1];
        }
        if (g_nstages == 0)
            return usage();
        const struct CMUnitTest tests[] = {CASE(test_valgrind)};
        return cmocka_run_group_tests_name("valgrind", tests, NULL, NULL);
    }
    if (argc >= 2
        && (!strcmp(argv[1], "--cross-stage") || !strcmp(argv[1], "--https")
            || !strcmp(argv[1], "--h2") || !strcmp(argv[1], "--oom"))) {
        for (int i = 2; i + 1 < argc && g_nstages < MAX_STAGES; i += 2) {
            if (strcmp(argv[i], "--stage") != 0)
                return usage();
            g_stages[g_nstages++] = argv[i + 1];
        }
        if (g_nstages == 0)
            return usage();
        if (!strcmp(argv[1], "--h2")) {
            if (!find_in_path("openssl") || !nginx_path()) {
                printf("scenario.h2: skipped: %s not found (Debian: apt-get install "
                       "nginx-light openssl)\n",
                       find_in_path("openssl") ? "nginx" : "openssl");
                return SKIPPED;
            }
            const struct CMUnitTest tests[] = {CASE(test_h2)};
            return cmocka_run_group_tests_name("scenario.h2", tests, NULL, NULL);
        }
        if (!strcmp(argv[1], "--https")) {
            const struct CMUnitTest tests[] = {CASE(test_https)};
            return cmocka_run_group_tests_name("scenario.https", tests, NULL, NULL);
        }
        if (!strcmp(argv[1], "--oom")) {
            const struct CMUnitTest tests[] = {CASE(test_out_of_memory)};
            return cmocka_run_group_tests_name("scenario.out_of_memory", tests, NULL, NULL);
        }
        const struct CMUnitTest tests[] = {CASE(test_cross_stage_sequential),
                                           CASE(test_cross_stage_concurrent)};
        return cmocka_run_group_tests_name("scenario.cross_stage", tests, NULL, NULL);
    }
    if (argc != 4)
        return usage();
    g_bin = argv[1];
    g_transport = argv[2];
    g_selector = argv[3];
    g_stage = stage_of(g_bin);

    struct CMUnitTest tests[] = {
        CASE(test_missing_page),
        CASE(test_link_cycle),
        CASE(test_offsite_links),
        CASE(test_exclude),
        CASE(test_two_roots),
        CASE(test_deep_root_fragment),
        CASE(test_redirect_chain),
        CASE(test_redirect_limit),
        CASE(test_redirect_cycle),
        CASE(test_redirect_join),
        CASE(test_redirect_codes),
        CASE(test_max_tasks),
        CASE(test_dropped_connection),
        CASE(test_refused_port),
        CASE(test_charset),
        CASE(test_content_types),
        CASE(test_xml_links),
        CASE(test_binary_ignored),
        CASE(test_html_oddities),
        CASE(test_timeout),
        CASE(test_size),
        CASE(test_generated_2000),
        CASE(test_raw_refuses_https),
        CASE(test_user_agent),
        CASE(test_hostile_status_line),
        CASE(test_borderline_heads),
        CASE(test_hostile_big_head),
        CASE(test_hostile_max_size),
        CASE(test_hostile_short_body),
        CASE(test_hostile_reset),
        CASE(test_hostile_drip),
        CASE(test_hostile_redirects),
        CASE(test_hostile_many_links),
        CASE(test_hostile_junk),
        CASE(test_hostile_nul_utf8),
        CASE(test_hostile_deep_nesting),
        CASE(test_hostile_escapes),
        CASE(test_timeout_never_zero),
        CASE(test_output_files),
        CASE(test_hostile_memory),
        CASE(test_high_concurrency),
        CASE(test_interrupt_sigint),
        CASE(test_interrupt_sigterm),
        CASE(test_out_of_descriptors),
        CASE(test_dns_by_name),
        CASE(test_robots_forbidden),
        CASE(test_robots_agent_and_ignore),
        CASE(test_robots_shared),
        CASE(test_robots_parked),
        CASE(test_robots_unreachable),
        CASE(test_robots_redirects),
        CASE(test_robots_interrupted),
        CASE(test_killed_mid_crawl),
        CASE(test_warc),
    };
    char name[256];
    snprintf(name, sizeof name, "scenario.%s.%s.%s", g_stage, g_transport, g_selector);
    struct CMUnitTest all[sizeof tests / sizeof tests[0] + NHIDDEN_CASES];
    size_t n = sizeof tests / sizeof tests[0];
    memcpy(all, tests, sizeof tests);
#ifdef CRAWL_HIDDEN_DIR
    for (size_t i = 0; i < NHIDDEN_CASES; i++)
        all[n++] = hidden_cases[i];
#endif
    n = filter_cases(all, n);
    if (n == 0)
        return 2;
    return _cmocka_run_group_tests(name, all, n, NULL, NULL);
}
