/* test_frontier.c — crawl-queue --frontier redis://...: many processes, one crawl, each
 * test with a redis-server and a testsite of its own.
 *
 *  - 3 processes on a generated 5,000-page site: the union of their records is the
 *    single-process crawl's, no URL has two records, and the server (its request log)
 *    served every page once; each process's records name it (fetched_by).
 *  - kill -9 of one of 3 mid-crawl: the other two finish the crawl, nothing is missing,
 *    and a URL recorded twice is one the killed process recorded (written, not yet
 *    acknowledged) — at most its --max-tasks of them.
 *  - one of 3 with its --output on a full disk: it stops, acknowledging nothing it did
 *    not record; the other two finish the crawl, nothing is missing.
 *  - Redis unreachable at the start, and killed mid-crawl: one line, exit 1 (a malformed
 *    URL: exit 2).
 *  - Redis with its AOF killed under 2 processes and restarted: --resume finishes.
 *  - --per-host 2 --delay 0.03 across 3 processes, checked in the server's log.
 * The other cases test the Queue's mechanics: their processes run --per-host 0 (no cap
 * of 8 per host across the crawl, the default) and the single-process reference
 * --chapter, so that the one site is crawled as fast as before.
 *  - In process: the Redis Queue hands back each request whole (depth, referrer,
 *    callback), also after it waited in its host's line in Redis.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <cmocka.h>
#include <errno.h>

#include "jsonl.h"
#include "loopguard.h"
#include "redis_helper.h"
#include "redisqueue.h"
#include "request_check.h"
#include "task.h"
#include "smallfs.h"
#include "testsite_helper.h"

#define PAGES    5000
#define NPROC    3
#define LIMIT_MS 60000

typedef struct {
    redis_server rs;
    testsite site;
    char dir[256];
    char log[300];
} fx;

static long long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void nap_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

static int start(fx *f, const char *delay, const char *const redis_args[])
{
    snprintf(f->dir, sizeof f->dir, "%s/frontier-XXXXXX", BUILD_DIR);
    if (!mkdtemp(f->dir))
        return -1;
    snprintf(f->log, sizeof f->log, "%s/requests.log", f->dir);
    char spec[128];
    snprintf(spec, sizeof spec, "pages=%d,links=6,size=500,seed=11", PAGES);
    const char *const args[] = {"--delay", delay, "--log", f->log, "--generate", spec, NULL};
    if (testsite_start(&f->site, args) < 0)
        return -1;
    return redis_server_start(&f->rs, redis_args);
}

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    *state = f;
    return start(f, "0", NULL);
}

static int setup_slow(void **state)
{
    fx *f = calloc(1, sizeof *f);
    *state = f;
    return start(f, "20", NULL); /* 20 ms a page: a crawl of a few seconds */
}

/* The same with Redis's append-only file, each write on disk before its answer. */
static int setup_aof(void **state)
{
    fx *f = calloc(1, sizeof *f);
    *state = f;
    const char *const aof[] = {"--appendonly", "yes", "--appendfsync", "always", NULL};
    return start(f, "20", aof);
}

static int teardown(void **state)
{
    fx *f = *state;
    testsite_stop(&f->site);
    char disk[300]; /* left mounted by a test that failed */
    snprintf(disk, sizeof disk, "%s/disk", f->dir);
    smallfs_unmount(disk);
    redis_server_stop(&f->rs);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    int rc = system(cmd);
    free(f);
    return rc == 0 ? 0 : -1;
}

/* crawl-queue ARGS..., stdout/stderr into files; returns the pid. */
static pid_t spawn(char *const argv[], const char *out, const char *err)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int n = open("/dev/null", O_RDONLY);
        if (o < 0 || e < 0 || n < 0 || dup2(n, 0) < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
            _exit(127);
        execv(argv[0], argv);
        _exit(127);
    }
    assert_true(pid > 0);
    return pid;
}

/* Wait for pid until the deadline; kill it after. Returns its exit code, or -1 when
 * killed (by a signal, or at the deadline). */
