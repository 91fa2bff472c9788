/* test_recrawl.c — crawl-queue --recrawl OLD.db (stage3_queue/downloadermw/recrawl.c,
 * docs/recrawl.md), checked at the server and in every output.
 *
 * A testsite serves version 1 of a site; crawl-queue crawls it into --store and --warc.
 * The server comes back on the same port with version 2: two pages changed (new ETag,
 * later Last-Modified, new body), one deleted, one added and linked only from a changed
 * page. crawl-queue --recrawl OLD.db crawls it again. The server's log (--log-header,
 * --log-sent) must show the stored validators on every known URL, a 304 for each
 * unchanged page and full bodies only for the changed and the new; the records, the new
 * store and the WARC's revisit records (read by warcio.js) must say the same. The site
 * comes in three kinds: ETag and Last-Modified, Last-Modified only, neither (a plain
 * refetch). Then the figure: bytes sent by the server for a recrawl of an unchanged
 * site, against its full crawl. And the refusals of a bad OLD.db.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <sqlite3.h>

#include "jsonl.h"
#include "testsite_helper.h"

static char dir[] = "/tmp/test_recrawl.XXXXXX";

typedef enum { BOTH, LAST_MODIFIED_ONLY, NEITHER } validators;

/* The pages of both versions: name, whether it changes in version 2, whether it is only
 * in version 1 or only in version 2. */
typedef struct page {
    const char *path;
    bool changes, v1_only, v2_only;
} page;

static const page pages[] = {
    {"/", false, false, false},       {"/a", false, false, false},
    {"/a/deep", false, false, false}, /* reached only through /a: the stored body's link */
    {"/b", true, false, false},       {"/c", true, false, false}, /* v2's /c links to /new */
    {"/d", false, true, false},       {"/new", false, false, true},
};
enum { NPAGES = sizeof pages / sizeof pages[0] };

static void write_page(FILE *f, const page *p, int version, validators v)
{
    int rev = p->changes ? version : 1;
    fprintf(f, "page %s\n", p->path);
    if (strcmp(p->path, "/") == 0)
        fputs("  link /a /b /c /d\n", f);
    else if (strcmp(p->path, "/a") == 0)
        fputs("  link /a/deep\n", f);
    else if (strcmp(p->path, "/c") == 0 && version == 2)
        fputs("  link /new\n", f);
    else
        fprintf(f, "  body=\"<p>%s, revision %d</p>\"\n", p->path, rev);
    if (v == BOTH)
        fprintf(f, "  header ETag: \"%s-%d\"\n", p->path, rev);
    if (v != NEITHER)
        fprintf(f, "  header Last-Modified: %s Jan 2026 10:00:00 GMT\n",
                rev == 1 ? "Thu, 01" : "Fri, 02");
}

static void write_site(const char *path, int version, validators v)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (size_t i = 0; i < NPAGES; i++)
        if (!(version == 1 && pages[i].v2_only) && !(version == 2 && pages[i].v1_only))
            write_page(f, &pages[i], version, v);
    assert_int_equal(fclose(f), 0);
}

/* testsite on port with site, logging the conditional fields and what it sent. */
static void start_site(testsite *ts, int port, const char *site, const char *log)
{
    char p[16];
    snprintf(p, sizeof p, "%d", port);
    const char *const args[] = {"--port",
                                p,
                                "--log",
                                log,
                                "--log-header",
                                "If-None-Match",
                                "--log-header",
                                "If-Modified-Since",
                                "--log-sent",
                                site,
                                NULL};
    assert_int_equal(testsite_start(ts, args), 0);
}

/* One line of the server's log: PATH, the two fields ("" when absent), STATUS, BYTES. */
typedef struct logline {
    char path[64], inm[128], ims[128];
    int status;
    long long bytes;
} logline;

