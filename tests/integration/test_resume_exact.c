/* test_resume_exact.c — --state / --resume after kill -9 (docs/state.md, "Nothing twice"):
 * a crawl of a slow loopback site with every output (--output, --warc and --cdx,
 * --items, --store) killed with SIGKILL 20 times at moments drawn from a fixed seed —
 * some land while the state commits, some while it restores — and resumed after each,
 * then run to its end: every page exactly once in --output, once as a response (or
 * revisit) in --warc and in --cdx, its item once in --items, once in --store's pages
 * and items, and --store's items are --items' lines (the spider numbers the pages of
 * its run: an item made again differs); none missing. And an --output of another
 * crawl is refused, never cut. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <fcntl.h>
#include <sqlite3.h>

#include "jsonl.h"
#include "scratch.h"
#include "testsite_helper.h"
#include "warcscan.h"

enum { PAGES = 600, KILLS = 20 };

static testsite site, quick;
/* The site the crawls go to: site (20 ms a response, so that a kill at a random moment
 * lands mid-crawl, and the outputs' writers fall behind the fetches), or for the cases
 * of one task whose kills the shim places and which need no writer behind, quick: the
 * same pages at once (a crawl of one task on site: 12 s). The --warc case stays on
 * site: at once, the root's repeats are archived before page 7's row is committed. */
static char *site_url;

static char *crawler(void)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/crawl-queue", BIN_DIR);
    return path;
}

static char *in_dir(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", scratch_dir, name);
    return buf;
}

/* Page i of the generated site ("/" is page 0). */
static void page_url(long i, char *buf, size_t len)
{
    if (i == 0)
        snprintf(buf, len, "%s", site_url);
    else
        snprintf(buf, len, "%sp/%ld", site_url, i);
}

/* The page number of url, or -1 when it is none of the site's pages. */
static long page_of(const char *url, size_t len)
{
    size_t base = strlen(site_url);
    if (len < base || strncmp(url, site_url, base) != 0)
        return -1;
    if (len == base)
        return 0;
    if (len < base + 3 || strncmp(url + base, "p/", 2) != 0)
        return -1;
    long n = 0;
    for (size_t i = base + 2; i < len; i++) {
        if (url[i] < '0' || url[i] > '9' || n > PAGES)
            return -1;
        n = n * 10 + (url[i] - '0');
    }
    return n > 0 && n < PAGES ? n : -1;
}

/* Counts per page of one output, and what was no page. */
typedef struct tally {
    int n[PAGES];
    long others; /* URLs that are none of the site's pages */
} tally;

static void count(tally *t, const char *url, size_t len)
{
    long p = page_of(url, len);
    if (p < 0)
        t->others++;
    else
        t->n[p]++;
}

/* Every page exactly once, and nothing else (robots.txt allowed once: `others`). */
static void assert_once(const tally *t, const char *what, long others_max)
{
    for (long i = 0; i < PAGES; i++)
        if (t->n[i] != 1) {
            char url[256];
            page_url(i, url, sizeof url);
            fail_msg("%s holds %s %d times (once expected)", what, url, t->n[i]);
        }
    if (t->others > others_max)
        fail_msg("%s holds %ld URLs that are no page of the site", what, t->others);
}

/* The value of "key": "..." (or "key":"...") in a JSON line (no escapes in the site's URLs). */
static const char *json_string(const char *line, const char *key, size_t *len)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *v = strstr(line, pat);
    if (!v)
        return NULL;
    v += strlen(pat);
    v += strspn(v, " ");
    if (*v++ != '"')
        return NULL;
    const char *end = strchr(v, '"');
    if (!end)
        return NULL;
    *len = (size_t)(end - v);
    return v;
}

/* The lines of path: each whole, each with a "url" (counted), summary lines counted. */
static void tally_lines(const char *path, tally *t, size_t *summaries)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    *summaries = 0;
    while ((n = getline(&line, &cap, f)) > 0) {
        if (line[n - 1] != '\n')
            fail_msg("%s: a torn last line", path);
        if (strncmp(line, "{\"summary\":", 11) == 0) {
            (*summaries)++;
            continue;
        }
        size_t len;
        const char *url = json_string(line, "url", &len);
        if (!url)
            fail_msg("%s: a line without a url: %.100s", path, line);
        count(t, url, len);
    }
    free(line);
    fclose(f);
}

static void on_record(void *ctx, const warcscan_rec *r)
{
    if (strcmp(r->type, "response") == 0 || strcmp(r->type, "revisit") == 0)
        count(ctx, r->uri, strlen(r->uri));
}

/* The response and revisit records of a WARC file, every byte of it whole records. */
static void tally_warc(const char *path, tally *t)
{
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    char err[300];
    long long whole = warcscan(fd, true, on_record, t, err, sizeof err);
    off_t size = lseek(fd, 0, SEEK_END);
    close(fd);
    if (whole < 0)
        fail_msg("%s: %s", path, err);
    assert_int_equal(whole, (long long)size);
}

/* --store: the pages rows' URLs, or (items) the items' URLs. */
static void tally_store(const char *path, const char *sql, tally *t)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *url = (const char *)sqlite3_column_text(st, 0);
        assert_non_null(url);
        count(t, url, strlen(url));
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/* --store's robots table: one row, of the site's robots.txt. A resumed crawl fetches
 * robots.txt again, as an uninterrupted one would at its start, but stores it only when
 * no earlier run of the crawl did (as --warc archives it once). */
