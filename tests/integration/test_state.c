/* test_state.c — --state / --resume (stage3_queue/pipelines/state.h): crawl-queue killed with
 * SIGKILL at random moments and resumed each time until it finishes: the union of the
 * runs' records holds every URL of one uninterrupted crawl, nothing else, and none twice
 * (test_resume_exact: every output, 20 kills); interrupted
 * twice with SIGINT: the union is exactly the uninterrupted crawl; a state file of
 * another crawl, or one reused without --resume, is one line and exit 1. */
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
#include <errno.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sqlite3.h>

#include "jsonl.h"
#include "signal_at.h"
#include "smallfs.h"
#include "state.h"
#include "testsite_helper.h"

static testsite site;
static char dir[] = "/tmp/test_state.XXXXXX";
enum { MAX_TASKS = 50 };
/* The default suite's size; TEST_STATE_PAGES=20000 TEST_STATE_KILLS=20 gives a long
 * run. */
static long pages = 1500, kills_max = 6;

static char *crawler(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", BIN_DIR, name);
    return path;
}

static int setup(void **state)
{
    (void)state;
    const char *p = getenv("TEST_STATE_PAGES"), *k = getenv("TEST_STATE_KILLS");
    if (p && atol(p) > 0)
        pages = atol(p);
    if (k && atol(k) > 0)
        kills_max = atol(k);
    static char spec[128];
    snprintf(spec, sizeof spec, "pages=%ld,links=6,size=1000,seed=5", pages);
    const char *const args[] = {"--delay", "20", "--generate", spec, NULL};
    if (!mkdtemp(dir))
        return -1;
    return testsite_start(&site, args);
}

static int teardown(void **state)
{
    (void)state;
    testsite_stop(&site);
    const char *const disks[] = {"disk", "warcdisk"};
    for (size_t i = 0; i < 2; i++) { /* left mounted by a test that failed */
        char path[300];
        snprintf(path, sizeof path, "%s/%s", dir, disks[i]);
        smallfs_unmount(path);
    }
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The URLs of the records in a JSONL file, sorted, one string each (duplicates kept);
 * every line whole (a resumed run cuts a torn one; torn_ok: a last line without its
 * newline is left out) and summary lines counted. */
static char **record_urls_of(const char *path, size_t *n, size_t *summaries, bool torn_ok)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char **urls = NULL, *line = NULL;
    size_t cap = 0, lcap = 0;
    *n = *summaries = 0;
    while (getline(&line, &lcap, f) > 0) {
        if (strncmp(line, "{\"summary\":", 11) == 0) {
            (*summaries)++;
            continue;
        }
        if (torn_ok && line[strlen(line) - 1] != '\n')
            break; /* the last line, torn */
        assert_true(strncmp(line, "{\"url\": \"", 9) == 0);
        char *end = strstr(line, "\", \"next_url\"");
        assert_non_null(end);
        assert_int_equal(line[strlen(line) - 1], '\n'); /* whole lines only */
        if (*n == cap)
            urls = realloc(urls, (cap = cap ? 2 * cap : 1024) * sizeof *urls);
        urls[(*n)++] = strndup(line + 9, (size_t)(end - line - 9));
    }
    free(line);
    fclose(f);
    qsort(urls, *n, sizeof *urls, cmp_str);
    return urls;
}

static char **record_urls(const char *path, size_t *n, size_t *summaries)
{
    return record_urls_of(path, n, summaries, false);
}

static void free_urls(char **u, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(u[i]);
    free(u);
}

/* The distinct URLs of got are exactly those of want (want has no duplicates); returns
 * how many records of got repeat a URL. */
static size_t compare_union(char **got, size_t ngot, char **want, size_t nwant)
{
    size_t dup = 0, distinct = 0;
    for (size_t i = 0; i < ngot; i++) {
        if (i > 0 && strcmp(got[i], got[i - 1]) == 0) {
            dup++;
            continue;
        }
        distinct++;
        if (!bsearch(&got[i], want, nwant, sizeof *want, cmp_str))
            fail_msg("%s was recorded but not by the uninterrupted crawl", got[i]);
    }
    assert_int_equal(distinct, nwant); /* nothing missing */
    return dup;
}

static void kill_9(pid_t pid, void *ctx)
{
    (void)ctx;
    kill(pid, SIGKILL);
}

/* crawl-queue --state db --output out [--resume] ROOT, stopped with at_fn(pid, NULL) at
 * `at` seconds, or as sa says (both NULL: to the end). The polite Queue (the default)
 * with --per-host 50: its cap is --max-tasks, so that the one site goes as fast as the
 * chapter's Queue crawled it (with the default 8, four times slower). */