static int reap(pid_t pid, long long deadline)
{
    int status;
    pid_t r;
    while ((r = waitpid(pid, &status, WNOHANG)) == 0 && now_ms() < deadline)
        nap_ms(10);
    if (r == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        fail_msg("crawl-queue %ld ran past the time limit", (long)pid);
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static char *slurp(const char *path)
{
    FILE *fp = fopen(path, "r");
    if (!fp)
        return strdup("");
    char *buf = NULL;
    size_t cap = 0, n = 0;
    char chunk[8192];
    size_t k;
    while ((k = fread(chunk, 1, sizeof chunk, fp)) > 0) {
        if (n + k + 1 > cap)
            buf = realloc(buf, cap = 2 * (n + k + 1));
        memcpy(buf + n, chunk, k);
        n += k;
    }
    fclose(fp);
    if (!buf)
        return strdup("");
    buf[n] = '\0';
    return buf;
}

static size_t count_lines(const char *path)
{
    char *s = slurp(path);
    size_t n = 0;
    for (char *p = s; *p; p++)
        n += *p == '\n';
    free(s);
    return n;
}

/* One record as the tests look at it. */
typedef struct {
    char *path; /* the URL's path: the same page on any port */
    char *fetched_by;
    int proc; /* which output file */
} rec;

typedef struct {
    rec *r;
    size_t n, cap;
    size_t summaries;
} recs;

static const char *path_of(const char *url)
{
    const char *p = strstr(url, "://");
    p = p ? strchr(p + 3, '/') : NULL;
    return p ? p : url;
}

/* The records of a JSONL file (whole lines; a torn last line of a killed process is
 * left out), appended to rs. */
static void read_records(recs *rs, const char *path, int proc)
{
    char *s = slurp(path);
    char *line = s;
    while (*line) {
        char *nl = strchr(line, '\n');
        if (!nl)
            break; /* torn */
        char err[256];
        jobj *o = jobj_parse(line, (size_t)(nl - line), err, sizeof err);
        if (!o)
            fail_msg("%s: %s: %.*s", path, err, (int)(nl - line), line);
        if (jobj_obj(o, "summary")) {
            rs->summaries++;
        } else {
            if (rs->n == rs->cap)
                rs->r = realloc(rs->r, (rs->cap = rs->cap ? 2 * rs->cap : 1024) * sizeof *rs->r);
            const char *url = jobj_str(o, "url"), *by = jobj_str(o, "fetched_by");
            assert_non_null(url);
            rs->r[rs->n].path = strdup(path_of(url));
            rs->r[rs->n].fetched_by = by ? strdup(by) : NULL;
            rs->r[rs->n].proc = proc;
            rs->n++;
        }
        jobj_free(o);
        line = nl + 1;
    }
    free(s);
}

static void recs_free(recs *rs)
{
    for (size_t i = 0; i < rs->n; i++) {
        free(rs->r[i].path);
        free(rs->r[i].fetched_by);
    }
    free(rs->r);
}

static int cmp_rec(const void *a, const void *b)
{
    const rec *x = a, *y = b;
    int c = strcmp(x->path, y->path);
    return c ? c : x->proc - y->proc;
}

static char *crawl_queue(void)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/crawl-queue", BIN_DIR);
    return path;
}

/* The single-process crawl of the site: its record paths, sorted. */
static void single_crawl(fx *f, recs *want)
{
    char out[400], err[400];
    snprintf(out, sizeof out, "%s/single.jsonl", f->dir);
    snprintf(err, sizeof err, "%s/single.err", f->dir);
    char *argv[] = {crawl_queue(), "-q", "--chapter", "--format", "jsonl",
                    "--output",    out,  f->site.url, NULL};
    pid_t pid = spawn(argv, "/dev/null", err);
    assert_int_equal(reap(pid, now_ms() + LIMIT_MS), 0);
    memset(want, 0, sizeof *want);
    read_records(want, out, 0);
    assert_int_equal(want->summaries, 1);
    qsort(want->r, want->n, sizeof *want->r, cmp_rec);
    assert_true(want->n >= PAGES);
    for (size_t i = 1; i < want->n; i++)
        assert_string_not_equal(want->r[i].path, want->r[i - 1].path);
    for (size_t i = 0; i < want->n; i++)
        assert_null(want->r[i].fetched_by); /* no --frontier: no field */
}

/* Start NPROC crawl-queue --frontier processes; their pids in pids. */
static void start_cluster(fx *f, const char *crawl, const char *max_tasks, pid_t *pids)
{
    char url[128];
    redis_server_url(&f->rs, crawl, url, sizeof url);
    for (int i = 0; i < NPROC; i++) {
        char out[400], err[400];
        snprintf(out, sizeof out, "%s/p%d.jsonl", f->dir, i);
        snprintf(err, sizeof err, "%s/p%d.err", f->dir, i);
        char *argv[] = {crawl_queue(),   "-q", "--max-tasks", (char *)max_tasks,
                        "--frontier",    url,  "--per-host",  "0",
                        "--claim-after", "1",  "--format",    "jsonl",
                        "--output",      out,  f->site.url,   NULL};
        pids[i] = spawn(argv, "/dev/null", err);
    }
}

/* Every path of want recorded in got, nothing else; returns got sorted. */
static void same_pages(recs *got, const recs *want)
{
    qsort(got->r, got->n, sizeof *got->r, cmp_rec);
    size_t distinct = 0;
    for (size_t i = 0; i < got->n; i++) {
        if (i > 0 && strcmp(got->r[i].path, got->r[i - 1].path) == 0)
            continue;
        if (distinct >= want->n || strcmp(got->r[i].path, want->r[distinct].path) != 0)
            fail_msg("%s: recorded by the cluster, %s by one process", got->r[i].path,
                     distinct < want->n ? "not" : "beyond the pages recorded");
        distinct++;
    }
    assert_int_equal(distinct, want->n);
}

/* scripts/merge-jsonl.sh on the processes' outputs: `done` URLs, `repeated` dropped,
 * sorted by url. */
static void check_merge(fx *f, size_t done, size_t repeated)
{
    char cmd[2048], merged[400];
    snprintf(merged, sizeof merged, "%s/merged.jsonl", f->dir);
    int n = snprintf(cmd, sizeof cmd, "bash %s/../../scripts/merge-jsonl.sh", SITES_DIR);
    for (int i = 0; i < NPROC; i++)
        n += snprintf(cmd + n, sizeof cmd - (size_t)n, " %s/p%d.jsonl", f->dir, i);
    snprintf(cmd + n, sizeof cmd - (size_t)n, " > %s", merged);
    assert_int_equal(system(cmd), 0);
    recs m = {0};
    read_records(&m, merged, 0);
    assert_int_equal(m.summaries, 1);
    assert_int_equal(m.n, done);
    for (size_t i = 1; i < m.n; i++) /* one site: sorted by path is by url */
        assert_true(strcmp(m.r[i - 1].path, m.r[i].path) < 0);
    recs_free(&m);
    char *text = slurp(merged), want[128];
    snprintf(want, sizeof want,
             "{\"summary\": {\"done\": %zu, \"files\": %d, \"repeated\": %zu}}\n", done, NPROC,
             repeated);
    size_t len = strlen(text);
    assert_true(len > strlen(want));
    assert_string_equal(text + len - strlen(want), want);
    free(text);
}

static void check_counter_zero(fx *f, const char *crawl)
{
    char cmd[128], reply[64];
    snprintf(cmd, sizeof cmd, "GET crawl:%s:unfinished", crawl);
    assert_int_equal(redis_server_cmd(&f->rs, cmd, reply, sizeof reply), 0);
    assert_string_equal(reply, "0");
    snprintf(cmd, sizeof cmd, "XLEN crawl:%s:stream", crawl);
    assert_int_equal(redis_server_cmd(&f->rs, cmd, reply, sizeof reply), 0);
    assert_string_equal(reply, ":0"); /* acknowledged entries are deleted */
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The server's request log: no page served twice, npages pages, robots.txt at most
 * once a process. */
static void served_once(fx *f, size_t npages)
{
    char *log = slurp(f->log);
    size_t nlines = 0, robots = 0;
    char **paths = NULL;
    for (char *line = strtok(log, "\n"); line; line = strtok(NULL, "\n")) {
        char host[256], path[1024], how[32];
        double b, e;
        if (sscanf(line, "%lf %lf %255s %1023s %31s", &b, &e, host, path, how) != 5)
            fail_msg("request log: %s", line);
        if (strcmp(path, "/robots.txt") == 0) {
            robots++;
            continue;
        }
        paths = realloc(paths, (nlines + 1) * sizeof *paths);
        paths[nlines++] = strdup(path);
    }
    free(log);
    assert_true(robots <= NPROC); /* one per process at most */
    qsort(paths, nlines, sizeof *paths, cmp_str);
    for (size_t i = 1; i < nlines; i++)
        if (strcmp(paths[i], paths[i - 1]) == 0)
            fail_msg("%s was fetched twice", paths[i]);
    assert_int_equal(nlines, npages);
    for (size_t i = 0; i < nlines; i++)
        free(paths[i]);
    free(paths);
}

static void test_three_processes_one_crawl(void **state)
{
    fx *f = *state;
    pid_t pids[NPROC];
    start_cluster(f, "three", "50", pids);
    long long deadline = now_ms() + LIMIT_MS;
    for (int i = 0; i < NPROC; i++)
        assert_int_equal(reap(pids[i], deadline), 0);
    recs got = {0}, want;
    char *names[NPROC] = {0};
    for (int i = 0; i < NPROC; i++) {
        char out[400];
        snprintf(out, sizeof out, "%s/p%d.jsonl", f->dir, i);
        size_t before = got.n, summaries = got.summaries;
        read_records(&got, out, i);
        assert_int_equal(got.summaries, summaries + 1);
        /* one name per process, in each of its records, HOST:PID */
        for (size_t k = before; k < got.n; k++) {
            assert_non_null(got.r[k].fetched_by);
            if (!names[i])
                names[i] = got.r[k].fetched_by;
            assert_string_equal(got.r[k].fetched_by, names[i]);
        }
        char pid[32];
        snprintf(pid, sizeof pid, ":%ld", (long)pids[i]);
        if (names[i])
            assert_non_null(strstr(names[i], pid));
    }
    served_once(f, got.n); /* before the single-process crawl adds to the log */
    single_crawl(f, &want);
    same_pages(&got, &want);
    assert_int_equal(got.n, want.n); /* no URL recorded twice */
    check_counter_zero(f, "three");
    check_merge(f, want.n, 0);
    recs_free(&got);
    recs_free(&want);
}

/* Politeness across processes: 3 processes with --per-host 2 --delay 0.04 on a site of
 * its own (100 pages, 50 ms each): at the server, never more than 2 requests at once
 * (and 2 at times: a cap, not a line), the starts spread at the delay's pace, every page
 * once, and the union is the whole site.
 *
 * The pace is checked on the span from the first start to the last, not on each gap:
 * the server sees a start when the request arrives, and on a loaded machine a process
 * can be descheduled between Redis admitting a request and sending it, so one gap may
 * look tens of ms shorter than the delay the processes kept. Over the span, that
 * jitter counts twice at most (the first start and the last): 99 gaps of 40 ms are
 * 3,960 ms, less 250 ms of slack. With --delay 0.001 the same crawl spread them over
 * 3,224 ms, so the check fails without the delay. The peak needs no slack: a lease is
 * taken before the request goes and dropped after its answer came, so the server
 * never sees more at once than the leases allow. */
static void test_politeness_across_processes(void **state)
{
    fx *f = *state;
    testsite polite;
    char log[400], url[128];
    snprintf(log, sizeof log, "%s/polite.log", f->dir);
    const char *const args[] = {
        "--delay", "50", "--log", log, "--generate", "pages=100,links=5,size=300,seed=3", NULL};
    assert_int_equal(testsite_start(&polite, args), 0);
    redis_server_url(&f->rs, "polite", url, sizeof url);
    pid_t pids[NPROC];
    for (int i = 0; i < NPROC; i++) {
        char out[400], err[400];
        snprintf(out, sizeof out, "%s/q%d.jsonl", f->dir, i);
        snprintf(err, sizeof err, "%s/q%d.err", f->dir, i);
        char *argv[] = {crawl_queue(),
                        "-q",
                        "--max-tasks",
                        "10",
                        "--frontier",
                        url,
                        "--per-host",
                        "2",
                        "--delay",
                        "0.04",
                        "--ignore-robots",
                        "--format",
                        "jsonl",
                        "--output",
                        out,
                        polite.url,
                        NULL};
        pids[i] = spawn(argv, "/dev/null", err);
    }
    long long deadline = now_ms() + LIMIT_MS;
    for (int i = 0; i < NPROC; i++)
        assert_int_equal(reap(pids[i], deadline), 0);
    testsite_stop(&polite);
    recs got = {0};
    for (int i = 0; i < NPROC; i++) {
        char out[400];
        snprintf(out, sizeof out, "%s/q%d.jsonl", f->dir, i);
        read_records(&got, out, i);
    }
    assert_int_equal(got.n, 100);

    char *text = slurp(log);
    double b[256], e[256];
    size_t n = 0;
    for (char *line = strtok(text, "\n"); line && n < 256; line = strtok(NULL, "\n")) {
        char host[256], path[1024], how[32];
        if (sscanf(line, "%lf %lf %255s %1023s %31s", &b[n], &e[n], host, path, how) == 5)
            n++;
    }
    free(text);
    assert_int_equal(n, 100);
    int peak = 0;
    double first = b[0], last = b[0];
    for (size_t i = 0; i < n; i++) {
        int at = 0;
        for (size_t j = 0; j < n; j++)
            at += b[j] <= b[i] && b[i] < e[j];
        peak = at > peak ? at : peak;
        first = b[i] < first ? b[i] : first;
        last = b[i] > last ? b[i] : last;
    }
    if (peak != 2)
        fail_msg("at most %d request(s) at once across 3 processes (--per-host 2)", peak);
    if (last - first < (double)(n - 1) * 40 - 250)
        fail_msg("%zu starts over %.0f ms across 3 processes (--delay 0.04: at least %.0f)", n,
                 last - first, (double)(n - 1) * 40 - 250);
    recs_free(&got);
}

static void test_kill_one_of_three(void **state)
{
    fx *f = *state;
    pid_t pids[NPROC];
    enum { VICTIM = 1 };
    start_cluster(f, "kill", "10", pids);
    /* Kill the victim once it has written a few hundred records: mid-crawl. */
    char vout[400];
    snprintf(vout, sizeof vout, "%s/p%d.jsonl", f->dir, VICTIM);
    long long deadline = now_ms() + LIMIT_MS;
    while (count_lines(vout) < 300 && now_ms() < deadline)
        nap_ms(20);
    assert_true(kill(pids[VICTIM], SIGKILL) == 0);
    assert_int_equal(reap(pids[VICTIM], deadline), -1);
    for (int i = 0; i < NPROC; i++)
        if (i != VICTIM)
            assert_int_equal(reap(pids[i], deadline), 0);
    recs got = {0}, want;
    for (int i = 0; i < NPROC; i++) {
        char out[400];
        snprintf(out, sizeof out, "%s/p%d.jsonl", f->dir, i);
        read_records(&got, out, i);
    }
    assert_int_equal(got.summaries, NPROC - 1); /* the victim wrote none */
    single_crawl(f, &want);
    same_pages(&got, &want); /* nothing missing, nothing else */
    /* Twice only where the victim wrote the record and died before its XACK. */
    size_t dup = 0;
    for (size_t i = 1; i < got.n; i++) {
        if (strcmp(got.r[i].path, got.r[i - 1].path) != 0)
            continue;
        dup++;
        if (got.r[i - 1].proc != VICTIM && got.r[i].proc != VICTIM)
            fail_msg("%s recorded twice, by two live processes", got.r[i].path);
        if (i > 1 && strcmp(got.r[i].path, got.r[i - 2].path) == 0)
            fail_msg("%s recorded three times", got.r[i].path);
    }
    assert_true(dup <= 10); /* the victim's --max-tasks */
    assert_int_equal(got.n, want.n + dup);
    check_counter_zero(f, "kill");
    check_merge(f, want.n, dup);
    recs_free(&got);
    recs_free(&want);
}

/* H2 (issue #27): one process's --output on a full disk (a tmpfs of the test's own;
 * skipped where mounting is not allowed). It stops at its first failed write without
 * acknowledging what it could not record (exit 1, one line naming the file); the others
 * take its entries over after --claim-after and finish the crawl: nothing is missing. */
static void test_full_disk_one_of_three(void **state)
{
    fx *f = *state;
    enum { VICTIM = 0 };
    char disk[300], cmd[600];
    snprintf(disk, sizeof disk, "%s/disk", f->dir);
    if (smallfs_mount(disk, 128 << 10) < 0) {
        print_message("cannot mount a tmpfs on %s (%s): skipped\n", disk, strerror(errno));
        skip();
    }
    snprintf(cmd, sizeof cmd, "head -c 40000 /dev/zero > '%s/filler'", disk);
    assert_int_equal(system(cmd), 0);
    char url[128];
    redis_server_url(&f->rs, "full", url, sizeof url);
    pid_t pids[NPROC];
    char outs[NPROC][400], errs[NPROC][400];
    for (int i = 0; i < NPROC; i++) {
        snprintf(outs[i], sizeof outs[i], "%s/p%d.jsonl", i == VICTIM ? disk : f->dir, i);
        snprintf(errs[i], sizeof errs[i], "%s/p%d.err", f->dir, i);
        char *argv[] = {crawl_queue(), "-q",    "--max-tasks",   "10", "--frontier", url,
                        "--per-host",  "0",     "--claim-after", "1",  "--format",   "jsonl",
                        "--output",    outs[i], f->site.url,     NULL};
        pids[i] = spawn(argv, "/dev/null", errs[i]);
    }
    long long deadline = now_ms() + LIMIT_MS;
    for (int i = 0; i < NPROC; i++) {
        int code = reap(pids[i], deadline);
        char *err = slurp(errs[i]);
        if (i == VICTIM
            && (code != 1 || !strstr(err, "No space left on device") || !strstr(err, outs[i])
                || strchr(err, '\n') != strrchr(err, '\n')))
            fail_msg("the process on the full disk: exit %d, stderr: %s", code, err);
        if (i != VICTIM && code != 0)
            fail_msg("process %d: exit %d, stderr: %s", i, code, err);
        free(err);
    }
    recs got = {0}, want;
    for (int i = 0; i < NPROC; i++)
        read_records(&got, outs[i], i);
    print_message("%zu whole records on the full disk\n", count_lines(outs[VICTIM]));
    single_crawl(f, &want);
    same_pages(&got, &want); /* nothing missing, nothing else */
    check_counter_zero(f, "full");
    recs_free(&got);
    recs_free(&want);
    smallfs_unmount(disk);
}

/* Nothing listens on the port: one line naming --frontier, exit 1, no report. */
static void test_redis_unreachable(void **state)
{
    fx *f = *state;
    char url[128];
    redis_server_url(&f->rs, "gone", url, sizeof url);
    redis_server_stop(&f->rs);
    char out[400], err[400];
    snprintf(out, sizeof out, "%s/out.jsonl", f->dir);
    snprintf(err, sizeof err, "%s/err", f->dir);
    char *argv[] = {crawl_queue(), "--frontier", url,         "--format", "jsonl",
                    "--output",    out,          f->site.url, NULL};
    assert_int_equal(reap(spawn(argv, "/dev/null", err), now_ms() + LIMIT_MS), 1);
    char *e = slurp(err);
    assert_non_null(strstr(e, "crawl-queue: --frontier: redis 127.0.0.1:"));
    assert_non_null(strstr(e, "refused"));
    assert_non_null(strchr(e, '\n'));
    assert_string_equal(strchr(e, '\n'), "\n"); /* one line */
    free(e);
    assert_int_equal(count_lines(out), 0);
    /* A bad URL after redis://: bad usage, one line too. */
    char *argv2[] = {crawl_queue(), "--frontier", "redis://127.0.0.1:1/bad name",
                     "--format",    "jsonl",      f->site.url,
                     NULL};
    assert_int_equal(reap(spawn(argv2, "/dev/null", err), now_ms() + LIMIT_MS), 2);
    e = slurp(err);
    assert_non_null(strstr(e,
                           "crawl-queue: --frontier 'redis://127.0.0.1:1/bad name': the "
                           "crawl name is"));
    free(e);
}

/* Redis (with its AOF) killed mid-crawl under 2 processes: each stops with one line and
 * exit 1; Redis restarted, the same two commands with --resume finish the crawl: nothing
 * missing, and repeated only what was in hand when Redis went (2 x --max-tasks). */
static void test_redis_restarted_resume(void **state)
{
    fx *f = *state;
    char url[128];
    redis_server_url(&f->rs, "aof", url, sizeof url);
    pid_t pids[2];
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 2; i++) {
            char out[400], err[400];
            snprintf(out, sizeof out, "%s/p%d.jsonl", f->dir, i);
            snprintf(err, sizeof err, "%s/p%d.%d.err", f->dir, i, round);
            char *argv[] = {crawl_queue(),
                            "-q",
                            "--max-tasks",
                            "10",
                            "--frontier",
                            url,
                            "--per-host",
                            "0",
                            "--claim-after",
                            "1",
                            "--format",
                            "jsonl",
                            "--output",
                            out,
                            f->site.url,
                            round ? "--resume" : NULL,
                            NULL};
            pids[i] = spawn(argv, "/dev/null", err);
        }
        long long deadline = now_ms() + LIMIT_MS;
        if (round == 0) {
            char p0[400], p1[400];
            snprintf(p0, sizeof p0, "%s/p0.jsonl", f->dir);
            snprintf(p1, sizeof p1, "%s/p1.jsonl", f->dir);
            while (count_lines(p0) + count_lines(p1) < 300 && now_ms() < deadline)
                nap_ms(20);
            redis_server_kill(&f->rs);
            for (int i = 0; i < 2; i++) {
                assert_int_equal(reap(pids[i], deadline), 1);
                char err[400];
                snprintf(err, sizeof err, "%s/p%d.0.err", f->dir, i);
                char *e = slurp(err);
                if (!strstr(e, "crawl-queue: --frontier: redis 127.0.0.1:"))
                    fail_msg("stderr: %s", e);
                free(e);
            }
            assert_int_equal(redis_server_restart(&f->rs), 0);
        } else {
            for (int i = 0; i < 2; i++)
                assert_int_equal(reap(pids[i], deadline), 0);
        }
    }
    recs got = {0}, want;
    for (int i = 0; i < 2; i++) {
        char out[400];
        snprintf(out, sizeof out, "%s/p%d.jsonl", f->dir, i);
        read_records(&got, out, i);
    }
    assert_int_equal(got.summaries, 2); /* --resume cut the first run's */
    single_crawl(f, &want);
    same_pages(&got, &want);
    assert_true(got.n - want.n <= 2 * 10);
    check_counter_zero(f, "aof");
    recs_free(&got);
    recs_free(&want);
}

