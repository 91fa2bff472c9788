/* test_refusals.c — a crawl that is refused touches no file (issue #27, "Refusals touch
 * nothing"), each refusal one line on stderr:
 *
 *  - H3: a --state crawl run again without --resume, a --resume with other options and
 *    a second process naming the same --state/--output are refused, and the output is
 *    byte for byte what it was — records, summary line and all; the first process
 *    finishes with every record whole.
 *  - L6: two outputs that are one file (--warc /dev/stdout with the report on stdout;
 *    --warc X.db-wal beside --state X.db) are bad usage, exit 2, and nothing is created.
 *  - M7: --warc or --cdx naming a FIFO without a reader is refused at once, exit 1, as
 *    --output is (the crawl used to hang in open(), deaf to SIGTERM).
 *  - M1, L7, H3 c (a redis-server of the test's own): two --frontier crawls of one NAME
 *    with other roots; a password in the URL (AUTH), never shown; a --frontier process
 *    started again without --resume keeps the records it wrote.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "jsonl.h"
#include "redis_helper.h"
#include "testsite_helper.h"

#define PAGES 300

static testsite site;
static char dir[] = "/tmp/test_refusals.XXXXXX";

static char *crawl_queue(void)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/crawl-queue", BIN_DIR);
    return path;
}

static char *in_dir(const char *name)
{
    static char paths[8][300];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, sizeof paths[0], "%s/%s", dir, name);
    return p;
}

static int setup(void **state)
{
    (void)state;
    static char spec[64];
    snprintf(spec, sizeof spec, "pages=%d,links=4,size=300,seed=7", PAGES);
    /* 10 ms a response: with --max-tasks 2 a crawl takes about 1.5 s, long enough for
     * a second process to start beside it */
    const char *const args[] = {"--delay", "10", "--generate", spec, NULL};
    if (!mkdtemp(dir))
        return -1;
    return testsite_start(&site, args);
}

static int teardown(void **state)
{
    (void)state;
    testsite_stop(&site);
    return test_remove_tree(dir);
}

/* The whole file (NULL when absent), its length in *len. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    *len = 0;
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t cap = 0;
    char chunk[8192];
    size_t k;
    while ((k = fread(chunk, 1, sizeof chunk, f)) > 0) {
        buf = realloc(buf, cap = *len + k + 1);
        assert_non_null(buf);
        memcpy(buf + *len, chunk, k);
        *len += k;
    }
    fclose(f);
    if (!buf)
        buf = calloc(1, 1);
    buf[*len] = '\0';
    (void)cap;
    return buf;
}

static void assert_same_bytes(const char *path, const char *before, size_t before_len)
{
    size_t len;
    char *now = slurp(path, &len);
    assert_non_null(now);
    if (len != before_len || memcmp(now, before, len) != 0)
        fail_msg("%s changed: %zu bytes before, %zu now", path, before_len, len);
    free(now);
}

static void assert_one_line(const crawl_run *r, int code, const char *text)
{
    if (!crawl_run_one_line(r, code, text))
        fail_msg("want exit %d and one line with '%s': %s", code, text, crawl_run_describe(r));
}

/* Whole JSONL lines, each an object, no NUL byte; returns how many records (the
 * summary line not counted) and whether a summary ends it. */
static size_t whole_records(const char *path, bool *summary)
{
    size_t len;
    char *s = slurp(path, &len);
    assert_non_null(s);
    assert_int_equal(strlen(s), len); /* no NUL byte anywhere */
    size_t n = 0;
    *summary = false;
    for (char *line = s; *line;) {
        char *nl = strchr(line, '\n');
        assert_non_null(nl);
        char err[256];
        jobj *o = jobj_parse(line, (size_t)(nl - line), err, sizeof err);
        if (!o)
            fail_msg("%s: %s", path, err);
        *summary = jobj_obj(o, "summary") != NULL;
        n += !*summary;
        jobj_free(o);
        line = nl + 1;
    }
    free(s);
    return n;
}

/* crawl-queue --state db --format jsonl --output out [extra...] ROOT */
static void run_state(crawl_run *r, const char *db, const char *out, const char *extra1,
                      const char *extra2, const char *extra3)
{
    char *argv[] = {crawl_queue(),  "-q",           "--max-tasks", "2",
                    "--state",      (char *)db,     "--format",    "jsonl",
                    "--output",     (char *)out,    site.url,      (char *)extra1,
                    (char *)extra2, (char *)extra3, NULL};
    assert_int_equal(run_crawler(r, argv, 60), 0);
}

