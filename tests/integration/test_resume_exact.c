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

static testsite site;

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
        snprintf(buf, len, "%s", site.url);
    else
        snprintf(buf, len, "%sp/%ld", site.url, i);
}

/* The page number of url, or -1 when it is none of the site's pages. */
static long page_of(const char *url, size_t len)
{
    size_t base = strlen(site.url);
    if (len < base || strncmp(url, site.url, base) != 0)
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
                    site.url,      resume ? "--resume" : NULL,
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
                    "jsonl",   "--output", out,           site.url, NULL,      NULL};
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
    return testsite_start(&site, args);
}

static int teardown(void **state)
{
    testsite_stop(&site);
    return scratch_teardown(state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_twenty_kills_nothing_twice),
        cmocka_unit_test(test_foreign_output_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
