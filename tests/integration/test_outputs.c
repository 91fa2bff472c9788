/* test_outputs.c — outputs that survive every run (docs/warc.md, docs/storage.md,
 * docs/state.md): crawl-queue with --state and --warc, killed (kill -9, a torn record
 * left at the end) or interrupted (SIGINT) mid-crawl on a slow testsite, then
 * --resume: warcio.js (tests/scenarios/warcio_check.mjs) reads every record of the
 * archive, one response per recorded URL across the runs, robots.txt archived too, and
 * the --cdx index points at each record as `warcio cdx-index` finds it. --warc-max-size
 * rotates (every file read by warcio.js, each with its warcinfo, the index naming the
 * right file). A used --warc or --cdx is refused without --resume. The summary of a
 * resumed crawl gives the whole crawl's totals. --store keeps a crawls table and every
 * row's crawl_id across runs (an older store upgraded in place), and robots.txt.
 *
 * TEST_CRAWL_QUEUE=PATH runs another crawl-queue (an older build: to see which of these
 * fail without the features). */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include "jsonl.h"
#include "signal_at.h"
#include "testsite_helper.h"

enum { PAGES = 300 };

static testsite slow, fast;
static char dir[] = "/tmp/test_outputs.XXXXXX";
static const char *warcio;

static char *crawl_queue(void)
{
    const char *other = getenv("TEST_CRAWL_QUEUE");
    return (char *)(other && *other ? other : BIN_DIR "/crawl-queue");
}

static char *in_dir(const char *name)
{
    static char paths[16][300];
    static int next;
    char *p = paths[next++ % 16];
    snprintf(p, 300, "%s/%s", dir, name);
    return p;
}

static int setup(void **state)
{
    (void)state;
    /* 100 ms a page, 10 at a time: about 3 s for the whole site, so a kill lands
     * mid-crawl; the fast one for the store. */
    const char *const slow_args[] = {"--delay", "100", "--generate",
                                     "pages=300,links=5,size=1000,seed=3", NULL};
    const char *const fast_args[] = {"--generate", "pages=40,links=4,size=800,seed=9", NULL};
    const char *w = getenv("WARCIO");
    warcio = w && *w ? w : NULL;
    if (!mkdtemp(dir))
        return -1;
    return testsite_start(&slow, slow_args) < 0 ? -1 : testsite_start(&fast, fast_args);
}

static int teardown(void **state)
{
    (void)state;
    testsite_stop(&slow);
    testsite_stop(&fast);
    return test_remove_tree(dir);
}

static long long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

/* ---- running crawls ---------------------------------------------------------------- */

/* crawl-queue --state db --format jsonl --output out --max-tasks 10 and the given
 * arguments (NULL-terminated), then the slow site; signalled per k once its file has
 * grown (NULL: not). */
static void run_queue(crawl_run *r, const char *db, const char *out, signal_at *k, ...)
{
    char *argv[32];
    int n = 0;
    argv[n++] = crawl_queue();
    const char *fixed[] = {"--state",  db,  "--format",    "jsonl",
                           "--output", out, "--max-tasks", "10"};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
        argv[n++] = (char *)fixed[i];
    va_list ap;
    va_start(ap, k);
    for (const char *a; (a = va_arg(ap, const char *)) != NULL && n < 29;)
        argv[n++] = (char *)a;
    va_end(ap);
    argv[n++] = slow.url;
    argv[n] = NULL;
    if (k)
        assert_int_equal(run_crawler_signal_at(r, argv, 90, k), 0);
    else
        assert_int_equal(run_crawler(r, argv, 90), 0);
}

/* ---- the JSONL of every run ---------------------------------------------------------- */

typedef struct records {
    char **url;  /* each record's URL, in file order */
    int *status; /* -1: null */
    size_t n;
    jobj *summary; /* the last summary line's object, or NULL */
} records;

static void records_read(records *rs, const char *path)
{
    memset(rs, 0, sizeof *rs);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) > 0) {
        char why[200];
        jobj *o = jobj_parse(line, (size_t)len - (line[len - 1] == '\n'), why, sizeof why);
        if (!o)
            fail_msg("%s: a line that is no JSON (%s): %s", path, why, line);
        const jobj *sum = jobj_obj(o, "summary");
        if (sum) {
            jobj_free(rs->summary);
            rs->summary = o;
            continue;
        }
        rs->url = realloc(rs->url, (rs->n + 1) * sizeof *rs->url);
        rs->status = realloc(rs->status, (rs->n + 1) * sizeof *rs->status);
        rs->url[rs->n] = strdup(jobj_str(o, "url"));
        rs->status[rs->n++] = (int)jobj_int(o, "status", -1);
        jobj_free(o);
    }
    free(line);
    fclose(f);
}