/* Redis dies mid-crawl: the process stops with one line and exit 1; its records are
 * whole lines. */
static void test_redis_killed_mid_crawl(void **state)
{
    fx *f = *state;
    char url[128], out[400], err[400];
    redis_server_url(&f->rs, "lost", url, sizeof url);
    snprintf(out, sizeof out, "%s/out.jsonl", f->dir);
    snprintf(err, sizeof err, "%s/err", f->dir);
    char *argv[] = {crawl_queue(), "-q",         "--max-tasks", "10",       "--frontier",
                    url,           "--per-host", "0",           "--format", "jsonl",
                    "--output",    out,          f->site.url,   NULL};
    pid_t pid = spawn(argv, "/dev/null", err);
    long long deadline = now_ms() + LIMIT_MS;
    while (count_lines(out) < 100 && now_ms() < deadline)
        nap_ms(20);
    redis_server_kill(&f->rs);
    long long t0 = now_ms();
    assert_int_equal(reap(pid, deadline), 1);
    assert_true(now_ms() - t0 < 15000);
    char *e = slurp(err);
    char want[128];
    snprintf(want, sizeof want, "crawl-queue: --frontier: redis 127.0.0.1:%d: ", f->rs.port);
    if (!strstr(e, want))
        fail_msg("stderr: %s", e);
    free(e);
    recs got = {0};
    read_records(&got, out, 0);
    assert_true(got.n >= 100);
    assert_true(got.n < PAGES);
    recs_free(&got);
}