/* "=v%20w" -> "v w"; "-" -> "". */
static void field_value(const char *w, char *out, size_t n)
{
    size_t k = 0;
    if (*w == '=')
        for (w++; *w && k + 1 < n; w++) {
            if (w[0] == '%' && w[1] && w[2]) {
                char hex[3] = {w[1], w[2], 0};
                out[k++] = (char)strtol(hex, NULL, 16);
                w += 2;
            } else {
                out[k++] = *w;
            }
        }
    out[k] = '\0';
}

static size_t read_log(const char *path, logline *out, size_t max)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[1024];
    size_t n = 0;
    while (fgets(line, sizeof line, f) && n < max) {
        char b[32], e[32], host[64], how[16], inm[256], ims[256], status[8];
        long long bytes;
        if (sscanf(line, "%31s %31s %63s %63s %15s %255s %255s %7s %lld", b, e, host, out[n].path,
                   how, inm, ims, status, &bytes)
            != 9)
            fail_msg("a log line of another form: %s", line);
        field_value(inm, out[n].inm, sizeof out[n].inm);
        field_value(ims, out[n].ims, sizeof out[n].ims);
        out[n].status = atoi(status);
        out[n].bytes = bytes;
        n++;
    }
    fclose(f);
    return n;
}

static const logline *log_find(const logline *l, size_t n, const char *path)
{
    const logline *found = NULL;
    for (size_t i = 0; i < n; i++)
        if (strcmp(l[i].path, path) == 0) {
            if (found)
                fail_msg("%s was requested twice", path);
            found = &l[i];
        }
    return found;
}

/* The transport of the crawls (crawl-queue's default: curl). */
static const char *transport = "curl";

static void crawl(crawl_run *r, const char *url, const char *recrawl, const char *store,
                  const char *warc)
{
    char *argv[16];
    int k = 0;
    argv[k++] = BIN_DIR "/crawl-queue";
    argv[k++] = "--format";
    argv[k++] = "jsonl";
    argv[k++] = "--ignore-robots";
    argv[k++] = "--transport";
    argv[k++] = (char *)transport;
    if (recrawl) {
        argv[k++] = "--recrawl";
        argv[k++] = (char *)recrawl;
    }
    argv[k++] = "--store";
    argv[k++] = (char *)store;
    if (warc) {
        argv[k++] = "--warc";
        argv[k++] = (char *)warc;
    }
    argv[k++] = (char *)url;
    argv[k] = NULL;
    assert_int_equal(run_crawler(r, argv, 60), 0);
    if (r->exit_code != 0 || r->parse_error)
        fail_msg("crawl-queue: %s", crawl_run_describe(r));
}

/* The stored validator of a page in version 1, as the site file gives it. */
static void stored_etag(const page *p, char *out, size_t n)
{
    snprintf(out, n, "\"%s-1\"", p->path);
}

/* Every row of db's pages for url: status, body; the last one. */
static int db_row(const char *db_path, const char *url, char **body, size_t *len)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT status, body, count(*) OVER () FROM pages"
                                        " WHERE url = ?1",
                                        -1, &st, NULL),
                     SQLITE_OK);
    sqlite3_bind_text(st, 1, url, -1, SQLITE_STATIC);
    int status = -2;
    if (sqlite3_step(st) == SQLITE_ROW) {
        assert_int_equal(sqlite3_column_int(st, 2), 1); /* one row per URL */
        status = sqlite3_column_type(st, 0) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 0);
        *len = (size_t)sqlite3_column_bytes(st, 1);
        const void *b = sqlite3_column_blob(st, 1);
        *body = malloc(*len + 1);
        memcpy(*body, b ? b : "", *len);
        (*body)[*len] = '\0';
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return status;
}

/* warcio.js's reading of an archive: each record's JSON line (warcio_check.mjs), or
 * NULL when warcio is not installed (said). */