static void run_with(crawl_run *r, const char *db, const char *out, bool resume, double at,
                     void (*at_fn)(pid_t, void *), signal_at *sa)
{
    char *argv[] = {crawler("crawl-queue"),
                    "-q",
                    "--max-tasks",
                    "50",
                    "--per-host",
                    "50",
                    "--state",
                    (char *)db,
                    "--format",
                    "jsonl",
                    "--output",
                    (char *)out,
                    site.url,
                    resume ? "--resume" : NULL,
                    NULL};
    int rc = sa ? run_crawler_signal_at(r, argv, 60, sa)
        : at_fn ? run_crawler_at(r, argv, 60, at, at_fn, NULL)
                : run_crawler(r, argv, 60);
    assert_int_equal(rc, 0);
}

/* The same, not by progress. */
static void run(crawl_run *r, const char *db, const char *out, bool resume, double at,
                void (*at_fn)(pid_t, void *))
{
    run_with(r, db, out, resume, at, at_fn, NULL);
}

/* The uninterrupted crawl's URLs, sorted. */
static char **reference(size_t *n)
{
    char db[300], out[300];
    snprintf(db, sizeof db, "%s/ref.db", dir);
    snprintf(out, sizeof out, "%s/ref.jsonl", dir);
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "rm -f '%s' '%s-wal' '%s-shm' '%s'", db, db, db, out);
    assert_int_equal(system(cmd), 0);
    crawl_run r;
    run(&r, db, out, false, 0, NULL);
    if (r.exit_code != 0)
        fail_msg("%s", crawl_run_describe(&r));
    crawl_run_free(&r);
    size_t summaries;
    char **u = record_urls(out, n, &summaries);
    assert_int_equal(*n, (size_t)pages);
    assert_int_equal(summaries, 1);
    return u;
}

/* A run stopped by SIGINT once --output holds `lines` lines (a resumed run: those of the
 * earlier runs with them), not at a moment: under load a moment may come before the
 * first page, or after the last. It exits 0, cut short: fewer records than the site has
 * pages (a signal that came late, or not at all, fails here). Returns the records of
 * --output, every run's. */
static size_t interrupted_run(const char *db, const char *out, bool resume, long lines)
{
    signal_at at = {.path = out, .lines = lines, .sig = SIGINT};
    crawl_run r;
    run_with(&r, db, out, resume, 0, NULL, &at);
    if (r.exit_code != 0)
        fail_msg("the interrupted run, %s: %s", signal_at_describe(&at), crawl_run_describe(&r));
    crawl_run_free(&r);
    size_t n, summaries;
    char **urls = record_urls(out, &n, &summaries);
    free_urls(urls, n);
    if (!at.sent || at.late || n >= (size_t)pages)
        fail_msg("the run was not cut short mid-crawl: %zu records of %ld pages, %s", n, pages,
                 signal_at_describe(&at));
    return n;
}

/* kill -9 at random moments (kills_max at the most), --resume each time, until a run
 * finishes (at most 2 * kills_max runs). A kill comes 0.1 to 0.5 s into a run. */
static void test_kill_9_and_resume(void **state)
{
    (void)state;
    size_t nref;
    char **ref = reference(&nref);
    char db[300], out[300];
    snprintf(db, sizeof db, "%s/k.db", dir);
    snprintf(out, sizeof out, "%s/k.jsonl", dir);
    srand((unsigned)time(NULL) ^ (unsigned)getpid());
    int kills = 0;
    bool finished = false;
    for (long i = 0; i < 2 * kills_max && !finished; i++) {
        crawl_run r;
        bool stop = i < kills_max; /* the kills, then run to the end */
        double at = 0.1 + (double)(rand() % 400) / 1000;
        run(&r, db, out, i > 0, at, stop ? kill_9 : NULL);
        if (r.term_signal == SIGKILL)
            kills++;
        else if (r.exit_code == 0) /* done before the kill came */
            finished = true;
        else
            fail_msg("run %ld: %s", i, crawl_run_describe(&r));
        crawl_run_free(&r);
    }
    assert_true(finished);
    assert_true(kills >= 1);
    size_t n, summaries;
    char **got = record_urls(out, &n, &summaries);
    assert_int_equal(summaries, 1); /* each resume cut the one before */
    size_t dup = compare_union(got, n, ref, nref);
    /* Nothing twice: each --resume cut the records the state had not committed (what
     * was recorded in the batches not yet written), and fetched their URLs again. */
    if (dup > 0)
        fail_msg("%zu records repeated after %d kills", dup, kills);
    print_message("%d kill(s) -9, %zu of %zu records repeated\n", kills, dup, n);
    free_urls(got, n);
    free_urls(ref, nref);
}