static void records_free(records *rs)
{
    for (size_t i = 0; i < rs->n; i++)
        free(rs->url[i]);
    free(rs->url);
    free(rs->status);
    jobj_free(rs->summary);
}

static long long summary_int(const records *rs, const char *key)
{
    assert_non_null(rs->summary);
    return jobj_int(jobj_obj(rs->summary, "summary"), key, -1);
}

static size_t distinct_urls(const records *rs)
{
    size_t d = 0;
    for (size_t i = 0; i < rs->n; i++) {
        size_t j = 0;
        while (j < i && strcmp(rs->url[j], rs->url[i]) != 0)
            j++;
        d += j == i;
    }
    return d;
}

/* ---- the archive, as warcio.js reads it ---------------------------------------------- */

typedef struct wrec {
    char type[16], uri[512], filename[300];
} wrec;

typedef struct archive {
    wrec *r;
    size_t n;
} archive;

/* Every record of path, read by warcio.js: it must read the whole file. */
static void warcio_read(archive *a, const char *path)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "node %s '%s' '%s' 2>&1", WARCIO_CHECK, warcio, path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char line[16384];
    while (fgets(line, sizeof line, p)) {
        char why[200];
        jobj *o = jobj_parse(line, strcspn(line, "\n"), why, sizeof why);
        if (!o)
            fail_msg("warcio.js on %s: %s", path, line);
        a->r = realloc(a->r, (a->n + 1) * sizeof *a->r);
        wrec *w = &a->r[a->n++];
        memset(w, 0, sizeof *w);
        const char *t = jobj_str(o, "type"), *u = jobj_str(o, "uri"), *f = jobj_str(o, "filename");
        snprintf(w->type, sizeof w->type, "%s", t ? t : "");
        snprintf(w->uri, sizeof w->uri, "%s", u ? u : "");
        snprintf(w->filename, sizeof w->filename, "%s", f ? f : "");
        jobj_free(o);
    }
    int st = pclose(p);
    if (st != 0)
        fail_msg("warcio.js could not read all of %s (exit %d)", path, st);
}