static FILE *warcio_open(const char *warc)
{
    const char *warcio = getenv("WARCIO");
    if (!warcio || !*warcio) {
        print_message("warcio (webrecorder's warcio.js) not installed: the archive is not "
                      "checked (install it: scripts/install-warcio.sh)\n");
        return NULL;
    }
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "node %s/warcio_check.mjs '%s' '%s' 2>&1", SCENARIOS_DIR, warcio,
             warc);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    return p;
}

static jobj *warcio_next(FILE *p)
{
    char line[4096];
    if (!fgets(line, sizeof line, p))
        return NULL;
    char err[256];
    jobj *o = jobj_parse(line, strlen(line), err, sizeof err);
    if (!o)
        fail_msg("warcio.js: %s", line);
    return o;
}

/* The WARC-Date of the response record for uri in the first crawl's archive (malloc'd),
 * or NULL. */
static char *capture_date(const char *old_warc, const char *uri)
{
    FILE *p = warcio_open(old_warc);
    char *date = NULL;
    for (jobj *o; (o = warcio_next(p)); jobj_free(o))
        if (strcmp(jobj_str(o, "type"), "response") == 0 && strcmp(jobj_str(o, "uri"), uri) == 0)
            date = strdup(jobj_str(o, "date"));
    assert_int_equal(pclose(p), 0);
    return date;
}

static bool unchanged_path(const char *path)
{
    for (size_t i = 0; i < NPAGES; i++)
        if (strcmp(pages[i].path, path) == 0)
            return !pages[i].changes && !pages[i].v1_only && !pages[i].v2_only;
    return false;
}

/* warcio.js reads the archive: a revisit record (server-not-modified, referring to the
 * URI and the WARC-Date of its earlier capture, in old_warc) for each unchanged page, a
 * response for the others. Skipped, said, when warcio is not installed. */
static void check_warc(const char *warc, const char *old_warc, const char *base, bool conditional)
{
    FILE *p = warcio_open(warc);
    if (!p)
        return;
    int revisits = 0, responses = 0;
    for (jobj *o; (o = warcio_next(p)); jobj_free(o)) {
        const char *type = jobj_str(o, "type"), *uri = jobj_str(o, "uri");
        if (strcmp(type, "response") == 0)
            responses++;
        if (strcmp(type, "revisit") != 0)
            continue;
        revisits++;
        if (!unchanged_path(uri + strlen(base) - 1))
            fail_msg("a revisit record for %s, which changed", uri);
        assert_string_equal(jobj_str(o, "profile"),
                            "http://netpreserve.org/warc/1.1/revisit/server-not-modified");
        assert_string_equal(jobj_str(o, "refers_to_uri"), uri);
        assert_int_equal(jobj_int(o, "status", 0), 304);
        assert_true(jobj_is_null(o, "payload_digest"));
        char *then = capture_date(old_warc, uri);
        if (!then || strcmp(then, jobj_str(o, "refers_to_date")) != 0)
            fail_msg("%s refers to %s; its earlier capture is of %s", uri,
                     jobj_str(o, "refers_to_date"), then ? then : "(none)");
        free(then);
    }
    assert_int_equal(pclose(p), 0);
    assert_int_equal(revisits, conditional ? 3 : 0);
    assert_int_equal(responses, conditional ? 4 : 7);
}