/* SIGINT twice, each once the run has written a fifth of the site's records, and a
 * third run to the end: every finished URL is committed at close, so the union is
 * exact. Each interrupted run is cut short, and the second took up where the first
 * stopped (more records, none twice: checked at the end). */
static void test_sigint_resumes_exactly(void **state)
{
    (void)state;
    size_t nref;
    char **ref = reference(&nref);
    char db[300], out[300];
    snprintf(db, sizeof db, "%s/i.db", dir);
    snprintf(out, sizeof out, "%s/i.jsonl", dir);
    size_t first = interrupted_run(db, out, false, pages / 5);
    size_t second = interrupted_run(db, out, true, (long)first + pages / 5);
    assert_true(second > first);
    crawl_run r;
    run(&r, db, out, true, 0, NULL);
    if (r.exit_code != 0)
        fail_msg("the last run: %s", crawl_run_describe(&r));
    crawl_run_free(&r);
    size_t n, summaries;
    char **got = record_urls(out, &n, &summaries);
    assert_int_equal(summaries, 1);
    assert_int_equal(compare_union(got, n, ref, nref), 0);
    free_urls(got, n);
    free_urls(ref, nref);
}

/* One integer that sql selects from the state file db. */
static long long query_int(const char *db, const char *sql)
{
    sqlite3 *h;
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(h));
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    long long v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(h);
    return v;
}

/* Whether the query plan of a lookup of pages by URL in db searches an index (the
 * again rows' count of their URL's records, state.c's requeue_again, is one per row:
 * without it a --resume scans pages once per again row). */
static bool pages_url_indexed(const char *db)
{
    sqlite3 *h;
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    const char *sql = "EXPLAIN QUERY PLAN SELECT count(*) FROM pages WHERE url = 'x'";
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(h));
    bool indexed = false, any = false;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *detail = (const char *)sqlite3_column_text(st, 3);
        any = true;
        if (detail && strstr(detail, "SEARCH") && strstr(detail, "INDEX"))
            indexed = true;
    }
    assert_true(any);
    sqlite3_finalize(st);
    sqlite3_close(h);
    return indexed;
}

/* Interrupted once, then resumed to the end: every URL of the frontier table has the
 * depth and referrer it was scheduled with — the root depth 0 and no referrer, every
 * other URL one deeper than its referrer, which is a URL of the crawl. The URLs the
 * resumed run found on pages it took back from the file prove that the file's depths
 * went back into the Queue (a page put back at depth 0 would give its new links
 * depth 1). So the first run is interrupted early, at a tenth of the site's records
 * (then about half its URLs are known), and must have left URLs undiscovered. */
static void test_requests_survive_resume(void **state)
{
    (void)state;
    char db[300], out[300];
    snprintf(db, sizeof db, "%s/q.db", dir);
    snprintf(out, sizeof out, "%s/q.jsonl", dir);
    interrupted_run(db, out, false, pages / 10);
    long long found = query_int(db, "SELECT count(*) FROM frontier");
    if (found >= pages)
        fail_msg("the first run found all %lld URLs: the resumed run finds none", found);
    crawl_run r;
    run(&r, db, out, true, 0, NULL);
    if (r.exit_code != 0)
        fail_msg("the resumed run: %s", crawl_run_describe(&r));
    crawl_run_free(&r);
    assert_int_equal(query_int(db, "SELECT count(*) FROM frontier"), pages);
    assert_int_equal(query_int(db, "SELECT count(*) FROM frontier WHERE referrer IS NULL"), 1);
    assert_int_equal(query_int(db, "SELECT depth FROM frontier WHERE referrer IS NULL"), 0);
    assert_int_equal(query_int(db,
                               "SELECT count(*) FROM frontier c LEFT JOIN frontier p"
                               " ON c.referrer = p.url WHERE c.referrer IS NOT NULL AND"
                               " (p.url IS NULL OR c.depth != p.depth + 1)"),
                     0);
    assert_true(query_int(db, "SELECT max(depth) FROM frontier") >= 2);
    assert_int_equal(query_int(db, "SELECT count(*) FROM frontier WHERE callback IS NOT NULL"), 0);
    if (!pages_url_indexed(db))
        fail_msg("--state's pages has no index on url");
}

/* A state file of an older crawl-queue (frontier without depth, referrer, callback,
 * pages without an index on url), of a crawl interrupted a fifth of the way: --resume
 * upgrades it and finishes the crawl. */