/* H3 d, a: run again with --resume and other options, or without --resume: refused,
 * and the output is what the finished crawl left, summary line included. */
static void test_rerun_refused_touches_nothing(void **state)
{
    (void)state;
    char *db = in_dir("a.db"), *out = in_dir("a.jsonl");
    crawl_run r;
    run_state(&r, db, out, NULL, NULL, NULL);
    if (r.exit_code != 0)
        fail_msg("%s", crawl_run_describe(&r));
    crawl_run_free(&r);
    size_t len;
    char *before = slurp(out, &len);
    bool summary;
    assert_int_equal(whole_records(out, &summary), PAGES);
    assert_true(summary);

    run_state(&r, db, out, "--resume", "--max-redirect", "3"); /* another crawl */
    assert_one_line(&r, 1, "is the crawl of other roots or options");
    crawl_run_free(&r);
    assert_same_bytes(out, before, len); /* its summary too */

    run_state(&r, db, out, NULL, NULL, NULL); /* no --resume */
    assert_one_line(&r, 1, "holds a crawl already");
    crawl_run_free(&r);
    assert_same_bytes(out, before, len);
    free(before);
}

/* H3 b: while a crawl runs, a second process with its --state and --output, and one
 * with its --output alone, are refused; the first one's file is never truncated and
 * ends with every record whole. */
typedef struct {
    const char *db, *out;
    int checked;
} second_ctx;

static void second_process(pid_t pid, void *arg)
{
    (void)pid;
    second_ctx *c = arg;
    struct stat before;
    assert_int_equal(stat(c->out, &before), 0);
    crawl_run r;
    run_state(&r, c->db, c->out, NULL, NULL, NULL);
    assert_one_line(&r, 1, "is in use by another crawl");
    crawl_run_free(&r);
    run_state(&r, c->db, c->out, "--resume", NULL, NULL);
    assert_one_line(&r, 1, "is in use by another crawl");
    crawl_run_free(&r);
    char *plain[] = {crawl_queue(), "-q", "--output", (char *)c->out, site.url, NULL};
    assert_int_equal(run_crawler(&r, plain, 30), 0);
    assert_one_line(&r, 1, "--output '");
    assert_non_null(strstr(r.err, "is in use by another crawl"));
    crawl_run_free(&r);
    struct stat after;
    assert_int_equal(stat(c->out, &after), 0);
    assert_true(after.st_size >= before.st_size); /* the first crawl only adds */
    c->checked = 1;
}

static void test_second_process_refused(void **state)
{
    (void)state;
    second_ctx c = {in_dir("b.db"), in_dir("b.jsonl"), 0};
    char *argv[] = {crawl_queue(), "-q",    "--max-tasks", "2",           "--state", (char *)c.db,
                    "--format",    "jsonl", "--output",    (char *)c.out, site.url,  NULL};
    crawl_run r;
    assert_int_equal(run_crawler_at(&r, argv, 60, 0.3, second_process, &c), 0);
    if (r.exit_code != 0)
        fail_msg("%s", crawl_run_describe(&r));
    crawl_run_free(&r);
    assert_int_equal(c.checked, 1); /* the second process ran while the first did */
    bool summary;
    assert_int_equal(whole_records(c.out, &summary), PAGES);
    assert_true(summary);
}