static void recrawl_case(validators v)
{
    char site1[300], site2[300], log1[300], log2[300], old_db[300], new_db[300], warc[300],
        old_warc[300];
    static int run;
    run++; /* each case its own files */
    snprintf(site1, sizeof site1, "%s/v1-%d.site", dir, run);
    snprintf(site2, sizeof site2, "%s/v2-%d.site", dir, run);
    snprintf(log1, sizeof log1, "%s/log1-%d", dir, run);
    snprintf(log2, sizeof log2, "%s/log2-%d", dir, run);
    snprintf(old_db, sizeof old_db, "%s/old-%d.db", dir, run);
    snprintf(new_db, sizeof new_db, "%s/new-%d.db", dir, run);
    snprintf(warc, sizeof warc, "%s/new-%d.warc", dir, run);
    snprintf(old_warc, sizeof old_warc, "%s/old-%d.warc.gz", dir, run);
    write_site(site1, 1, v);
    write_site(site2, 2, v);
    int port = testsite_free_port();
    assert_true(port > 0);

    testsite ts;
    start_site(&ts, port, site1, log1);
    crawl_run r1;
    crawl(&r1, ts.url, NULL, old_db, old_warc);
    assert_int_equal(r1.nrecords, 6);
    crawl_run_free(&r1);
    testsite_stop(&ts);

    start_site(&ts, port, site2, log2); /* the same URLs, the site changed */
    char base[128];
    snprintf(base, sizeof base, "%s", ts.url);
    crawl_run r2;
    crawl(&r2, ts.url, old_db, new_db, warc);
    testsite_stop(&ts);

    logline l[32];
    size_t n = read_log(log2, l, 32);
    assert_int_equal(n, NPAGES);
    bool conditional = v != NEITHER;
    for (size_t i = 0; i < NPAGES; i++) {
        const page *p = &pages[i];
        const logline *e = log_find(l, n, p->path);
        if (!e)
            fail_msg("%s was not requested", p->path);
        /* at the server: the stored validators on every known URL, none on the new */
        char etag[80];
        stored_etag(p, etag, sizeof etag);
        assert_string_equal(e->inm, p->v2_only || v != BOTH ? "" : etag);
        assert_string_equal(e->ims,
                            p->v2_only || v == NEITHER ? "" : "Thu, 01 Jan 2026 10:00:00 GMT");
        bool unchanged = !p->changes && !p->v1_only && !p->v2_only;
        int want = p->v1_only ? 404 : unchanged && conditional ? 304 : 200;
        if (e->status != want)
            fail_msg("%s: %d, want %d", p->path, e->status, want);
        if (want == 304)
            assert_true(e->bytes < 200); /* a head: no body */

        /* the record */
        char url[256];
        snprintf(url, sizeof url, "%s%s", base, p->path + 1);
        const jobj *rec = crawl_run_find(&r2, url);
        if (!rec)
            fail_msg("no record for %s: %s", url, crawl_run_describe(&r2));
        assert_int_equal(jobj_int(rec, "status", -1), want);
        const jv *nm = jobj_get(rec, "not_modified");
        if (want == 304) {
            assert_true(nm && nm->type == JV_BOOL && nm->b);
            assert_int_equal(jobj_int(rec, "size", -1), 0);
            assert_string_equal(jobj_str(rec, "content_type"), "text/html");
        } else {
            assert_null(nm);
        }

        /* the new store: the unchanged page's body is the stored one, copied */
        char *old_body = NULL, *new_body = NULL;
        size_t old_len = 0, new_len = 0;
        assert_int_equal(db_row(new_db, url, &new_body, &new_len), want);
        if (!p->v2_only) {
            assert_int_equal(db_row(old_db, url, &old_body, &old_len), 200);
            if (unchanged) {
                assert_int_equal(new_len, old_len);
                assert_memory_equal(new_body, old_body, old_len);
            } else if (p->changes) {
                assert_non_null(strstr(new_body, "revision 2") ? new_body
                                                               : strstr(new_body, "/new"));
            }
        }
        free(old_body);
        free(new_body);
    }
    assert_int_equal(r2.nrecords, NPAGES);
    crawl_run_free(&r2);
    check_warc(warc, old_warc, base, conditional);
}

static void test_recrawl_etag_and_last_modified(void **state)
{
    (void)state;
    recrawl_case(BOTH);
}

/* The raw transport hands the engine the same heads and bytes. */
static void test_recrawl_raw_transport(void **state)
{
    (void)state;
    transport = "raw";
    recrawl_case(BOTH);
    transport = "curl";
}

static void test_recrawl_last_modified_only(void **state)
{
    (void)state;
    recrawl_case(LAST_MODIFIED_ONLY);
}