static void test_old_state_file_upgraded(void **state)
{
    (void)state;
    char db[300], out[300];
    snprintf(db, sizeof db, "%s/o.db", dir);
    snprintf(out, sizeof out, "%s/o.jsonl", dir);
    interrupted_run(db, out, false, pages / 5);
    sqlite3 *h;
    assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
    char *e = NULL;
    if (sqlite3_exec(h,
                     "CREATE TABLE old (url TEXT PRIMARY KEY, max_redirect INTEGER NOT NULL)"
                     " WITHOUT ROWID; INSERT INTO old SELECT url, max_redirect FROM frontier;"
                     " DROP TABLE frontier; ALTER TABLE old RENAME TO frontier;"
                     " DROP INDEX IF EXISTS pages_url;",
                     NULL, NULL, &e)
        != SQLITE_OK)
        fail_msg("making an old state file: %s", e);
    sqlite3_close(h);
    assert_false(pages_url_indexed(db));
    crawl_run r;
    run(&r, db, out, true, 0, NULL);
    if (r.exit_code != 0)
        fail_msg("resume of an old file: %s", crawl_run_describe(&r));
    crawl_run_free(&r);
    size_t n, summaries;
    char **got = record_urls(out, &n, &summaries);
    size_t distinct = 0;
    for (size_t i = 0; i < n; i++)
        distinct += i == 0 || strcmp(got[i], got[i - 1]) != 0;
    assert_int_equal(distinct, (size_t)pages);
    assert_int_equal(query_int(db, "SELECT count(*) FROM frontier"), pages);
    if (!pages_url_indexed(db))
        fail_msg("--resume did not add the index on pages (url) to an older state file");
    free_urls(got, n);
}

/* A state file from before output_end (pages without the column) whose --output holds
 * a record the state never committed (its row gone, as a kill -9 leaves one) and a
 * record written twice (as an older crawl-queue's --resume wrote them): --resume reads
 * --output back, gives each row where its record ends, cuts the rest (one warning) and
 * finishes the crawl with every page once. The first run is interrupted once --output
 * holds 100 records, not at a moment: under load a moment may come before the first
 * page, or after the last. */
static void test_old_state_file_cut(void **state)
{
    (void)state;
    char db[300], out[300];
    snprintf(db, sizeof db, "%s/oc.db", dir);
    snprintf(out, sizeof out, "%s/oc.jsonl", dir);
    size_t written = interrupted_run(db, out, false, 100);
    /* SIGINT commits every record written */
    assert_int_equal(query_int(db, "SELECT count(*) FROM pages"), written);
    sqlite3 *h;
    assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
    char *e = NULL;
    if (sqlite3_exec(h,
                     "DELETE FROM pages WHERE id = (SELECT max(id) FROM pages);"
                     " ALTER TABLE pages DROP COLUMN output_end;",
                     NULL, NULL, &e)
        != SQLITE_OK)
        fail_msg("making an old state file: %s", e);
    sqlite3_close(h);
    FILE *f = fopen(out, "r+");
    assert_non_null(f);
    char first[4096];
    assert_non_null(fgets(first, sizeof first, f));
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    assert_true(fputs(first, f) >= 0); /* after the summary line, as a run after it would */
    assert_int_equal(fclose(f), 0);

    crawl_run r;
    run(&r, db, out, true, 0, NULL);
    if (r.exit_code != 0)
        fail_msg("resume of an old file: %s", crawl_run_describe(&r));
    crawl_run_free(&r);
    size_t n, summaries;
    char **got = record_urls(out, &n, &summaries);
    for (size_t i = 1; i < n; i++)
        if (strcmp(got[i], got[i - 1]) == 0)
            fail_msg("--output holds %s twice", got[i]);
    assert_int_equal(n, (size_t)pages);
    assert_int_equal(summaries, 1);
    assert_int_equal(query_int(db, "SELECT count(*) FROM pages WHERE output_end IS NULL"), 0);
    free_urls(got, n);
}

static void assert_one_line(const crawl_run *r, int code, const char *text)
{
    if (r->exit_code != code || !strstr(r->err, text))
        fail_msg("want exit %d and '%s': %s", code, text, crawl_run_describe(r));
    int lines = 0;
    for (size_t i = 0; i < r->err_len; i++)
        lines += r->err[i] == '\n';
    assert_int_equal(lines, 1);
}