/* L6: two outputs that are one file — bad usage, exit 2, no file made. */
static void test_outputs_that_are_one_file(void **state)
{
    (void)state;
    crawl_run r;
    /* run_crawler's stdout is a pipe: /dev/stdout and /proc/self/fd/1 are that pipe */
    const char *stdouts[] = {"/dev/stdout", "/proc/self/fd/1"};
    for (size_t i = 0; i < 2; i++) {
        char *argv[] = {crawl_queue(),      "-q",     "--format", "jsonl", "--warc",
                        (char *)stdouts[i], site.url, NULL};
        assert_int_equal(run_crawler(&r, argv, 30), 0);
        assert_one_line(&r, 2, "is where the report goes (stdout)");
        assert_int_equal(r.out_len, 0);
        crawl_run_free(&r);
    }
    char *db = in_dir("x.db"), *wal = in_dir("x.db-wal"), *shm = in_dir("x.db-shm");
    char *out = in_dir("x.jsonl");
    char *state_wal[] = {crawl_queue(), "-q", "--format", "jsonl", "--output", out,
                         "--warc",      wal,  "--state",  db,      site.url,   NULL};
    assert_int_equal(run_crawler(&r, state_wal, 30), 0);
    assert_one_line(&r, 2, "are the same file: SQLite writes");
    crawl_run_free(&r);
    char *store_shm[] = {crawl_queue(), "-q",    "--store", db,       "--warc",
                         out,           "--cdx", shm,       site.url, NULL};
    assert_int_equal(run_crawler(&r, store_shm, 30), 0);
    assert_one_line(&r, 2, "are the same file: SQLite writes");
    crawl_run_free(&r);
    const char *made[] = {db, wal, shm, out};
    for (size_t i = 0; i < 4; i++)
        if (access(made[i], F_OK) == 0)
            fail_msg("%s was created by a refused crawl", made[i]);
}

/* M7: a FIFO without a reader as --warc or --cdx: refused at once, as --output is. */
static void test_fifo_without_reader(void **state)
{
    (void)state;
    char *fifo = in_dir("fifo"), *warc = in_dir("f.warc");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    char *as_warc[] = {crawl_queue(), "-q", "--warc", fifo, site.url, NULL};
    char *as_cdx[] = {crawl_queue(), "-q", "--warc", warc, "--cdx", fifo, site.url, NULL};
    char *const *runs[] = {as_warc, as_cdx};
    const char *flag[] = {"--warc", "--cdx"};
    for (size_t i = 0; i < 2; i++) {
        crawl_run r;
        assert_int_equal(run_crawler(&r, runs[i], 20), 0);
        if (r.timed_out)
            fail_msg("%s FIFO without a reader: still running after 20 s", flag[i]);
        char want[400];
        snprintf(want, sizeof want, "cannot open %s '%s': a FIFO with no reader", flag[i], fifo);
        assert_one_line(&r, 1, want);
        assert_int_equal(r.out_len, 0);
        crawl_run_free(&r);
    }
    assert_int_not_equal(access(warc, F_OK), 0); /* refused: not created */
}

/* ---- --frontier: Redis ------------------------------------------------------------ */

/* crawl-queue --frontier url --format jsonl --output out ROOT [extra...] */
static void run_frontier(crawl_run *r, const char *url, const char *out, const char *root,
                         const char *extra1, const char *extra2)
{
    char *argv[] = {crawl_queue(), "-q",           "--max-tasks",  "20",       "--frontier",
                    (char *)url,   "--format",     "jsonl",        "--output", (char *)out,
                    (char *)root,  (char *)extra1, (char *)extra2, NULL};
    assert_int_equal(run_crawler(r, argv, 60), 0);
}

static void assert_finished(const crawl_run *r, const char *out, size_t want)
{
    if (r->exit_code != 0)
        fail_msg("%s", crawl_run_describe(r));
    bool summary;
    assert_int_equal(whole_records(out, &summary), want);
    assert_true(summary);
}

/* M1: a second crawl of one NAME with other roots or options is refused, before it
 * puts anything in the crawl; with the same ones it joins. */
static void test_frontier_other_roots(void **state)
{
    (void)state;
    redis_server rs;
    assert_int_equal(redis_server_start(&rs, NULL), 0);
    char url[160], reply[256];
    redis_server_url(&rs, "m1", url, sizeof url);
    crawl_run r;
    char *a = in_dir("m1a.jsonl"), *b = in_dir("m1b.jsonl");
    run_frontier(&r, url, a, site.url, NULL, NULL);
    assert_finished(&r, a, PAGES);
    crawl_run_free(&r);

    run_frontier(&r, url, b, "http://127.0.0.1:1/", NULL, NULL); /* other roots */
    assert_one_line(&r, 1, "has other roots or options");
    crawl_run_free(&r);
    run_frontier(&r, url, b, site.url, "--max-redirect", "3"); /* other options */
    assert_one_line(&r, 1, "has other roots or options");
    crawl_run_free(&r);
    assert_int_not_equal(access(b, F_OK), 0); /* refused: no output made */
    assert_int_equal(redis_server_cmd(&rs, "SCARD crawl:m1:seen", reply, sizeof reply), 0);
    char want[32];
    snprintf(want, sizeof want, ":%d", PAGES);
    assert_string_equal(reply, want); /* nothing put by them */
    assert_int_equal(
        redis_server_cmd(&rs, "XINFO CONSUMERS crawl:m1:stream crawlers", reply, sizeof reply), 0);
    assert_string_equal(reply, "*1"); /* nor joined the group */

    run_frontier(&r, url, b, site.url, NULL, NULL); /* the same: it joins */
    assert_finished(&r, b, 0);                      /* the crawl is done */
    crawl_run_free(&r);
    redis_server_stop(&rs);
}