/* The next request of the Redis Queue, got in a Task on loop. */
static crawl_request *get_one(selector *loop, frontier *fr)
{
    task *t = task_new(loop, frontier_get(fr), "get");
    assert_int_equal(run_until_complete(loop, t), 0);
    assert_false(guarded_loop_hit());
    crawl_request *r = task_future(t)->result.p;
    task_free(t);
    return r;
}

static void stop_soon(selector *s, void *arg)
{
    (void)arg;
    selector_stop(s);
}

static void test_request_fields_survive(void **state)
{
    fx *f = *state;
    char url[128], err[256];
    redis_server_url(&f->rs, "fields", url, sizeof url);
    selector *loop = guarded_loop_new(20000);
    rqueue *q = rqueue_new(loop, url, "test fields\n", 60, "test:1", err, sizeof err);
    if (!q)
        fail_msg("%s", err);
    rqueue_politeness(q, 1, 0, false); /* one request at a time per host */
    frontier fr = rqueue_frontier(q);
    crawl_request deep = {"http://a.example/x", 3, 7, "http://a.example/?q=a b", "parse item"};
    crawl_request root = {"http://a.example/", 10, 0, NULL, NULL};
    frontier_put_nowait(&fr, &root);
    frontier_put_nowait(&fr, &deep);
    crawl_request *got = get_one(loop, &fr);
    assert_same_request(got, &root);

    /* The host is at its cap: the second entry waits in its line in Redis until the
     * first is done, then comes back into the stream, whole. */
    task *t = task_new(loop, frontier_get(&fr), "get");
    selector_call_later(loop, 300, stop_soon, NULL);
    selector_run(loop);
    assert_false(future_done(task_future(t)));
    frontier_task_done(&fr, got->url);
    free(got);
    assert_int_equal(run_until_complete(loop, t), 0);
    assert_false(guarded_loop_hit());
    got = task_future(t)->result.p;
    task_free(t);
    assert_same_request(got, &deep);
    frontier_task_done(&fr, got->url);
    free(got);
    /* join: the Redis Queue learns the crawl's end while a worker waits in get. */
    task *worker = task_new(loop, frontier_get(&fr), "worker");
    t = task_new(loop, frontier_join(&fr), "join");
    assert_int_equal(run_until_complete(loop, t), 0);
    assert_false(guarded_loop_hit());
    task_free(t);
    task_cancel(worker);
    task_free(worker);
    assert_null(frontier_error(&fr));
    frontier_free(&fr);
    guarded_loop_free(loop);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_three_processes_one_crawl, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kill_one_of_three, setup_slow, teardown),
        cmocka_unit_test_setup_teardown(test_full_disk_one_of_three, setup_slow, teardown),
        cmocka_unit_test_setup_teardown(test_politeness_across_processes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_redis_unreachable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_redis_killed_mid_crawl, setup_slow, teardown),
        cmocka_unit_test_setup_teardown(test_redis_restarted_resume, setup_aof, teardown),
        cmocka_unit_test_setup_teardown(test_request_fields_survive, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