static void test_refusals(void **state)
{
    (void)state;
    char db[300], out[300];
    snprintf(db, sizeof db, "%s/r.db", dir);
    snprintf(out, sizeof out, "%s/r.jsonl", dir);
    interrupted_run(db, out, false, 100); /* a crawl to go on with */
    crawl_run r;
    /* the same state, no --resume, and a new --output (a used one is refused first, in
     * the same words) */
    char fresh[300], refused[400];
    snprintf(fresh, sizeof fresh, "%s/r-new.jsonl", dir);
    run(&r, db, fresh, false, 0, NULL);
    snprintf(refused, sizeof refused, "--state '%s': holds a crawl already", db);
    assert_one_line(&r, 1, refused);
    crawl_run_free(&r);
    char *other[] = {crawler("crawl-queue"),
                     "--state",
                     db,
                     "--resume",
                     "--format",
                     "jsonl",
                     "--output",
                     out,
                     "--max-redirect",
                     "3",
                     site.url,
                     NULL};
    assert_int_equal(run_crawler(&r, other, 30), 0);
    assert_one_line(&r, 1, "other roots or options");
    crawl_run_free(&r);
    char *no_state[] = {crawler("crawl-queue"), "--resume", site.url, NULL};
    assert_int_equal(run_crawler(&r, no_state, 30), 0);
    assert_one_line(&r, 2, "--resume goes on with the crawl of a --state file");
    crawl_run_free(&r);
    char *text[] = {crawler("crawl-queue"), "--state", db, site.url, NULL};
    assert_int_equal(run_crawler(&r, text, 30), 0);
    assert_one_line(&r, 2, "needs --format jsonl --output FILE");
    crawl_run_free(&r);
    char *stage2[] = {crawler("crawl-generators"), "--state", db, site.url, NULL};
    assert_int_equal(run_crawler(&r, stage2, 30), 0);
    assert_one_line(&r, 2,
                    "unknown option '--state' (see --help); this is the chapter's "
                    "stage 2: the engine's flags");
    crawl_run_free(&r);
}

/* ---- --resume without the state of its outputs ---- */

/* The whole file (NULL: none), its size in *len. */
static char *file_bytes(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    *len = 0;
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t cap = 0;
    for (;;) {
        if (*len == cap)
            buf = realloc(buf, cap = cap ? 2 * cap : 65536);
        size_t got = fread(buf + *len, 1, cap - *len, f);
        if (got == 0)
            break;
        *len += got;
    }
    fclose(f);
    return buf;
}

typedef struct snapshot {
    char *bytes[4];
    size_t len[4];
} snapshot;

static void take(snapshot *sn, char *const *paths)
{
    for (int i = 0; i < 4; i++)
        sn->bytes[i] = file_bytes(paths[i], &sn->len[i]);
}

/* Every file byte for byte as it was, and a file that was not there still not there. */
static void assert_unchanged(const snapshot *sn, char *const *paths, const char *when)
{
    for (int i = 0; i < 4; i++) {
        size_t len;
        char *now = file_bytes(paths[i], &len);
        if (!sn->bytes[i] != !now || len != sn->len[i] || (now && memcmp(now, sn->bytes[i], len)))
            fail_msg("%s: '%s' changed (%zu bytes, was %zu%s)", when, paths[i], len, sn->len[i],
                     sn->bytes[i] ? "" : ", absent");
        free(now);
    }
}

static void drop(snapshot *sn)
{
    for (int i = 0; i < 4; i++)
        free(sn->bytes[i]);
}

static void rm_state(const char *db)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -f '%s' '%s-wal' '%s-shm'", db, db, db);
    assert_int_equal(system(cmd), 0);
}

/* #34: --resume when --state was deleted, or is 0 bytes, while an output holds the
 * records of a crawl: one line, exit 1, every file as it was (the state still absent
 * when it was). A state that holds a run of this crawl goes on even with none of its
 * rows committed (a first run killed before its first batch), and so does a --resume
 * with no state and empty outputs. */
