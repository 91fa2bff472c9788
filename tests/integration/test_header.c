/* test_header.c — crawl-queue --header "Name: value" (stage3_queue/downloadermw/headers.c),
 * checked where it matters: at the server. testsite logs, for every request, the
 * fields a test names (--log-header); crawl-queue runs as a process, on each transport,
 * with two --header flags, one that replaces a default of the transports (Accept) and
 * one with an empty value, over a site where every kind of request the crawl makes
 * happens: robots.txt (redirected once), a sitemap, pages, a redirect, a page robots.txt
 * forbids (no request). Every request the server saw must carry every field, once.
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

#include "jsonl.h"
#include "testsite_helper.h"

static char dir[] = "/tmp/test_header.XXXXXX";
static char log_path[300];
static testsite site;

static const char site_text[] =
    "page /robots.txt status=301 location=/rules.txt\n"
    "page /rules.txt type=text/plain\n"
    "  body=\"User-agent: *\\nDisallow: /private\\nSitemap: {base}/sitemap.xml\\n\"\n"
    "page /sitemap.xml type=application/xml\n"
    "  body <<END\n"
    "  <urlset><url><loc>{base}/from-sitemap</loc></url></urlset>\n"
    "  END\n"
    "page /\n  link /a /b /old /private\n"
    "page /a\npage /b\npage /new\npage /from-sitemap\npage /private\n"
    "page /old status=301 location=/new\n";

/* Every path the crawl asks for: the robots.txt hops, the sitemap, each page. */
static const char *const paths[] = {"/robots.txt", "/rules.txt", "/sitemap.xml", "/", "/a", "/b",
                                    "/old",        "/new",       "/from-sitemap"};
enum { NPATHS = sizeof paths / sizeof paths[0] };

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(dir))
        return -1;
    char path[300];
    snprintf(path, sizeof path, "%s/site", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(site_text, f);
    fclose(f);
    snprintf(log_path, sizeof log_path, "%s/log", dir);
    const char *const args[] = {"--log",        log_path,     "--log-header", "X-Crawl-Run",
                                "--log-header", "Accept",     "--log-header", "X-Empty",
                                "--log-header", "User-Agent", path,           NULL};
    return testsite_start(&site, args);
}

static int teardown(void **state)
{
    (void)state;
    testsite_stop(&site);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static char *bin(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", BIN_DIR, name);
    return path;
}

/* The log's lines from line `from` on (0-based), as "PATH FIELDS..." each; returns
 * how many lines the log has in all. */
static size_t read_log(size_t from, char lines[][400], size_t cap, size_t *n)
{
    FILE *f = fopen(log_path, "r");
    char line[600];
    size_t all = 0;
    *n = 0;
    while (f && fgets(line, sizeof line, f)) {
        char path[128], fields[256] = "";
        int used = 0;
        if (all++ < from || *n == cap)
            continue;
        assert_int_equal(sscanf(line, "%*s %*s %*s %127s %*s %n", path, &used), 1);
        snprintf(fields, sizeof fields, "%s", line + used);
        fields[strcspn(fields, "\n")] = '\0';
        snprintf(lines[(*n)++], sizeof lines[0], "%s %s", path, fields);
    }
    if (f)
        fclose(f);
    return all;
}

/* The crawl on one transport: exit 0; the server saw each path (robots.txt perhaps
 * twice: --sitemaps reads it too), each request with the run's X-Crawl-Run value, Accept
 * replaced, X-Empty present and empty, and the --user-agent the run gave. */
static void crawl_with_headers(const char *transport)
{
    size_t before, n;
    char lines[64][400];
    before = read_log(0, lines, 0, &n);
    char run_field[64], want_fields[128];
    snprintf(run_field, sizeof run_field, "X-Crawl-Run: %s run", transport);
    snprintf(want_fields, sizeof want_fields, "=%s%%20run =text/html = =Bot/7", transport);
    char *argv[] = {bin("crawl-queue"), "--format",   "jsonl",        "--transport",
                    (char *)transport,  "--sitemaps", "--user-agent", "Bot/7",
                    "--header",         run_field,    "--header",     "accept:  text/html ",
                    "--header",         "X-Empty:",   site.url,       NULL};
    crawl_run r;
    assert_int_equal(run_crawler(&r, argv, 60), 0);
    if (r.exit_code != 0)
        fail_msg("%s", crawl_run_describe(&r));
    assert_int_equal(r.nrecords, 7); /* 5 pages, /old's 301, /private ignored */
    crawl_run_free(&r);

    read_log(before, lines, 64, &n);
    bool ok = n >= NPATHS;
    for (size_t j = 0; j < n; j++) /* every request: the fields, once each */
        ok &= strcmp(strchr(lines[j], ' ') + 1, want_fields) == 0;
    for (size_t i = 0; i < NPATHS; i++) { /* every kind of request */
        size_t len = strlen(paths[i]), seen = 0;
        for (size_t j = 0; j < n; j++)
            seen += strncmp(lines[j], paths[i], len) == 0 && lines[j][len] == ' ';
        ok &= seen >= 1;
    }
    if (!ok) {
        for (size_t j = 0; j < n; j++)
            print_message("# logged: %s\n", lines[j]);
        fail_msg("%s: want each of the %d paths, every request with \"%s\" (the log above)",
                 transport, NPATHS, want_fields);
    }
}

static void test_header_curl(void **state)
{
    (void)state;
    crawl_with_headers("curl");
}

static void test_header_raw(void **state)
{
    (void)state;
    crawl_with_headers("raw");
}

/* A bad value: one line, exit 2, and no request at all. Stages 1 and 2 refuse the flag
 * itself, the same way. */
static void test_header_refused(void **state)
{
    (void)state;
    size_t n, before = read_log(0, NULL, 0, &n);
    struct {
        const char *prog, *value, *says;
    } cases[] = {
        {"crawl-queue", "X-A: 1\r\nX-Evil: 2", "a control character (CR, LF, ...) in the value"},
        {"crawl-queue", "X-A", "not a header field: give \"Name: value\""},
        {"crawl-queue", "Host: elsewhere.example", "the transport writes this field itself"},
        {"crawl-callbacks", "X-A: 1", "unknown option '--header' (see --help); this is"},
        {"crawl-generators", "X-A: 1", "unknown option '--header' (see --help); this is"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *argv[] = {bin(cases[i].prog), "--header", (char *)cases[i].value, site.url, NULL};
        crawl_run r;
        assert_int_equal(run_crawler(&r, argv, 30), 0);
        if (r.exit_code != 2 || !strstr(r.err, cases[i].says)
            || strchr(r.err, '\n') != r.err + r.err_len - 1)
            fail_msg("%s --header: want exit 2 and one line with \"%s\"; %s", cases[i].prog,
                     cases[i].says, crawl_run_describe(&r));
        crawl_run_free(&r);
    }
    assert_int_equal(read_log(0, NULL, 0, &n), before);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_curl),
        cmocka_unit_test(test_header_raw),
        cmocka_unit_test(test_header_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