static void assert_robots_once(const char *path)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    char url[300];
    snprintf(url, sizeof url, "%srobots.txt", site_url);
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT count(*), count(*) FILTER (WHERE url = ?1)"
                                        " FROM robots",
                                        -1, &st, NULL),
                     SQLITE_OK);
    sqlite3_bind_text(st, 1, url, -1, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    long long all = sqlite3_column_int64(st, 0), mine = sqlite3_column_int64(st, 1);
    sqlite3_finalize(st);
    sqlite3_close(db);
    if (all != 1 || mine != 1)
        fail_msg("--store's robots holds %lld rows, %lld of %s (one expected)", all, mine, url);
}

static int by_text(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lines of path without their newlines (*n of them), or the json of --store's
 * items: malloc'd, sorted. */
static char **sorted_lines(const char *path, size_t *n)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char **v = NULL, *line = NULL;
    size_t cap = 0, vcap = 0;
    ssize_t len;
    *n = 0;
    while ((len = getline(&line, &cap, f)) > 0) {
        if (*n == vcap)
            v = realloc(v, (vcap = vcap ? 2 * vcap : 1024) * sizeof *v);
        assert_non_null(v);
        line[len - 1] = '\0';
        v[(*n)++] = strdup(line);
    }
    free(line);
    fclose(f);
    qsort(v, *n, sizeof *v, by_text);
    return v;
}

static char **sorted_store_items(const char *path, size_t *n)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    char **v = NULL;
    size_t vcap = 0;
    *n = 0;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT json FROM items", -1, &st, NULL), SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (*n == vcap)
            v = realloc(v, (vcap = vcap ? 2 * vcap : 1024) * sizeof *v);
        assert_non_null(v);
        v[(*n)++] = strdup((const char *)sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    qsort(v, *n, sizeof *v, by_text);
    return v;
}

/* --store's items are --items' lines, each once: the same items, not ones a fetch
 * after a kill made again (which differ in n). */
static void assert_store_items_are_file(const char *store, const char *items)
{
    size_t nf, ns;
    char **file = sorted_lines(items, &nf), **stored = sorted_store_items(store, &ns);
    for (size_t i = 0; i < nf || i < ns; i++) {
        const char *a = i < nf ? file[i] : "(none)", *b = i < ns ? stored[i] : "(none)";
        if (strcmp(a, b) != 0)
            fail_msg("--items holds %zu items and --store %zu, not the same: --items has %.100s "
                     "where --store has %.100s",
                     nf, ns, a, b);
    }
    for (size_t i = 0; i < nf; i++)
        free(file[i]);
    for (size_t i = 0; i < ns; i++)
        free(stored[i]);
    free(file);
    free(stored);
}

static void kill_9(pid_t pid, void *ctx)
{
    (void)ctx;
    kill(pid, SIGKILL);
}

typedef struct files {
    char db[300], out[300], warc[300], cdx[300], items[300], store[300], spider[300];
} files;

static void run(crawl_run *r, const files *f, bool resume, double at)
{
    char *argv[] = {crawler(),     "-q",
                    "--max-tasks", "4",
                    "--state",     (char *)f->db,
                    "--format",    "jsonl",
                    "--output",    (char *)f->out,
                    "--warc",      (char *)f->warc,
                    "--cdx",       (char *)f->cdx,
                    "--store",     (char *)f->store,
                    "--spider",    (char *)f->spider,
                    "--items",     (char *)f->items,
                    site_url,      resume ? "--resume" : NULL,
                    NULL};
    int rc = at > 0 ? run_crawler_at(r, argv, 60, at, kill_9, NULL) : run_crawler(r, argv, 60);
    assert_int_equal(rc, 0);
}