static void test_resume_without_state(void **state)
{
    (void)state;
    char db[300], out[300], warc[300], items[300];
    snprintf(db, sizeof db, "%s/nostate.db", dir);
    snprintf(out, sizeof out, "%s/nostate.jsonl", dir);
    snprintf(warc, sizeof warc, "%s/nostate.warc", dir);
    snprintf(items, sizeof items, "%s/nostate-items.jsonl", dir);
    char *paths[4] = {db, out, warc, items};
    char *argv[] = {crawler("crawl-queue"),
                    "-q",
                    "--max-tasks",
                    "50",
                    "--per-host",
                    "50",
                    "--state",
                    db,
                    "--format",
                    "jsonl",
                    "--output",
                    out,
                    "--warc",
                    warc,
                    "--extract",
                    "t=//title",
                    "--items",
                    items,
                    site.url,
                    NULL, /* --resume */
                    NULL};
    const size_t at_resume = sizeof argv / sizeof argv[0] - 2;
    crawl_run r;
    assert_int_equal(run_crawler(&r, argv, 60), 0);
    if (r.exit_code != 0)
        fail_msg("%s", crawl_run_describe(&r));
    crawl_run_free(&r);
    argv[at_resume] = "--resume";
    size_t len;
    free(file_bytes(items, &len));
    assert_true(len > 0);         /* the spider's items, there to be kept */
    FILE *f = fopen(items, "ab"); /* and a torn last line, which a resume would cut */
    assert_non_null(f);
    fputs("{\"t\": \"torn", f);
    assert_int_equal(fclose(f), 0);

    /* Deleted, then 0 bytes, with --output (and the rest) full; then --output gone and
     * --warc full; then only --items full. */
    const struct {
        bool empty_state; /* else absent */
        const char *gone; /* removed before the run */
        const char *names;
    } cases[] = {{false, NULL, "--output"},
                 {true, NULL, "--output"},
                 {false, out, "--warc"},
                 {true, warc, "--items"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rm_state(db);
        if (cases[i].empty_state) {
            f = fopen(db, "wb");
            assert_non_null(f);
            assert_int_equal(fclose(f), 0);
        }
        if (cases[i].gone)
            assert_int_equal(unlink(cases[i].gone), 0);
        snapshot sn;
        take(&sn, paths);
        assert_int_equal(run_crawler(&r, argv, 60), 0);
        char want[400];
        snprintf(want, sizeof want, "yet %s '", cases[i].names);
        assert_one_line(&r, 1, want);
        assert_true(strstr(r.err, "holds no crawl") != NULL);
        crawl_run_free(&r);
        char when[64];
        snprintf(when, sizeof when, "case %zu", i);
        assert_unchanged(&sn, paths, when);
        drop(&sn);
    }

    /* No state and nothing in any output: the crawl starts (a first run killed before
     * it made its state goes on), and ends. */
    rm_state(db);
    assert_int_equal(unlink(items), 0);
    assert_int_equal(run_crawler(&r, argv, 60), 0);
    if (r.exit_code != 0)
        fail_msg("no state, no outputs: %s", crawl_run_describe(&r));
    crawl_run_free(&r);
    size_t n, summaries;
    char **got = record_urls(out, &n, &summaries);
    assert_int_equal(n, (size_t)pages);
    free_urls(got, n);

    /* A state with its run but none of its rows (killed before its first batch), and
     * --output full: that run's records; it goes on. (--items full there is refused
     * by --items itself, items.h: not this case.) */
    assert_int_equal(unlink(items), 0);
    sqlite3 *h;
    assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "DELETE FROM frontier; DELETE FROM pages; DELETE FROM items",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(h);
    assert_int_equal(run_crawler(&r, argv, 60), 0);
    if (r.exit_code != 0)
        fail_msg("a state with its run only: %s", crawl_run_describe(&r));
    crawl_run_free(&r);
}

/* ---- a URL is done only when its record is written ---- */

/* The URLs of the state's pages table. */
static char **state_pages(const char *db, size_t *n)
{
    sqlite3 *h;
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(h, "SELECT url FROM pages", -1, &st, NULL), SQLITE_OK);
    char **urls = NULL;
    size_t cap = 0;
    *n = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (*n == cap)
            urls = realloc(urls, (cap = cap ? 2 * cap : 1024) * sizeof *urls);
        urls[(*n)++] = strdup((const char *)sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
    sqlite3_close(h);
    return urls;
}

/* A tmpfs of `bytes` at dir/name, or skip the test where mounting is not allowed. */
static bool small_disk(char *path, size_t len, const char *name, size_t bytes)
{
    snprintf(path, len, "%s/%s", dir, name);
    if (smallfs_mount(path, bytes) == 0)
        return true;
    print_message("cannot mount a tmpfs on %s (%s): the full-disk test is skipped\n", path,
                  strerror(errno));
    return false;
}

/* Fill a small disk: the output takes it and more. */
static void fill(const char *disk)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "head -c 40000 /dev/zero > '%s/filler'", disk);
    assert_int_equal(system(cmd), 0);
}

/* H1: --output on a full disk. The crawl stops at the first failed write (exit 1, one
 * line naming the file and the error); the state counts done only what --output holds;
 * with room again, --resume finishes the crawl and nothing is missing. */