static size_t count_type(const archive *a, const char *type, const char *uri)
{
    size_t n = 0;
    for (size_t i = 0; i < a->n; i++)
        n += strcmp(a->r[i].type, type) == 0 && (!uri || strcmp(a->r[i].uri, uri) == 0);
    return n;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* "FILE URL OFFSET LENGTH" for each line `warcio cdx-index` gives for each file. The
 * length only for FILE.gz (its gzip member): for an uncompressed record warcio.js
 * leaves out the "\r\n\r\n" that ends it, which the index, as pywb's, counts. */
static bool gz_name(const char *f)
{
    return strlen(f) > 3 && strcmp(f + strlen(f) - 3, ".gz") == 0;
}

static char **warcio_index(char *const *files, size_t nfiles, size_t *n)
{
    char **keys = NULL;
    *n = 0;
    for (size_t i = 0; i < nfiles; i++) {
        char cmd[2048], got[8192], why[200];
        snprintf(cmd, sizeof cmd, "%s cdx-index '%s'", warcio, files[i]);
        FILE *p = popen(cmd, "r");
        assert_non_null(p);
        while (fgets(got, sizeof got, p)) {
            const char *gj = strchr(got, '{');
            jobj *g = gj ? jobj_parse(gj, strcspn(gj, "\n"), why, sizeof why) : NULL;
            if (!g || !jobj_str(g, "url") || !jobj_str(g, "offset") || !jobj_str(g, "length"))
                fail_msg("warcio cdx-index %s: %s", files[i], got);
            keys = realloc(keys, (*n + 1) * sizeof *keys);
            if (asprintf(&keys[(*n)++], "%s %s %s %s", base_name(files[i]), jobj_str(g, "url"),
                         jobj_str(g, "offset"), gz_name(files[i]) ? jobj_str(g, "length") : "-")
                < 0)
                fail_msg("out of memory");
            jobj_free(g);
        }
        assert_int_equal(pclose(p), 0);
    }
    return keys;
}

/* Every line of the --cdx index names a file of the archive and the place of a
 * response or revisit record of its URL there, as `warcio cdx-index` of that file
 * finds it; one line per such record. */
static void check_cdx(const char *cdx, char *const *files, size_t nfiles, size_t want)
{
    size_t nkeys;
    char **keys = warcio_index(files, nfiles, &nkeys);
    FILE *in = fopen(cdx, "r");
    assert_non_null(in);
    char line[8192], prev[8192] = "";
    size_t lines = 0;
    while (fgets(line, sizeof line, in)) {
        lines++;
        if (strcmp(prev, line) > 0)
            fail_msg("--cdx is not sorted: %s after %s", line, prev);
        snprintf(prev, sizeof prev, "%s", line);
        char why[200];
        const char *js = strchr(line, '{');
        jobj *o = js ? jobj_parse(js, strcspn(js, "\n"), why, sizeof why) : NULL;
        if (!o)
            fail_msg("--cdx: no CDXJ line: %s", line);
        const char *fname = jobj_str(o, "filename"), *url = jobj_str(o, "url"),
                   *off = jobj_str(o, "offset"), *len = jobj_str(o, "length");
        if (!fname || !url || !off || !len)
            fail_msg("--cdx: a line without filename, url, offset or length: %s", line);
        char key[8192];
        snprintf(key, sizeof key, "%s %s %s %s", fname, url, off, gz_name(fname) ? len : "-");
        bool found = false;
        for (size_t i = 0; i < nkeys && !found; i++)
            found = strcmp(keys[i], key) == 0;
        if (!found)
            fail_msg("--cdx: %s names no record that warcio cdx-index finds in a file of "
                     "the archive",
                     line);
        jobj_free(o);
    }
    fclose(in);
    for (size_t i = 0; i < nkeys; i++)
        free(keys[i]);
    free(keys);
    if (lines != want)
        fail_msg("--cdx has %zu lines for %zu responses and revisits", lines, want);
}

/* The archive in files (in order) against the JSONL of every run: warcio.js reads each
 * file whole, each begins with its warcinfo (naming it), every recorded URL with a
 * status has one response (its later fetches, after a kill, are revisits of it) and
 * nothing else is archived but robots.txt; runs: the warcinfo records expected in all
 * (0: rotated files, one each, and one more where a resumed run went on with a file). */
static void check_archive(char *const *files, size_t nfiles, const records *rs, const char *cdx,
                          size_t runs)
{
    if (!warcio) {
        print_message("warcio (webrecorder's warcio.js) not installed: the archive is not "
                      "read back (scripts/install-warcio.sh)\n");
        return;
    }
    archive a = {0};
    for (size_t i = 0; i < nfiles; i++) {
        size_t from = a.n;
        warcio_read(&a, files[i]);
        if (a.n == from || strcmp(a.r[from].type, "warcinfo") != 0
            || strcmp(a.r[from].filename, base_name(files[i])) != 0)
            fail_msg("%s does not begin with its warcinfo record", files[i]);
    }
    size_t infos = count_type(&a, "warcinfo", NULL);
    if (runs ? infos != runs : infos != nfiles && infos != nfiles + 1)
        fail_msg("%zu warcinfo records in %zu file(s), want %zu", infos, nfiles,
                 runs ? runs : nfiles);
    char robots[300];
    snprintf(robots, sizeof robots, "%srobots.txt", slow.url);
    for (size_t i = 0; i < rs->n; i++) {
        size_t resp = count_type(&a, "response", rs->url[i]),
               rev = count_type(&a, "revisit", rs->url[i]);
        if (rs->status[i] >= 0 && resp != 1)
            fail_msg("%s: %zu response records (and %zu revisits), want one", rs->url[i], resp,
                     rev);
    }
    for (size_t i = 0; i < a.n; i++) {
        const wrec *w = &a.r[i];
        if (strcmp(w->type, "warcinfo") == 0 || strcmp(w->uri, robots) == 0)
            continue;
        size_t j = 0;
        while (j < rs->n && strcmp(rs->url[j], w->uri) != 0)
            j++;
        if (j == rs->n)
            fail_msg("%s %s is archived but has no record", w->type, w->uri);
    }
    if (count_type(&a, "response", robots) != 1)
        fail_msg("robots.txt: %zu response records, want one (later runs: revisits)",
                 count_type(&a, "response", robots));
    size_t indexed = count_type(&a, "response", NULL) + count_type(&a, "revisit", NULL);
    if (cdx)
        check_cdx(cdx, files, nfiles, indexed);
    free(a.r);
}

/* ---- the tests ---------------------------------------------------------------------- */

/* The first run of a crawl into warc and cdx, cut short by sig once warc holds size
 * bytes: killed, or (SIGINT) ended cleanly, mid-crawl; its records in first. */
static void cut_short(const char *db, const char *out, const char *warc, const char *cdx,
                      long long size, int sig, records *first)
{
    crawl_run r;
    signal_at k = {.path = warc, .bytes = size, .sig = sig};
    run_queue(&r, db, out, &k, "--warc", warc, "--cdx", cdx, NULL);
    if (sig == SIGKILL ? r.term_signal != SIGKILL : r.exit_code != 0)
        fail_msg("%s: %s", signal_at_describe(&k), crawl_run_describe(&r));
    crawl_run_free(&r);
    records_read(first, out);
    assert_true(first->n > 0 && first->n < PAGES); /* cut short mid-crawl */
}

/* kill -9 mid-crawl, the archive's last record torn, --resume: the torn bytes are cut
 * (its -v line says how many), the archive holds both runs, whole. */
static void test_kill9_then_resume(void **state)
{
    (void)state;
    char *db = in_dir("k.db"), *out = in_dir("k.jsonl"), *warc = in_dir("k.warc.gz"),
         *cdx = in_dir("k.cdxj");
    records first;
    cut_short(db, out, warc, cdx, 40000, SIGKILL, &first);
    records_free(&first);
    crawl_run r;
    /* A write cut short by the kill: the last record torn (on a fast disk the kill
     * seldom lands inside a write, so the test makes it so). */
    long long size = file_size(warc);
    assert_true(size > 1000);
    assert_int_equal(truncate(warc, size - 100), 0);

    run_queue(&r, db, out, NULL, "-v", "--resume", "--warc", warc, "--cdx", cdx, NULL);
    if (r.exit_code != 0 || !strstr(r.err, "a torn last record cut ("))
        fail_msg("%s", crawl_run_describe(&r));
    crawl_run_free(&r);
    records all;
    records_read(&all, out);
    assert_int_equal(distinct_urls(&all), PAGES);
    char *files[] = {warc};
    check_archive(files, 1, &all, cdx, 2);
    records_free(&all);
}

/* A finished crawl whose archive lost its second half (as a kill -9 loses what the
 * writer had not written): --resume says how many responses it lacks, fetches those
 * URLs again, and the archive has one response for each recorded URL again. */
static void test_archive_lacks_refetched(void **state)
{
    (void)state;
    char *db = in_dir("l.db"), *out = in_dir("l.jsonl"), *warc = in_dir("l.warc.gz");
    crawl_run r;
    run_queue(&r, db, out, NULL, "--warc", warc, NULL);
    assert_int_equal(r.exit_code, 0);
    crawl_run_free(&r);
    long long size = file_size(warc);
    assert_int_equal(truncate(warc, size / 2), 0);
    run_queue(&r, db, out, NULL, "--resume", "--warc", warc, NULL);
    if (r.exit_code != 0 || !strstr(r.err, "response(s) that --state"))
        fail_msg("%s", crawl_run_describe(&r));
    long long lacks = atoll(strstr(r.err, " lacks ") + 7);
    assert_true(lacks > 50 && lacks < PAGES);
    crawl_run_free(&r);
    records all;
    records_read(&all, out);
    assert_int_equal(summary_int(&all, "done"), lacks); /* those, and only those */
    assert_int_equal(summary_int(&all, "crawl_done"), PAGES);
    char *files[] = {warc};
    check_archive(files, 1, &all, NULL, 2);
    records_free(&all);
}

/* SIGINT mid-crawl, --resume, and --resume of the finished crawl: the archive holds
 * each URL once; the summaries give this run's done and the whole crawl's. */
static void test_sigint_then_resume(void **state)
{
    (void)state;
    char *db = in_dir("i.db"), *out = in_dir("i.jsonl"), *warc = in_dir("i.warc"),
         *cdx = in_dir("i.cdxj");
    records first;
    cut_short(db, out, warc, cdx, 60000, SIGINT, &first);
    size_t done1 = first.n;
    crawl_run r;
    assert_int_equal(summary_int(&first, "crawl_done"), done1);
    assert_int_equal(summary_int(&first, "runs"), 1);
    records_free(&first);

    /* the rest, then nothing left: a finished crawl (done 0), but the whole's totals */
    records all;
    for (unsigned run = 2; run <= 3; run++) {
        if (run == 3)
            records_free(&all);
        run_queue(&r, db, out, NULL, "--resume", "--warc", warc, "--cdx", cdx, NULL);
        assert_int_equal(r.exit_code, 0);
        crawl_run_free(&r);
        records_read(&all, out);
        assert_int_equal(all.n, PAGES); /* SIGINT: nothing repeated */
        assert_int_equal(summary_int(&all, "done"), run == 2 ? PAGES - done1 : 0);
        assert_int_equal(summary_int(&all, "crawl_done"), PAGES);
        assert_int_equal(summary_int(&all, "runs"), run);
    }
    char *files[] = {warc};
    check_archive(files, 1, &all, cdx, 3);
    records_free(&all);
}

/* The rotated files of base (FILE-00000.warc.gz, ...), in order; how many. */
static size_t rotated(const char *base, char **files, size_t max)
{
    size_t n = 0;
    for (; n < max; n++) {
        files[n] = malloc(320);
        snprintf(files[n], 320, "%s-%05zu.warc.gz", base, n);
        if (file_size(files[n]) < 0) {
            free(files[n]);
            break;
        }
    }
    return n;
}

/* --warc-max-size 30000, killed and resumed: several files, each under the size, each
 * read whole by warcio.js with its warcinfo first; the index names each record's file. */
static void test_rotation(void **state)
{
    (void)state;
    char *db = in_dir("r.db"), *out = in_dir("r.jsonl"), *cdx = in_dir("r.cdxj");
    char base[300], warc[320], first[320];
    snprintf(base, sizeof base, "%s/r", dir);
    snprintf(warc, sizeof warc, "%s.warc.gz", base);
    snprintf(first, sizeof first, "%s-00000.warc.gz", base);
    crawl_run r;
    signal_at k = {.path = first, .bytes = 25000, .sig = SIGKILL};
    run_queue(&r, db, out, &k, "--warc", warc, "--cdx", cdx, "--warc-max-size", "30000", NULL);
    assert_int_equal(r.term_signal, SIGKILL);
    crawl_run_free(&r);
    run_queue(&r, db, out, NULL, "--resume", "--warc", warc, "--cdx", cdx, "--warc-max-size",
              "30000", NULL);
    if (r.exit_code != 0)
        fail_msg("%s", crawl_run_describe(&r));
    crawl_run_free(&r);
    assert_int_equal(file_size(warc), -1); /* the base name is never a file */
    char *files[100];
    size_t n = rotated(base, files, 100);
    assert_true(n >= 5); /* ~350 KB of records */
    for (size_t i = 0; i < n; i++)
        if (file_size(files[i]) > 30000)
            fail_msg("%s: %lld bytes, over --warc-max-size", files[i], file_size(files[i]));
    records all;
    records_read(&all, out);
    assert_int_equal(distinct_urls(&all), PAGES);
    check_archive(files, n, &all, cdx, 0);
    records_free(&all);
    for (size_t i = 0; i < n; i++)
        free(files[i]);
}

/* A --warc or --cdx that holds data is never replaced by a crawl that does not resume:
 * one line, exit 1, the file untouched. Nor is a next rotated file. */
static void test_used_refused(void **state)
{
    (void)state;
    const char *const names[] = {"--warc", "--cdx"};
    for (int i = 0; i < 2; i++) {
        char *warc = in_dir("u.warc"), *cdx = in_dir("u.cdxj"), *used = i ? cdx : warc;
        unlink(warc);
        unlink(cdx);
        FILE *f = fopen(used, "w");
        assert_non_null(f);
        fputs("an earlier crawl's\n", f);
        fclose(f);
        char *argv[] = {crawl_queue(), "-q", "--warc", warc, "--cdx", cdx, fast.url, NULL};
        crawl_run r;
        assert_int_equal(run_crawler(&r, argv, 30), 0);
        char want[400];
        snprintf(want, sizeof want, "%s '%s' holds a crawl already (19 bytes)", names[i], used);
        if (!crawl_run_one_line(&r, 1, want))
            fail_msg("%s", crawl_run_describe(&r));
        assert_int_equal(file_size(used), 19);
        crawl_run_free(&r);
    }
    /* rotated: FILE-00001 of an earlier crawl is there */
    char *next = in_dir("v-00001.warc.gz"), *warc = in_dir("v.warc.gz");
    FILE *f = fopen(next, "w");
    assert_non_null(f);
    fputs("x", f);
    fclose(f);
    char *argv[] = {crawl_queue(), "-q", "--warc", warc, "--warc-max-size", "1000", fast.url, NULL};
    crawl_run r;
    assert_int_equal(run_crawler(&r, argv, 30), 0);
    if (r.exit_code != 1 || !strstr(r.err, "holds a crawl already"))
        fail_msg("%s", crawl_run_describe(&r));
    assert_int_equal(file_size(next), 1);
    crawl_run_free(&r);
}

/* ---- --store ------------------------------------------------------------------------ */

static long long query_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    long long v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static void store_run(const char *db, const char *max_pages, crawl_run *r)
{
    char *argv[] = {crawl_queue(), "--format",        "jsonl",  "--store", (char *)db,
                    "--max-pages", (char *)max_pages, fast.url, NULL};
    assert_int_equal(run_crawler(r, argv, 60), 0);
    if (r->exit_code != 0)
        fail_msg("%s", crawl_run_describe(r));
}

/* Two runs into one store, the first of an older crawl-queue (pages without crawl_id):
 * three crawls rows, the older one from its rows' times; each run's pages and its
 * robots.txt carry its crawl_id. */
static void test_store_crawls(void **state)
{
    (void)state;
    char *path = in_dir("s.db");
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(db,
                     "CREATE TABLE pages (id INTEGER PRIMARY KEY, url TEXT NOT NULL,"
                     " final_url TEXT, next_url TEXT, status INTEGER, exception TEXT,"
                     " size INTEGER NOT NULL, content_type TEXT, encoding TEXT,"
                     " num_urls INTEGER NOT NULL, num_new_urls INTEGER NOT NULL,"
                     " headers TEXT, body BLOB, fetched_at TEXT NOT NULL);"
                     "INSERT INTO pages (url, size, num_urls, num_new_urls, fetched_at) VALUES"
                     " ('http://old/a', 1, 0, 0, '2025-01-01T00:00:00.000Z'),"
                     " ('http://old/b', 1, 0, 0, '2025-01-02T00:00:00.000Z');",
                     NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(db);
    crawl_run r1, r2;
    store_run(path, "7", &r1);
    store_run(path, "3", &r2);
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(query_int(db, "SELECT count(*) FROM crawls"), 3);
    assert_int_equal(query_int(db,
                               "SELECT count(*) FROM crawls WHERE id = 1 AND started ="
                               " '2025-01-01T00:00:00.000Z' AND finished ="
                               " '2025-01-02T00:00:00.000Z'"),
                     1);
    assert_int_equal(query_int(db, "SELECT count(*) FROM pages WHERE crawl_id = 1"), 2);
    assert_int_equal(query_int(db, "SELECT count(*) FROM pages WHERE crawl_id = 2"),
                     (long long)r1.nrecords);
    assert_int_equal(query_int(db, "SELECT count(*) FROM pages WHERE crawl_id = 3"),
                     (long long)r2.nrecords);
    assert_int_equal(query_int(db, "SELECT count(*) FROM pages WHERE crawl_id IS NULL"), 0);
    /* elapsed, a column the older store lacked: NULL in its rows, the new runs' own */
    assert_int_equal(query_int(db,
                               "SELECT count(*) FROM pages WHERE crawl_id = 1 AND"
                               " elapsed IS NULL"),
                     2);
    assert_int_equal(query_int(db,
                               "SELECT count(*) FROM pages WHERE crawl_id > 1 AND"
                               " status IS NOT NULL AND elapsed IS NULL"),
                     0);
    /* and url_normalized, likewise added: NULL in the older rows */
    assert_int_equal(query_int(db,
                               "SELECT count(*) FROM pages WHERE crawl_id = 1 AND"
                               " url_normalized IS NULL"),
                     2);
    char sql[600];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM crawls WHERE id > 1 AND finished >= started AND"
             " roots = '[\"%s\"]' AND options LIKE '--format jsonl --store %% --max-pages _'",
             fast.url);
    assert_int_equal(query_int(db, sql), 2);
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM robots WHERE url = '%srobots.txt' AND status = 404 AND"
             " crawl_id IN (2, 3)",
             fast.url);
    assert_int_equal(query_int(db, sql), 2);
    sqlite3_close(db);
    crawl_run_free(&r1);
    crawl_run_free(&r2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_used_refused),
        cmocka_unit_test(test_store_crawls),
        cmocka_unit_test(test_kill9_then_resume),
        cmocka_unit_test(test_sigint_then_resume),
        cmocka_unit_test(test_archive_lacks_refetched),
        cmocka_unit_test(test_rotation),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