static void test_twenty_kills_nothing_twice(void **state)
{
    (void)state;
    files f;
    in_dir(f.db, sizeof f.db, "k.db");
    in_dir(f.out, sizeof f.out, "k.jsonl");
    in_dir(f.warc, sizeof f.warc, "k.warc.gz");
    in_dir(f.cdx, sizeof f.cdx, "k.cdx");
    in_dir(f.items, sizeof f.items, "items.jsonl");
    in_dir(f.store, sizeof f.store, "store.db");
    assert_non_null(scratch_write(f.spider, sizeof f.spider, "one_item.lua",
                                  /* n: the page's place in its run, so that an
                                   * item made again by a refetch differs from the
                                   * one --items holds */
                                  "n = 0\n"
                                  "function parse(response)\n"
                                  "  n = n + 1\n"
                                  "  item({url = response.url, n = n})\n"
                                  "  for _, link in ipairs(response:links()) do\n"
                                  "    follow(link)\n"
                                  "  end\n"
                                  "end\n"));
    /* the number: the same moments each time (TEST_RESUME_SEED: others) */
    const char *seed = getenv("TEST_RESUME_SEED");
    srand(seed ? (unsigned)atoi(seed) : 34);
    int kills = 0;
    for (int i = 0; i < KILLS; i++) {
        crawl_run r;
        /* 30 to 330 ms into a run: before, during and after the state's restore, its
         * first commit (100 ms) and the ones after */
        double at = 0.03 + (double)(rand() % 300) / 1000;
        run(&r, &f, i > 0, at);
        if (r.term_signal == SIGKILL)
            kills++;
        else if (r.exit_code != 0)
            fail_msg("run %d: %s", i, crawl_run_describe(&r));
        crawl_run_free(&r);
    }
    crawl_run r;
    run(&r, &f, true, 0);
    if (r.exit_code != 0)
        fail_msg("the last run: %s", crawl_run_describe(&r));
    crawl_run_free(&r);
    print_message("%d of %d runs killed with SIGKILL, then one to the end\n", kills, KILLS);
    assert_true(kills >= KILLS / 2); /* the site is slow enough for most to land */

    tally *t = calloc(1, sizeof *t);
    size_t summaries;
    tally_lines(f.out, t, &summaries);
    assert_int_equal(summaries, 1);
    assert_once(t, "--output", 0);
    memset(t, 0, sizeof *t);
    tally_warc(f.warc, t);
    assert_once(t, "--warc", 1); /* and robots.txt, once */
    memset(t, 0, sizeof *t);
    tally_lines(f.cdx, t, &summaries);
    assert_int_equal(summaries, 0);
    assert_once(t, "--cdx", 1);
    memset(t, 0, sizeof *t);
    tally_lines(f.items, t, &summaries);
    assert_once(t, "--items", 0);
    memset(t, 0, sizeof *t);
    tally_store(f.store, "SELECT url FROM pages", t);
    assert_once(t, "--store's pages", 0);
    memset(t, 0, sizeof *t);
    tally_store(f.store, "SELECT url FROM items", t);
    assert_once(t, "--store's items", 0);
    free(t);
    assert_store_items_are_file(f.store, f.items);
    assert_robots_once(f.store);
}

/* A run with the shim kill_at_sqlite.c preloaded, mode=N in its environment; the run
 * must have been killed by it. */
static void run_killed_at(const files *f, const char *mode, int n, bool resume)
{
    char v[32];
    snprintf(v, sizeof v, "%d", n);
    setenv("LD_PRELOAD", KILL_AT_SQLITE_LIB, 1);
    setenv("ASAN_OPTIONS", "verify_asan_link_order=0", 1);
    setenv("KILL_STATE_DB", "/k.db", 1);
    setenv("KILL_STORE_DB", "/store.db", 1);
    setenv(mode, v, 1);
    crawl_run r;
    run(&r, f, resume, 0);
    unsetenv("LD_PRELOAD");
    unsetenv(mode);
    if (r.term_signal != SIGKILL)
        fail_msg("%s=%d: not killed: %s", mode, n, crawl_run_describe(&r));
    crawl_run_free(&r);
}

/* One integer from SQL on the state db, with the store attached as sto (if there is
 * one). */