static void test_full_disk_then_resume(void **state)
{
    (void)state;
    char disk[300], db[300], out[400];
    if (!small_disk(disk, sizeof disk, "disk", 128 << 10))
        skip();
    fill(disk);
    size_t nref;
    char **ref = reference(&nref);
    snprintf(db, sizeof db, "%s/full.db", dir);
    snprintf(out, sizeof out, "%s/full.jsonl", disk);
    crawl_run r;
    run(&r, db, out, false, 0, NULL);
    if (r.exit_code != 1 || !strstr(r.err, "No space left on device") || !strstr(r.err, out))
        fail_msg("want exit 1 and the full disk named: %s", crawl_run_describe(&r));
    int lines = 0;
    for (size_t i = 0; i < r.err_len; i++)
        lines += r.err[i] == '\n';
    assert_int_equal(lines, 1);
    crawl_run_free(&r);

    size_t nout, summaries, ndone;
    char **written = record_urls_of(out, &nout, &summaries, true);
    char **done = state_pages(db, &ndone);
    assert_true(nout < (size_t)pages);
    print_message("%zu records on the full disk, %zu pages done in the state\n", nout, ndone);
    for (size_t i = 0; i < ndone; i++)
        if (!bsearch(&done[i], written, nout, sizeof *written, cmp_str))
            fail_msg("the state counts %s done; --output has no record of it", done[i]);
    free_urls(done, ndone);
    free_urls(written, nout);

    assert_int_equal(smallfs_resize(disk, 8 << 20), 0);
    run(&r, db, out, true, 0, NULL);
    if (r.exit_code != 0)
        fail_msg("resume: %s", crawl_run_describe(&r));
    crawl_run_free(&r);
    size_t n;
    char **got = record_urls(out, &n, &summaries);
    assert_int_equal(summaries, 1);
    compare_union(got, n, ref, nref); /* nothing missing */
    free_urls(got, n);
    free_urls(ref, nref);
    smallfs_unmount(disk);
}

/* L5: a pipeline stage that fails (--warc on a full disk) stops the crawl, exit 1, and
 * the summary, which can be written, says the crawl did not complete, and why. */
static void test_failed_stage_summary(void **state)
{
    (void)state;
    char disk[300], warc[400], out[300];
    if (!small_disk(disk, sizeof disk, "warcdisk", 128 << 10))
        skip();
    fill(disk);
    snprintf(warc, sizeof warc, "%s/crawl.warc", disk);
    snprintf(out, sizeof out, "%s/warc.jsonl", dir);
    char *argv[] = {crawler("crawl-queue"),
                    "-q",
                    "--warc",
                    warc,
                    "--format",
                    "jsonl",
                    "--output",
                    out,
                    site.url,
                    NULL};
    crawl_run r;
    assert_int_equal(run_crawler(&r, argv, 60), 0);
    if (r.exit_code != 1 || !strstr(r.err, "No space left on device"))
        fail_msg("want exit 1 and the full disk named: %s", crawl_run_describe(&r));
    crawl_run_free(&r);
    FILE *f = fopen(out, "r");
    assert_non_null(f);
    char *line = NULL, *last = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        free(last);
        last = strdup(line);
    }
    free(line);
    fclose(f);
    assert_non_null(last);
    char perr[200];
    jobj *o = jobj_parse(last, strlen(last), perr, sizeof perr);
    assert_non_null(o);
    const jv *sum = jobj_get(o, "summary");
    assert_non_null(sum);
    assert_int_equal(sum->type, JV_OBJ);
    const jv *interrupted = jobj_get(sum->obj, "interrupted");
    assert_non_null(interrupted);
    if (!interrupted->b)
        fail_msg("the summary of a failed crawl: %s", last);
    const char *error = jobj_str(sum->obj, "error");
    if (!error || !strstr(error, "warc") || !strstr(error, "No space left on device"))
        fail_msg("the summary names no error: %s", last);
    jobj_free(o);
    free(last);
    smallfs_unmount(disk);
}

/* M8: --output cut in half, then deleted, after a finished crawl: --resume fetches
 * again what the output lacks (one warning), and the union is the whole crawl. */
static void test_resume_output_cut(void **state)
{
    (void)state;
    size_t nref;
    char **ref = reference(&nref);
    char db[300], out[300];
    snprintf(db, sizeof db, "%s/cut.db", dir);
    snprintf(out, sizeof out, "%s/cut.jsonl", dir);
    crawl_run r;
    run(&r, db, out, false, 0, NULL);
    assert_int_equal(r.exit_code, 0);
    crawl_run_free(&r);
    for (int round = 0; round < 2; round++) {
        struct stat sb;
        assert_int_equal(stat(out, &sb), 0);
        if (round == 0)
            assert_int_equal(truncate(out, sb.st_size / 2), 0); /* mid-line, likely */
        else
            assert_int_equal(unlink(out), 0);
        char *argv[] = {crawler("crawl-queue"),
                        "--max-tasks",
                        "50",
                        "--per-host",
                        "50",
                        "--state",
                        db,
                        "--resume",
                        "--format",
                        "jsonl",
                        "--output",
                        out,
                        site.url,
                        NULL};
        assert_int_equal(run_crawler(&r, argv, 60), 0);
        if (r.exit_code != 0 || !strstr(r.err, "record(s) that --state")
            || !strstr(r.err, "counted done: fetching them again"))
            fail_msg("round %d: %s", round, crawl_run_describe(&r));
        crawl_run_free(&r);
        size_t n, summaries;
        char **got = record_urls(out, &n, &summaries);
        assert_int_equal(summaries, 1);
        compare_union(got, n, ref, nref);
        free_urls(got, n);
    }
    free_urls(ref, nref);
}