static void test_recrawl_neither(void **state)
{
    (void)state;
    recrawl_case(NEITHER);
}

/* The figure (docs/recrawl.md): a generated site of 200 pages of about 20 KB, each with
 * an ETag and a Last-Modified, crawled in full, then recrawled unchanged — and the
 * recrawl of the recrawl's store, which holds 304 rows. The server's log sums the bytes
 * it sent (heads and bodies): a recrawl sends at most 5 % of a full crawl's, and
 * records the same URLs. */
static long long sent_bytes(const char *log, size_t *requests)
{
    logline l[256];
    size_t n = read_log(log, l, 256);
    long long sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += l[i].bytes;
    *requests = n;
    return sum;
}

static char *sorted_urls(const crawl_run *r)
{
    size_t len = 0;
    for (size_t i = 0; i < r->nrecords; i++)
        len += strlen(jobj_str(r->records[i], "url")) + 1;
    char *s = calloc(1, len + 1);
    for (size_t i = 0; i < r->nrecords; i++) { /* records come sorted by url */
        strcat(s, jobj_str(r->records[i], "url"));
        strcat(s, "\n");
    }
    return s;
}

static void test_recrawl_bytes(void **state)
{
    (void)state;
    char log[3][300], db[3][300];
    int port = testsite_free_port();
    assert_true(port > 0);
    char *urls[3];
    long long bytes[3];
    size_t requests[3];
    for (int i = 0; i < 3; i++) {
        snprintf(log[i], sizeof log[i], "%s/bytes-log%d", dir, i);
        snprintf(db[i], sizeof db[i], "%s/bytes%d.db", dir, i);
        char p[16];
        snprintf(p, sizeof p, "%d", port);
        const char *const args[] = {"--port",
                                    p,
                                    "--log",
                                    log[i],
                                    "--log-header",
                                    "If-None-Match",
                                    "--log-header",
                                    "If-Modified-Since",
                                    "--log-sent",
                                    "--generate",
                                    "pages=200,links=10,size=20000,validators=1",
                                    NULL};
        testsite ts;
        assert_int_equal(testsite_start(&ts, args), 0);
        crawl_run r;
        crawl(&r, ts.url, i ? db[i - 1] : NULL, db[i], NULL);
        testsite_stop(&ts);
        assert_int_equal(r.nrecords, 200);
        for (size_t k = 0; k < r.nrecords; k++)
            assert_int_equal(jobj_int(r.records[k], "status", -1), i ? 304 : 200);
        urls[i] = sorted_urls(&r);
        crawl_run_free(&r);
        bytes[i] = sent_bytes(log[i], &requests[i]);
        assert_int_equal(requests[i], 200);
    }
    for (int i = 1; i < 3; i++) {
        assert_string_equal(urls[i], urls[0]); /* the same set of URLs recorded */
        print_message("recrawl %d of an unchanged site (200 pages of ~20 KB): %lld bytes "
                      "sent, %.2f %% of the full crawl's %lld\n",
                      i, bytes[i], 100.0 * (double)bytes[i] / (double)bytes[0], bytes[0]);
        assert_true(bytes[i] * 20 <= bytes[0]); /* <= 5 % */
    }
    for (int i = 0; i < 3; i++)
        free(urls[i]);
}

/* An OLD.db that is not one: one line, exit 2, before any request. */
static void expect_refusal(const char *old, const char *store, const char *text)
{
    char *argv[] = {BIN_DIR "/crawl-queue",
                    "--recrawl",
                    (char *)old,
                    "--store",
                    (char *)store,
                    "--format",
                    "jsonl",
                    "http://127.0.0.1:1/",
                    NULL};
    crawl_run r;
    assert_int_equal(run_crawler(&r, argv, 30), 0);
    if (!crawl_run_one_line(&r, 2, text))
        fail_msg("want exit 2 and one line with \"%s\": %s", text, crawl_run_describe(&r));
    crawl_run_free(&r);
}