static long long state_count(const files *f, const char *sql)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    char attach[400];
    assert_int_equal(sqlite3_open_v2(f->db, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    snprintf(attach, sizeof attach, "ATTACH DATABASE '%s' AS sto", f->store);
    if (access(f->store, F_OK) == 0)
        assert_int_equal(sqlite3_exec(db, attach, NULL, NULL, NULL), SQLITE_OK);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    long long v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

static void fresh_files(files *f, const char *spider)
{
    in_dir(f->db, sizeof f->db, "k.db");
    in_dir(f->out, sizeof f->out, "k.jsonl");
    in_dir(f->warc, sizeof f->warc, "k.warc.gz");
    in_dir(f->cdx, sizeof f->cdx, "k.cdx");
    in_dir(f->items, sizeof f->items, "items.jsonl");
    in_dir(f->store, sizeof f->store, "store.db");
    const char *const gone[] = {f->db, f->out, f->warc, f->cdx, f->items, f->store};
    for (size_t i = 0; i < sizeof gone / sizeof gone[0]; i++) {
        char side[320];
        unlink(gone[i]);
        snprintf(side, sizeof side, "%s-wal", gone[i]);
        unlink(side);
        snprintf(side, sizeof side, "%s-shm", gone[i]);
        unlink(side);
    }
    assert_non_null(scratch_write(f->spider, sizeof f->spider, "spider.lua", spider));
}

/* Every page once in each output; --store's items are --items' lines. */
static void assert_all_once(const files *f)
{
    tally *t = calloc(1, sizeof *t);
    size_t summaries;
    tally_lines(f->out, t, &summaries);
    assert_int_equal(summaries, 1);
    assert_once(t, "--output", 0);
    memset(t, 0, sizeof *t);
    tally_warc(f->warc, t);
    assert_once(t, "--warc", 1);
    memset(t, 0, sizeof *t);
    tally_store(f->store, "SELECT url FROM pages", t);
    assert_once(t, "--store's pages", 0);
    free(t);
    assert_store_items_are_file(f->store, f->items);
    assert_robots_once(f->store);
}

/* --resume to the end (exit 0), then every page once in each output. */
static void resume_all_once(const files *f)
{
    crawl_run r;
    run(&r, f, true, 0);
    if (r.exit_code != 0)
        fail_msg("the resume: %s", crawl_run_describe(&r));
    crawl_run_free(&r);
    assert_all_once(f);
}

/* A page fetched again after a kill -9 that gives fewer items than its first fetch
 * wrote (3, then 1): a kill after the state committed the page's items rows and before
 * its pages row (kill_at_sqlite.c), at the state's 1st, 9th and 40th pages row. After
 * the resume each page's items in --items are those of its last fetch — all three of
 * run 1's spider, or the one of run 2's — each once, and --store's items are --items'.
 * (Before: the first fetch's three stayed in --items, and --store had one.) */
static void test_refetch_fewer_items(void **state)
{
    (void)state;
    static const char three[] =
        "function parse(response)\n"
        "  for k = 1, 3 do item({url = response.url, run = 'a', k = k}) end\n"
        "  for _, link in ipairs(response:links()) do follow(link) end\n"
        "end\n";
    static const char one[] = "function parse(response)\n"
                              "  item({url = response.url, run = 'b', k = 1})\n"
                              "  for _, link in ipairs(response:links()) do follow(link) end\n"
                              "end\n";
    static const int at[] = {1, 9, 40};
    for (size_t c = 0; c < sizeof at / sizeof at[0]; c++) {
        files f;
        fresh_files(&f, three);
        run_killed_at(&f, "KILL_AT_STATE_PAGE", at[c], false);
        /* what the test is about: items committed, their page not */
        if (state_count(&f, "SELECT count(*) FROM items WHERE url NOT IN (SELECT url FROM pages)")
            == 0)
            fail_msg("kill at pages row %d: no item of a page not done in the state", at[c]);
        assert_non_null(scratch_write(f.spider, sizeof f.spider, "spider.lua", one));
        resume_all_once(&f);
        /* each page: a, a, a (k 1 to 3) or b alone */
        int(*seen)[4] = calloc(PAGES, sizeof *seen); /* a's k 1..3, b */
        FILE *in = fopen(f.items, "r");
        assert_non_null(in);
        char *line = NULL;
        size_t cap = 0;
        while (getline(&line, &cap, in) > 0) {
            size_t len, rlen;
            const char *url = json_string(line, "url", &len),
                       *run_ = json_string(line, "run", &rlen);
            const char *k = strstr(line, "\"k\":");
            long p = url ? page_of(url, len) : -1;
            if (p < 0 || !run_ || rlen != 1 || !k)
                fail_msg("--items: an item not of the spiders: %.100s", line);
            int kk = atoi(k + 4 + strspn(k + 4, " "));
            if (*run_ == 'a' && kk >= 1 && kk <= 3)
                seen[p][kk - 1]++;
            else if (*run_ == 'b' && kk == 1)
                seen[p][3]++;
            else
                fail_msg("--items: %.100s", line);
        }
        free(line);
        fclose(in);
        for (long p = 0; p < PAGES; p++) {
            bool a = seen[p][0] == 1 && seen[p][1] == 1 && seen[p][2] == 1 && seen[p][3] == 0;
            bool b = seen[p][0] == 0 && seen[p][1] == 0 && seen[p][2] == 0 && seen[p][3] == 1;
            if (!a && !b) {
                char url[256];
                page_url(p, url, sizeof url);
                fail_msg("kill at pages row %d: --items holds %s's items a1 %d, a2 %d, a3 %d, "
                         "b %d times: not one fetch's, once",
                         at[c], url, seen[p][0], seen[p][1], seen[p][2], seen[p][3]);
            }
        }
        free(seen);
    }
}

/* A spider of one item per page, its URL, every link followed. */
static const char one[] = "function parse(response)\n"
                          "  item({url = response.url})\n"
                          "  for _, link in ipairs(response:links()) do follow(link) end\n"
                          "end\n";

/* A state file from before items.record_end (a kill at the 9th pages row, after its
 * URL's items rows, then the column dropped): --resume adds the column, its rows go
 * by URL as they did, and every output holds each page once. */
static void test_old_items_rows(void **state)
{
    (void)state;
    files f;
    fresh_files(&f, one);
    run_killed_at(&f, "KILL_AT_STATE_PAGE", 9, false);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(f.db, &db), SQLITE_OK);
    char *e = NULL;
    if (sqlite3_exec(db, "ALTER TABLE items DROP COLUMN record_end", NULL, NULL, &e) != SQLITE_OK)
        fail_msg("making an old state file: %s", e);
    sqlite3_close(db);
    resume_all_once(&f);
    tally *t = calloc(1, sizeof *t);
    size_t summaries;
    tally_lines(f.items, t, &summaries);
    assert_once(t, "--items", 0);
    free(t);
    /* the rows of the resumed run know their records */
    if (state_count(&f, "SELECT count(*) FROM items WHERE record_end IS NOT NULL") == 0)
        fail_msg("no items row with record_end after the resume of an old file");
}

/* --store's writer ahead of --state's: the state's 2nd (then 3rd) commit held
 * (kill_at_sqlite.c) while the store commits rows of pages whose URLs' frontier rows
 * were in it, then kill -9 right after the store's commit. On --resume those URLs are
 * found again and fetched again: --store must not keep their first rows (before: two
 * pages rows of each). */
static void test_store_ahead_of_state(void **state)
{
    (void)state;
    int ahead_runs = 0;
    for (int n = 2; n <= 3; n++) {
        files f;
        fresh_files(&f, one);
        run_killed_at(&f, "KILL_STALL_STATE", n, false);
        long long ahead = state_count(&f,
                                      "SELECT count(*) FROM sto.pages WHERE url NOT IN"
                                      " (SELECT url FROM main.frontier)");
        print_message("state's commit %d held: --store has %lld page(s) the state has no "
                      "frontier row of\n",
                      n, ahead);
        ahead_runs += ahead > 0;
        resume_all_once(&f);
        tally *t = calloc(1, sizeof *t);
        tally_store(f.store, "SELECT url FROM items", t);
        assert_once(t, "--store's items", 0);
        free(t);
    }
    /* what the test is about (the timing decides how many pages are ahead) */
    if (ahead_runs == 0)
        fail_msg("--store was never ahead of the state: nothing tested");
}

/* The outputs a run_tasks has beside --output. */
enum { OUT_ITEMS = 1, OUT_WARC = 2 };

/* A run of `tasks` tasks with --state, --output and --spider (and with items OUT_ITEMS
 * --items f->items, OUT_WARC --warc f->warc), the shim preloaded with mode=n when mode
 * is not NULL; -q, or -v when resume (its -v lines are counted). */
static void run_tasks(crawl_run *r, const files *f, const char *tasks, unsigned items, bool resume,
                      const char *mode, int n)
{
    char v[32];
    snprintf(v, sizeof v, "%d", n);
    if (mode) {
        setenv("LD_PRELOAD", KILL_AT_SQLITE_LIB, 1);
        setenv("ASAN_OPTIONS", "verify_asan_link_order=0", 1);
        setenv("KILL_STATE_DB", "/k.db", 1);
        setenv(mode, v, 1);
    }
    char *argv[24] = {crawler(),  resume ? "-v" : "-q", "--max-tasks", (char *)tasks,
                      "--state",  (char *)f->db,        "--format",    "jsonl",
                      "--output", (char *)f->out,       "--spider",    (char *)f->spider,
                      site_url};
    int k = 13;
    if (items & OUT_ITEMS) {
        argv[k++] = "--items";
        argv[k++] = (char *)f->items;
    }
    if (items & OUT_WARC) {
        argv[k++] = "--warc";
        argv[k++] = (char *)f->warc;
    }
    argv[k] = resume ? "--resume" : NULL;
    assert_int_equal(run_crawler(r, argv, 60), 0);
    if (mode) {
        unsetenv("LD_PRELOAD");
        unsetenv(mode);
    }
}

/* run_tasks with the shim: it must kill the run. */
static void run_tasks_killed(const files *f, const char *tasks, unsigned items, const char *mode,
                             int n)
{
    crawl_run r;
    run_tasks(&r, f, tasks, items, false, mode, n);
    if (r.term_signal != SIGKILL)
        fail_msg("%s=%d: not killed: %s", mode, n, crawl_run_describe(&r));
    crawl_run_free(&r);
}

/* run_tasks with --resume, to the end: exit 0 (r is the caller's to free). */
static void run_tasks_resumed(crawl_run *r, const files *f, const char *tasks, unsigned items)
{
    run_tasks(r, f, tasks, items, true, NULL, 0);
    if (r->exit_code != 0)
        fail_msg("the resume: %s", crawl_run_describe(r));
}

/* The place (1, 2, ...) among --output's records of the nth record of url, or 0. */
static int record_place(const char *path, const char *url, int nth)
{
    FILE *in = fopen(path, "r");
    assert_non_null(in);
    char *line = NULL;
    size_t cap = 0, len;
    int place = 0, found = 0, seen = 0;
    while (!found && getline(&line, &cap, in) > 0) {
        const char *u = json_string(line, "url", &len);
        if (!u)
            continue;
        place++;
        if (len == strlen(url) && strncmp(u, url, len) == 0 && ++seen == nth)
            found = place;
    }
    free(line);
    fclose(in);
    return found;
}

/* How many lines of the run's stderr are the -v line of a dont_filter request put back
 * in the Queue (state.c's requeue_again) naming url, made on the page from. */
static int again_lines(const crawl_run *r, const char *url, const char *from)
{
    char want[700];
    snprintf(want, sizeof want, "--resume: a dont_filter request put back: %s (from %s)\n", url,
             from);
    int n = 0;
    for (const char *at = r->err; (at = strstr(at, want)); at += strlen(want))
        n++;
    return n;
}

/* The lines of path. */
static long lines_of(const char *path)
{
    FILE *in = fopen(path, "r");
    assert_non_null(in);
    long n = 0;
    for (int c; (c = getc(in)) != EOF;)
        n += c == '\n';
    fclose(in);
    return n;
}

/* --output after the resume of a crawl killed at pages row `at`: one summary, want
 * records of the root (its own and the dont_filter requests'), every other page once. */
static void assert_root_records(const files *f, int want, int at)
{
    tally *t = calloc(1, sizeof *t);
    size_t summaries;
    tally_lines(f->out, t, &summaries);
    assert_int_equal(summaries, 1);
    if (t->n[0] != want)
        fail_msg("kill at pages row %d: --output holds %d records of the root (%d expected: "
                 "its own and the dont_filter requests')",
                 at, t->n[0], want);
    t->n[0] = 1;
    assert_once(t, "--output", 0);
    free(t);
}

enum { SPIDER_MAX = 1024 };

/* A spider whose page 7 (emitter) follows the root twice with dont_filter, callback
 * again (its body again_body); root and emitter get their URLs (256 bytes). */
static void emitter_spider(char *spider, size_t len, char *root, char *emitter,
                           const char *again_body)
{
    page_url(0, root, 256);
    page_url(7, emitter, 256);
    snprintf(spider, len,
             "function parse(response)\n"
             "  if response.url == '%s' then\n"
             "    for k = 1, 2 do\n"
             "      follow{url = '%s', callback = 'again', dont_filter = true}\n"
             "    end\n"
             "  end\n"
             "  for _, link in ipairs(response:links()) do follow(link) end\n"
             "end\n"
             "function again(response) %s end\n",
             emitter, root, again_body);
}

/* A case of emitter_spider's: the spider, the root's and page 7's URLs, the files. */
typedef struct emitter_case {
    char spider[SPIDER_MAX], root[256], emitter[256];
    files f;
} emitter_case;

/* emitter_spider's spider, fresh files, and a crawl of one task never killed (with the
 * outputs of items, run_tasks's). */
static void never_killed(emitter_case *ec, const char *again_body, unsigned items)
{
    crawl_run r;
    emitter_spider(ec->spider, SPIDER_MAX, ec->root, ec->emitter, again_body);
    fresh_files(&ec->f, ec->spider);
    run_tasks(&r, &ec->f, "1", items, false, NULL, 0);
    if (r.exit_code != 0)
        fail_msg("the crawl: %s", crawl_run_describe(&r));
    crawl_run_free(&r);
}

/* Requests a spider makes with dont_filter (follow{..., dont_filter = true}: scheduled
 * though seen, not through the seen set) survive a kill -9: page 7 follows the root
 * twice so, and the crawl is killed (kill_at_sqlite.c) at the state's pages row of the
 * first of them (its emitter's row committed, it not fetched yet), then at the
 * emitter's own row (its record not committed: it is fetched again and makes them
 * anew). After the resume the root has three records — its own and the two asked for,
 * each once — and every other page one, as in a crawl never killed. The resume's -v
 * names each request it put back: the two in the first case, none in the second. */
static void test_dont_filter_survives_kill(void **state)
{
    (void)state;
    emitter_case ec;
    crawl_run r;
    never_killed(&ec, "", 0); /* where the records fall */
    int at[2] = {record_place(ec.f.out, ec.root, 2), record_place(ec.f.out, ec.emitter, 1)};
    if (at[0] == 0 || at[1] == 0 || at[1] >= at[0])
        fail_msg("the crawl never killed: the root's 2nd record at %d, page 7's at %d", at[0],
                 at[1]);
    for (size_t c = 0; c < 2; c++) {
        fresh_files(&ec.f, ec.spider);
        run_tasks_killed(&ec.f, "1", 0, "KILL_AT_STATE_PAGE", at[c]);
        run_tasks_resumed(&r, &ec.f, "1", 0);
        int lines = again_lines(&r, ec.root, ec.emitter);
        if (lines != (c == 0 ? 2 : 0))
            fail_msg("kill at pages row %d: the resume's -v named %d dont_filter request(s) "
                     "put back (%d expected): %s",
                     at[c], lines, c == 0 ? 2 : 0, crawl_run_describe(&r));
        crawl_run_free(&r);
        assert_root_records(&ec.f, 3, at[c]);
    }
}

/* A dont_filter request's record committed in --state before the record of the page
 * whose callback made it: the root makes ITEMS items (three batches of the state's rows:
 * its pipeline waits for the writer between its items and its record) and follows
 * itself once more with dont_filter, which the second task fetches meanwhile; the
 * state's writer is held (kill_at_sqlite.c, KILL_HOLD_*) from the root's first record
 * in --output to its second, so that the second's pages row is in a batch before the
 * root's own, and the crawl is killed at the root's second pages row — the root's own,
 * after the request's was committed. After the resume --output holds the root twice
 * (its record and the request's) and every other page once, and --items each of the
 * root's items once, as a crawl never killed does. */
enum { HELD_ITEMS = 3 * 4096 }; /* STATE_BATCH_ROWS (state.h); fewer: "nothing tested" */

/* The crawl of test_dont_filter_ahead_of_its_page (root: the root's URL, 256 bytes):
 * the root's HELD_ITEMS items and its dont_filter request, two tasks, the state's
 * writer held from the root's first record to its second; killed at the root's 2nd
 * pages row (kill 1), or to its end (kill 0: exit 0, the writer held on until the
 * crawl stops). */
static void held_root_crawl(files *f, char *root, int kill)
{
    char spider[SPIDER_MAX];
    page_url(0, root, 256);
    snprintf(spider, sizeof spider,
             "function parse(response)\n"
             "  if response.url == '%s' then\n"
             "    for k = 1, %d do item({k = k}) end\n"
             "    follow{url = '%s', callback = 'again', dont_filter = true}\n"
             "  end\n"
             "  for _, link in ipairs(response:links()) do follow(link) end\n"
             "end\n"
             "function again(response) end\n",
             root, HELD_ITEMS, root);
    fresh_files(f, spider);
    setenv("KILL_HOLD_OUTPUT", f->out, 1);
    setenv("KILL_HOLD_URL", root, 1);
    setenv("KILL_HOLD_RECORDS", "2", 1);
    setenv("KILL_AT_STATE_PAGE_URL", root, 1);
    if (kill) {
        run_tasks_killed(f, "2", OUT_ITEMS, "KILL_AT_STATE_PAGE", 2);
    } else {
        /* held on until the crawl stops: both tasks wait for the writer (1 s: slack
         * for a loaded box, where a task 20 ms from its next record can wait longer) */
        setenv("KILL_HOLD_QUIET_MS", "1000", 1);
        crawl_run r;
        run_tasks(&r, f, "2", OUT_ITEMS, false, "KILL_AT_STATE_PAGE", 0);
        unsetenv("KILL_HOLD_QUIET_MS");
        if (r.exit_code != 0)
            fail_msg("the crawl with its writer held: %s", crawl_run_describe(&r));
        crawl_run_free(&r);
    }
    unsetenv("KILL_HOLD_OUTPUT");
    unsetenv("KILL_AT_STATE_PAGE_URL");
}

/* Each of the root's items once in --items. */
static void assert_held_items_once(const files *f)
{
    int *seen = calloc(HELD_ITEMS + 1, sizeof *seen);
    FILE *in = fopen(f->items, "r");
    assert_non_null(in);
    char line[256];
    while (fgets(line, sizeof line, in)) {
        const char *k = strstr(line, "\"k\":");
        int kk = k ? atoi(k + 4 + strspn(k + 4, " ")) : 0;
        if (kk < 1 || kk > HELD_ITEMS)
            fail_msg("--items: %.100s", line);
        seen[kk]++;
    }
    fclose(in);
    for (int k = 1; k <= HELD_ITEMS; k++)
        if (seen[k] != 1)
            fail_msg("--items holds the root's item %d %d times (once expected)", k, seen[k]);
    free(seen);
}

static void test_dont_filter_ahead_of_its_page(void **state)
{
    (void)state;
    char root[256];
    files f;
    crawl_run r;
    held_root_crawl(&f, root, 1);
    /* what the test is about: the request's record committed, its page's not */
    char sql[400];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM pages WHERE url = '%s'", root);
    long long rows = state_count(&f, sql), again = state_count(&f, "SELECT count(*) FROM again");
    if (rows != 1 || again != 0)
        fail_msg("killed with %lld pages row(s) of the root and %lld again row(s) (1 and 0: "
                 "the request's record committed before the root's): nothing tested",
                 rows, again);
    run_tasks_resumed(&r, &f, "2", OUT_ITEMS);
    crawl_run_free(&r);
    assert_root_records(&f, 2, 2);
    assert_held_items_once(&f);
}

/* Two pipelines waiting for the state's writer when it writes a batch, the first one
 * woken finding it still full: the crawl of test_dont_filter_ahead_of_its_page, not
 * killed. The root waits between its items, its request's record waits too; before,
 * the first re-armed the one future both waited on and the second, resumed on a future
 * pending again, took it for cancelled: its worker ended and its URL was never done
 * (the summary's "todo": 1; in a --resume, a crawl that never ended). Now every page
 * once and nothing to do. */
static void test_two_wait_for_room(void **state)
{
    (void)state;
    char root[256];
    files f;
    held_root_crawl(&f, root, 0);
    assert_root_records(&f, 2, 0);
    assert_held_items_once(&f);
    /* and no URL left undone (the summary, the last line) */
    FILE *in = fopen(f.out, "r");
    assert_non_null(in);
    char line[4096], last[4096] = "";
    while (fgets(line, sizeof line, in))
        memcpy(last, line, sizeof last);
    fclose(in);
    if (!strstr(last, "\"todo\": 0,"))
        fail_msg("the crawl ended with URLs to do: %.300s", last);
}

/* --items with a URL fetched on purpose more than once: page 7 follows the root twice
 * with dont_filter, and their callback makes one item each. Killed (one task) at the
 * first such fetch's pages row, its item's row committed before it: the root has a
 * pages row (its own), so a rule by URL counted that item done and kept it, and the
 * request, put back, wrote it again — three items where the crawl never killed has
 * two. Now each items row knows its record, and the item goes with it. */
static void test_dont_filter_items_once(void **state)
{
    (void)state;
    emitter_case ec;
    crawl_run r;
    never_killed(&ec, "item({url = response.url})", OUT_ITEMS);
    int at = record_place(ec.f.out, ec.root, 2);
    assert_int_equal(lines_of(ec.f.items), 2);
    fresh_files(&ec.f, ec.spider);
    run_tasks_killed(&ec.f, "1", OUT_ITEMS, "KILL_AT_STATE_PAGE", at);
    /* what the test is about: the item committed, its record not, the root's own row */
    char sql[400];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM pages WHERE url = '%s'", ec.root);
    if (state_count(&ec.f, "SELECT count(*) FROM items") != 1 || state_count(&ec.f, sql) != 1)
        fail_msg("kill at pages row %d: not one item and one pages row of the root", at);
    run_tasks_resumed(&r, &ec.f, "1", OUT_ITEMS);
    crawl_run_free(&r);
    assert_root_records(&ec.f, 3, at);
    if (lines_of(ec.f.items) != 2)
        fail_msg("kill at pages row %d: --items holds %ld items (2 expected: one per "
                 "dont_filter request, as without the kill)",
                 at, lines_of(ec.f.items));
}

/* --warc with a URL fetched on purpose more than once: the root's records (a response,
 * then revisits of its payload) once per fetch, as without a kill. Killed (one task) at
 * page 7's pages row, before the requests it made are fetched: page 7 is fetched again
 * and makes them anew, and the resume must archive both, though the archive holds the
 * root's own fetch (before: a rule by URL skipped every fetch of a URL an earlier run
 * archived, and the root had 1 record of 3). */
static void test_dont_filter_warc(void **state)
{
    (void)state;
    emitter_case ec;
    crawl_run r;
    never_killed(&ec, "", OUT_WARC);
    int at = record_place(ec.f.out, ec.emitter, 1);
    tally *t = calloc(1, sizeof *t);
    tally_warc(ec.f.warc, t);
    assert_int_equal(t->n[0], 3);
    fresh_files(&ec.f, ec.spider);
    run_tasks_killed(&ec.f, "1", OUT_WARC, "KILL_AT_STATE_PAGE", at);
    memset(t, 0, sizeof *t);
    tally_warc(ec.f.warc, t);
    if (t->n[0] != 1)
        fail_msg("killed at page 7's pages row: --warc holds %d records of the root (1: its "
                 "own fetch's, the requests not fetched yet): nothing tested",
                 t->n[0]);
    run_tasks_resumed(&r, &ec.f, "1", OUT_WARC);
    crawl_run_free(&r);
    assert_root_records(&ec.f, 3, at);
    memset(t, 0, sizeof *t);
    tally_warc(ec.f.warc, t);
    if (t->n[0] != 3)
        fail_msg("kill at pages row %d: --warc holds %d records of the root (3 expected: one "
                 "per fetch)",
                 at, t->n[0]);
    t->n[0] = 1;
    assert_once(t, "--warc", 1);
    free(t);
}

/* An --output that is not the state's crawl's (another file named by mistake) is never
 * cut: --resume refuses it in one line, exit 1, the file byte for byte as it was. */
static void test_foreign_output_refused(void **state)
{
    (void)state;
    char db[300], out[300];
    in_dir(db, sizeof db, "f.db");
    in_dir(out, sizeof out, "f.jsonl");
    char *argv[] = {crawler(), "-q",       "--max-pages", "20",     "--state", db,  "--format",
                    "jsonl",   "--output", out,           site_url, NULL,      NULL};
    crawl_run r;
    assert_int_equal(run_crawler(&r, argv, 60), 0);
    if (r.exit_code != 0)
        fail_msg("%s", crawl_run_describe(&r));
    crawl_run_free(&r);
    static const char other[] =
        "{\"url\": \"http://127.0.0.1:1/elsewhere\", \"next_url\": null, \"status\": 200}\n";
    FILE *f = fopen(out, "w");
    assert_non_null(f);
    assert_int_equal(fputs(other, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
    argv[sizeof argv / sizeof argv[0] - 2] = "--resume";
    assert_int_equal(run_crawler(&r, argv, 60), 0);
    if (!crawl_run_one_line(&r, 1, "holds records that are not of this crawl"))
        fail_msg("%s", crawl_run_describe(&r));
    crawl_run_free(&r);
    char got[sizeof other + 16];
    f = fopen(out, "r");
    assert_non_null(f);
    size_t n = fread(got, 1, sizeof got, f);
    fclose(f);
    assert_int_equal(n, sizeof other - 1);
    assert_memory_equal(got, other, n);
}

static int setup(void **state)
{
    if (scratch_setup(state) < 0)
        return -1;
    static char spec[128];
    snprintf(spec, sizeof spec, "pages=%d,links=6,size=1000,seed=5", PAGES);
    const char *const args[] = {"--delay", "20", "--generate", spec, NULL};
    const char *const at_once[] = {"--generate", spec, NULL};
    if (testsite_start(&site, args) < 0 || testsite_start(&quick, at_once) < 0)
        return -1;
    site_url = site.url;
    return 0;
}

static int on_quick(void **state)
{
    (void)state;
    site_url = quick.url;
    return 0;
}

static int on_site(void **state)
{
    (void)state;
    site_url = site.url;
    return 0;
}

static int teardown(void **state)
{
    testsite_stop(&site);
    testsite_stop(&quick);
    return scratch_teardown(state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_twenty_kills_nothing_twice),
        cmocka_unit_test(test_foreign_output_refused),
        cmocka_unit_test(test_refetch_fewer_items),
        cmocka_unit_test(test_store_ahead_of_state),
        cmocka_unit_test(test_old_items_rows),
        cmocka_unit_test_setup_teardown(test_dont_filter_survives_kill, on_quick, on_site),
        cmocka_unit_test(test_dont_filter_ahead_of_its_page),
        cmocka_unit_test(test_two_wait_for_room),
        cmocka_unit_test_setup_teardown(test_dont_filter_items_once, on_quick, on_site),
        cmocka_unit_test(test_dont_filter_warc),
    };
    const char *only = getenv("CRAWL_TEST_FILTER"); /* a cmocka glob: some cases */
    if (only && *only)
        cmocka_set_test_filter(only);
    return cmocka_run_group_tests(tests, setup, teardown);
}