/* M2: a damaged state file is one line and exit 1 at --resume, never a crash or a
 * partial resume: a page of random bytes (at several places), the file cut in half, a
 * pages row without a URL. Each on a copy of one finished crawl's state. */
typedef void damage_fn(const char *db, long arg);

static void damaged(const char *name, damage_fn *damage, const long *args, size_t nargs)
{
    char base[200], out[200];
    snprintf(base, sizeof base, "%.150s/%.20s.db", dir, name);
    snprintf(out, sizeof out, "%.150s/%.20s.jsonl", dir, name);
    crawl_run r;
    run(&r, base, out, false, 0, NULL); /* whole: every table has its rows */
    assert_int_equal(r.exit_code, 0);
    crawl_run_free(&r);
    for (size_t i = 0; i < nargs; i++) {
        char db[200], copy[200], cmd[1024];
        snprintf(db, sizeof db, "%.150s/%.20s-%zu.db", dir, name, i);
        snprintf(copy, sizeof copy, "%.150s/%.20s-%zu.jsonl", dir, name, i);
        snprintf(cmd, sizeof cmd, "cp '%s' '%s' && cp '%s' '%s'", base, db, out, copy);
        assert_int_equal(system(cmd), 0);
        damage(db, args[i]);
        run(&r, db, copy, true, 0, NULL);
        assert_one_line(&r, 1, db);
        crawl_run_free(&r);
    }
}

/* The page at `sixths` sixths of the file (the last page for 6), 4 KiB of random bytes. */
static void garble(const char *db, long sixths)
{
    struct stat sb;
    assert_int_equal(stat(db, &sb), 0);
    off_t pages4k = sb.st_size / 4096, page = pages4k * sixths / 6;
    if (page >= pages4k)
        page = pages4k - 1;
    FILE *f = fopen(db, "r+b");
    assert_non_null(f);
    assert_int_equal(fseeko(f, page * 4096, SEEK_SET), 0);
    unsigned seed = (unsigned)sixths;
    for (int i = 0; i < 4096; i++)
        fputc(rand_r(&seed) & 0xff, f);
    assert_int_equal(fclose(f), 0);
}

static void cut_half(const char *db, long unused)
{
    (void)unused;
    struct stat sb;
    assert_int_equal(stat(db, &sb), 0);
    assert_int_equal(truncate(db, sb.st_size / 2), 0);
}

/* pages.url loses its NOT NULL (the schema rewritten), and a row without one. */
static void null_url(const char *db, long unused)
{
    (void)unused;
    sqlite3 *h;
    assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h,
                                  "PRAGMA writable_schema=ON;"
                                  "UPDATE sqlite_master SET sql = replace(sql, "
                                  "'url TEXT NOT NULL', 'url TEXT') WHERE name = 'pages';",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(h);
    assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h,
                                  "INSERT INTO pages (url, size, num_urls, num_new_urls,"
                                  " fetched_at) VALUES (NULL, 0, 0, 0, 'x')",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(h);
}

static void test_damaged_garbled(void **state)
{
    (void)state;
    const long sixths[] = {2, 3, 4, 5, 6};
    damaged("garbled", garble, sixths, 5);
}

static void test_damaged_cut_half(void **state)
{
    (void)state;
    const long none[] = {0};
    damaged("half", cut_half, none, 1);
}

static void test_damaged_null_url(void **state)
{
    (void)state;
    const long none[] = {0};
    damaged("nullurl", null_url, none, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kill_9_and_resume),
        cmocka_unit_test(test_sigint_resumes_exactly),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_resume_without_state),
        cmocka_unit_test(test_full_disk_then_resume),
        cmocka_unit_test(test_failed_stage_summary),
        cmocka_unit_test(test_resume_output_cut),
        cmocka_unit_test(test_damaged_garbled),
        cmocka_unit_test(test_damaged_cut_half),
        cmocka_unit_test(test_damaged_null_url),
        cmocka_unit_test(test_requests_survive_resume),
        cmocka_unit_test(test_old_state_file_upgraded),
        cmocka_unit_test(test_old_state_file_cut),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