/* L7: redis://[USER:]PASSWORD@HOST:PORT/NAME (AUTH), the password never shown. */
static void test_frontier_password(void **state)
{
    (void)state;
    const char *const args[] = {"--requirepass", "s3cret-Pw", NULL};
    redis_server rs;
    assert_int_equal(redis_server_start(&rs, args), 0);
    char url[200];
    crawl_run r;
    char *out = in_dir("pw.jsonl");
    redis_server_url(&rs, "pw", url, sizeof url); /* redis://:s3cret-Pw@... */
    assert_non_null(strstr(url, ":s3cret-Pw@"));
    run_frontier(&r, url, out, site.url, NULL, NULL);
    assert_finished(&r, out, PAGES);
    assert_null(strstr(r.err, "s3cret"));
    crawl_run_free(&r);

    /* the ACL form, the default user */
    snprintf(url, sizeof url, "redis://default:s3cret-Pw@127.0.0.1:%d/pw2", rs.port);
    out = in_dir("pw2.jsonl");
    run_frontier(&r, url, out, site.url, NULL, NULL);
    assert_finished(&r, out, PAGES);
    crawl_run_free(&r);

    /* a wrong password, none, a malformed URL with a password: one line, never the
     * secret */
    const char *before[] = {"redis://:Not-The-Pw@", "redis://", "redis://crawler:Not-The-Pw@"};
    const char *after[] = {"/pw3", "/pw3", ""};
    const char *why[] = {"AUTH: WRONGPASS", "NOAUTH", "no crawl name"};
    const int code[] = {1, 1, 2};
    for (size_t i = 0; i < 3; i++) {
        snprintf(url, sizeof url, "%s127.0.0.1:%d%s", before[i], rs.port, after[i]);
        run_frontier(&r, url, in_dir("pw3.jsonl"), site.url, NULL, NULL);
        assert_one_line(&r, code[i], why[i]);
        if (strstr(r.err, "Not-The-Pw"))
            fail_msg("the password is in: %s", r.err);
        crawl_run_free(&r);
    }
    redis_server_stop(&rs);
}

/* H3 c: a --frontier process started again without --resume keeps what it wrote. */
static void test_frontier_restart_keeps_records(void **state)
{
    (void)state;
    redis_server rs;
    assert_int_equal(redis_server_start(&rs, NULL), 0);
    char url[160];
    redis_server_url(&rs, "h3c", url, sizeof url);
    char *out = in_dir("h3c.jsonl");
    crawl_run r;
    run_frontier(&r, url, out, site.url, NULL, NULL);
    assert_finished(&r, out, PAGES);
    crawl_run_free(&r);
    size_t len;
    char *before = slurp(out, &len);
    run_frontier(&r, url, out, site.url, NULL, NULL); /* no --resume */
    assert_one_line(&r, 1, "holds a crawl already");
    crawl_run_free(&r);
    assert_same_bytes(out, before, len);
    free(before);
    run_frontier(&r, url, out, site.url, "--resume", NULL); /* appends: nothing to do */
    assert_finished(&r, out, PAGES);
    crawl_run_free(&r);
    redis_server_stop(&rs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rerun_refused_touches_nothing),
        cmocka_unit_test(test_second_process_refused),
        cmocka_unit_test(test_outputs_that_are_one_file),
        cmocka_unit_test(test_fifo_without_reader),
        cmocka_unit_test(test_frontier_other_roots),
        cmocka_unit_test(test_frontier_password),
        cmocka_unit_test(test_frontier_restart_keeps_records),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