static void test_recrawl_refusals(void **state)
{
    (void)state;
    char text[300], empty_db[300], other_db[300], store[300];
    snprintf(text, sizeof text, "%s/not-a-db", dir);
    snprintf(empty_db, sizeof empty_db, "%s/other.db", dir);
    snprintf(other_db, sizeof other_db, "%s/store-%d.db", dir, 9);
    snprintf(store, sizeof store, "%s/refused.db", dir);
    FILE *f = fopen(text, "w");
    assert_non_null(f);
    fputs("page /\n", f);
    fclose(f);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(empty_db, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "CREATE TABLE pages (url TEXT)", NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    expect_refusal("/nonexistent/old.db", store, "--recrawl '/nonexistent/old.db': No such file");
    expect_refusal(text, store, "not a database that --store wrote");
    expect_refusal(empty_db, store, "not a database that --store wrote");
    /* a store --recrawl reads cannot be the one this crawl writes */
    assert_int_equal(sqlite3_open(other_db, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
                                  "CREATE TABLE pages (id INTEGER PRIMARY KEY, url TEXT,"
                                  " status INTEGER, exception TEXT, headers TEXT, body BLOB,"
                                  " fetched_at TEXT)",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    expect_refusal(other_db, other_db, "give --store another file");
    char out[300];
    snprintf(out, sizeof out, "%s/refused.jsonl", dir);
    char *argv[] = {BIN_DIR "/crawl-queue",
                    "--recrawl",
                    other_db,
                    "--state",
                    other_db,
                    "--format",
                    "jsonl",
                    "--output",
                    out,
                    "http://127.0.0.1:1/",
                    NULL};
    crawl_run r;
    assert_int_equal(run_crawler(&r, argv, 30), 0);
    if (!crawl_run_one_line(&r, 2, "give --state another file"))
        fail_msg("--recrawl X --state X: %s", crawl_run_describe(&r));
    crawl_run_free(&r);
    assert_int_equal(access(out, F_OK), -1);
    assert_int_equal(access(store, F_OK), -1); /* nothing was written */
}

/* ---- a 304 that answers no condition ---- */

static testsite ts; /* test_304_without_condition's */

/* crawl-queue over transport with the extra args (NULL-terminated, at most 6), --store
 * store: two records (/ and /nm). */
static void crawl_with(crawl_run *r, const char *transport_, const char *store, const char *root,
                       const char *const *extra)
{
    char *argv[20];
    int k = 0;
    argv[k++] = BIN_DIR "/crawl-queue";
    argv[k++] = "--format";
    argv[k++] = "jsonl";
    argv[k++] = "--ignore-robots";
    argv[k++] = "--transport";
    argv[k++] = (char *)transport_;
    argv[k++] = "--store";
    argv[k++] = (char *)store;
    for (int i = 0; extra[i] && i < 6; i++)
        argv[k++] = (char *)extra[i];
    argv[k++] = (char *)root;
    argv[k] = NULL;
    assert_int_equal(run_crawler(r, argv, 60), 0);
    if (r->exit_code != 0 || r->parse_error || r->nrecords != 2)
        fail_msg("crawl-queue: %s", crawl_run_describe(r));
}

/* The record of base + path, status want, and its exception (NULL: none). */
static void expect_record(const crawl_run *r, const char *base, const char *path, int want,
                          const char *exception, const char *what)
{
    char url[256];
    snprintf(url, sizeof url, "%s%s", base, path + 1);
    const jobj *rec = crawl_run_find(r, url);
    if (!rec)
        fail_msg("%s: no record for %s: %s", what, url, crawl_run_describe(r));
    if (jobj_int(rec, "status", -1) != want)
        fail_msg("%s: %s: status %lld, want %d", what, url, jobj_int(rec, "status", -1), want);
    const char *got = jobj_str(rec, "exception");
    if (exception ? !got || strcmp(got, exception) != 0 : got != NULL)
        fail_msg("%s: %s: exception '%s', want '%s'", what, url, got ? got : "(none)",
                 exception ? exception : "(none)");
}

/* #34: a 304 to a request that sent neither If-None-Match nor If-Modified-Since (no
 * --recrawl; or --recrawl, a URL it has no page of) is an exception record, on both
 * transports and without the engine (--chapter); a 304 to the user's own condition
 * (--header) and to --recrawl's stays a 304 without one. */
static void test_304_without_condition(void **state)
{
    (void)state;
    static const char unasked[] = "304 Not Modified to a request without a condition";
    char site[300];
    snprintf(site, sizeof site, "%s/unasked.site", dir);
    FILE *f = fopen(site, "w");
    assert_non_null(f);
    fputs("page /\n  link /nm\n  header ETag: \"root-1\"\n"
          "page /nm status=304\n  header ETag: \"nm-1\"\n",
          f);
    assert_int_equal(fclose(f), 0);
    const char *const args[] = {site, NULL};
    assert_int_equal(testsite_start(&ts, args), 0); /* stopped by teardown if this fails */
    const char *const transports[] = {"curl", "raw"};
    for (int t = 0; t < 2; t++) {
        char old[300], recrawled[300], asked[300], chapter[300], what[64];
        snprintf(old, sizeof old, "%s/unasked-%d.db", dir, t);
        snprintf(recrawled, sizeof recrawled, "%s/unasked-re-%d.db", dir, t);
        snprintf(asked, sizeof asked, "%s/unasked-asked-%d.db", dir, t);
        snprintf(chapter, sizeof chapter, "%s/unasked-chapter-%d.db", dir, t);
        crawl_run r;
        const char *const none[] = {NULL};
        crawl_with(&r, transports[t], old, ts.url, none);
        snprintf(what, sizeof what, "%s, a first crawl", transports[t]);
        expect_record(&r, ts.url, "/", 200, NULL, what);
        expect_record(&r, ts.url, "/nm", 304, unasked, what);
        crawl_run_free(&r);

        /* --recrawl: / is asked (and unchanged), /nm has no page to ask with */
        const char *const re[] = {"--recrawl", old, NULL};
        crawl_with(&r, transports[t], recrawled, ts.url, re);
        snprintf(what, sizeof what, "%s, --recrawl", transports[t]);
        expect_record(&r, ts.url, "/", 304, NULL, what);
        expect_record(&r, ts.url, "/nm", 304, unasked, what);
        crawl_run_free(&r);

        /* the user's own condition: the 304 answers it */
        const char *const hdr[] = {"--header", "If-None-Match: \"elsewhere\"", NULL};
        crawl_with(&r, transports[t], asked, ts.url, hdr);
        snprintf(what, sizeof what, "%s, --header If-None-Match", transports[t]);
        expect_record(&r, ts.url, "/", 200, NULL, what);
        expect_record(&r, ts.url, "/nm", 304, NULL, what);
        crawl_run_free(&r);

        /* the chapter's crawler: no engine */
        const char *const ch[] = {"--chapter", NULL};
        crawl_with(&r, transports[t], chapter, ts.url, ch);
        snprintf(what, sizeof what, "%s, --chapter", transports[t]);
        expect_record(&r, ts.url, "/nm", 304, unasked, what);
        crawl_run_free(&r);
    }
    testsite_stop(&ts);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    if (ts.pid)
        testsite_stop(&ts);
    return test_remove_tree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recrawl_etag_and_last_modified),
        cmocka_unit_test(test_recrawl_raw_transport),
        cmocka_unit_test(test_recrawl_last_modified_only),
        cmocka_unit_test(test_recrawl_neither),
        cmocka_unit_test(test_recrawl_bytes),
        cmocka_unit_test(test_recrawl_refusals),
        cmocka_unit_test(test_304_without_condition),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
