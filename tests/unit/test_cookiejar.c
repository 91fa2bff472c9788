/* test_cookiejar.c — the Netscape cookie file (common/web/cookiejar.h): which lines make
 * a cookie file, reading one, writing one without ever truncating the old file first;
 * --cookie's NAME=VALUE; and the proxy URLs the glue takes (curl_glue_proxy_check). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "cookiejar.h"
#include "cookiesnap.h"
#include "curlglue.h"
#include "scratch.h"
#include "selector.h"

static void test_lines(void **state)
{
    (void)state;
    static const char *const good[] = {
        "",
        "   ",
        "# Netscape HTTP Cookie File",
        "#HttpOnly_example.com\tFALSE\t/\tTRUE\t0\ta\tb",
        ".example.com\tTRUE\t/x\tFALSE\t1893456000\tname\tvalue",
        "example.com\tFALSE\t/\tFALSE\t0\tname", /* no value: curl writes such lines */
        "example.com\tFALSE\t/\tFALSE\t0\tname\t",
    };
    static const char *const bad[] = {
        "hello world",
        "example.com FALSE / FALSE 0 a b",          /* spaces, not tabs */
        "example.com\tMAYBE\t/\tFALSE\t0\ta\tb",    /* not TRUE/FALSE */
        "example.com\tFALSE\tx\tFALSE\t0\ta\tb",    /* a path without '/' */
        "example.com\tFALSE\t/\tFALSE\tsoon\ta\tb", /* an expiry that is no number */
        "example.com\tFALSE\t/\tFALSE\t0\ta\tb\tc", /* eight fields */
        "\tFALSE\t/\tFALSE\t0\ta\tb",               /* no domain */
        "{\"json\": true}",
        "example.com\tFALSE\t/\tFALSE\t0\ta\tb\x01", /* a control character */
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        if (cookiejar_line_check(good[i]))
            fail_msg("refused '%s': %s", good[i], cookiejar_line_check(good[i]));
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (!cookiejar_line_check(bad[i]))
            fail_msg("took '%s'", bad[i]);
}

static int count_add(void *ctx, const char *line)
{
    (void)line;
    ++*(int *)ctx;
    return 0;
}

static void test_read(void **state)
{
    (void)state;
    char path[300], err[512];
    int n = 0;
    assert_non_null(scratch_write(path, sizeof path, "jar",
                                  "# Netscape HTTP Cookie File\r\n\r\n"
                                  "a.example\tFALSE\t/\tFALSE\t0\tx\t1\r\n"
                                  "#HttpOnly_b.example\tFALSE\t/\tFALSE\t0\ty\t2\n"));
    assert_int_equal(cookiejar_read(path, count_add, &n, err, sizeof err), 2);
    assert_int_equal(n, 2);
    assert_int_equal(cookiejar_read(path, NULL, NULL, err, sizeof err), 2); /* check only */
    assert_non_null(scratch_write(path, sizeof path, "notes", "line one\nline two\n"));
    assert_int_equal(cookiejar_read(path, count_add, &n, err, sizeof err), -1);
    assert_non_null(strstr(err, "is not a Netscape cookie file (line 1:"));
    assert_int_equal(n, 2); /* nothing added */
    snprintf(path, sizeof path, "%s/missing", scratch_dir);
    assert_int_equal(cookiejar_read(path, count_add, &n, err, sizeof err), 0);
    assert_int_equal(cookiejar_read(scratch_dir, count_add, &n, err, sizeof err), -1);
}

static void test_write(void **state)
{
    (void)state;
    char path[300], link[300], err[512], buf[512];
    const char *lines[] = {"a.example\tFALSE\t/\tFALSE\t0\tx\t1"};
    assert_non_null(scratch_write(path, sizeof path, "out.jar", "old\n"));
    chmod(path, 0640);
    snprintf(link, sizeof link, "%s/link.jar", scratch_dir);
    assert_int_equal(symlink(path, link), 0);
    assert_int_equal(cookiejar_write(link, lines, 1, err, sizeof err), 0);
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode)); /* the link's target was replaced, not the link */
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    assert_non_null(strstr(buf, "# Netscape HTTP Cookie File\n"));
    assert_non_null(strstr(buf, "\na.example\tFALSE\t/\tFALSE\t0\tx\t1\n"));
    assert_int_equal(cookiejar_read(path, NULL, NULL, err, sizeof err), 1); /* reads back */

    /* A directory where the new file cannot be made: an error, the old file as it was */
    char dir[300];
    snprintf(dir, sizeof dir, "%s/ro", scratch_dir);
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_non_null(scratch_write(path, sizeof path, "ro/jar", "kept\n"));
    chmod(dir, 0500);
    if (access(dir, W_OK) == 0) { /* root writes anywhere: nothing to check */
        chmod(dir, 0700);
        return;
    }
    assert_int_equal(cookiejar_write(path, lines, 1, err, sizeof err), -1);
    assert_non_null(strstr(err, "not written"));
    chmod(dir, 0700);
    f = fopen(path, "r");
    assert_non_null(f);
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    assert_string_equal(buf, "kept\n");
}

static void test_pairs(void **state)
{
    (void)state;
    assert_null(cookiejar_pair_check("session=abc123"));
    assert_null(cookiejar_pair_check("a="));
    assert_non_null(cookiejar_pair_check("=value"));
    assert_non_null(cookiejar_pair_check("novalue"));
    assert_non_null(cookiejar_pair_check("a b=c"));
    assert_non_null(cookiejar_pair_check("a=b;c"));
    assert_non_null(cookiejar_pair_check("a=b c"));
    assert_non_null(cookiejar_pair_check("a=\"b\""));
    char *line = cookiejar_host_line("example.com", "a=b=c");
    assert_string_equal(line, "example.com\tFALSE\t/\tFALSE\t0\ta\tb=c");
    assert_null(cookiejar_line_check(line));
    free(line);
}

static void test_proxy_urls(void **state)
{
    (void)state;
    static const char *const good[] = {
        "http://proxy.example:3128", "http://u:p@proxy:3128/", "socks5h://127.0.0.1:1080",
        "socks5://[::1]:1080",       "socks4a://h:1",          "HTTP://proxy"};
    static const char *const bad[] = {
        "proxy.example:3128", "ftp://proxy:21", "http://p:1/path", "http://p:1/?q", "", "http://"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        if (curl_glue_proxy_check(good[i]))
            fail_msg("refused '%s': %s", good[i], curl_glue_proxy_check(good[i]));
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (!curl_glue_proxy_check(bad[i]))
            fail_msg("took '%s'", bad[i]);
    assert_null(strstr(curl_glue_proxy_check("ftp://user:secret@p:21"), "secret"));
}

static void count_line(void *ctx, const char *line)
{
    (void)line;
    ++*(int *)ctx;
}

/* The glue's cookie store takes every cookie line, a domain that starts like one of
 * libcurl's COOKIELIST commands ("ALL", "SESS") included, and lists what it holds. */
static void test_glue_store(void **state)
{
    (void)state;
    char err[256];
    selector *s = selector_new(NULL, err, sizeof err);
    assert_non_null(s);
    curl_glue *g = curl_glue_new(s, 2, NULL, err, sizeof err);
    assert_non_null(g);
    assert_int_equal(curl_glue_add_cookie(g, "a.example\tFALSE\t/\tFALSE\t0\tx\t1"), -1);
    curl_glue_use_cookies(g); /* the store exists from here */
    assert_int_equal(curl_glue_add_cookie(g, "allegro.example\tFALSE\t/\tFALSE\t0\ta\t1"), 0);
    assert_int_equal(curl_glue_add_cookie(g, "session.example\tFALSE\t/\tFALSE\t0\tb\t2"), 0);
    assert_int_equal(curl_glue_add_cookie(g, "ALL"), -1); /* a command: not a cookie */
    int n = 0;
    assert_int_equal(curl_glue_cookies(g, count_line, &n), 2);
    assert_int_equal(n, 2);
    curl_glue_free(g);
    selector_free(s);
}

/* cookiesnap.h: which jar lines a host may have set, and a refused head undone. */
static void test_snap_matches(void **state)
{
    (void)state;
    const char *name;
    size_t len;
    assert_true(cookie_snap_line_matches(".example.com\tTRUE\t/\tFALSE\t0\tn\tv", "a.example.com",
                                         &name, &len));
    assert_int_equal(len, 1);
    assert_memory_equal(name, "n", 1);
    assert_true(cookie_snap_line_matches("#HttpOnly_a.example.com\tFALSE\t/\tFALSE\t0\tn\tv",
                                         "a.example.com", &name, &len));
    assert_false(cookie_snap_line_matches("example.com\tFALSE\t/\tFALSE\t0\tn\tv", "badexample.com",
                                          &name, &len));
    assert_false(cookie_snap_line_matches("a.example.com\tFALSE\t/\tFALSE\t0\tn\tv", "example.com",
                                          &name, &len));
    assert_true(cookie_snap_expired("h\tFALSE\t/\tFALSE\t1\tn\tv", 1000));
    assert_false(cookie_snap_expired("h\tFALSE\t/\tFALSE\t0\tn\tv", 1000));
}

static void collect(void *ctx, const char *line)
{
    strcat(ctx, line);
    strcat(ctx, "\n");
}

static void test_snap_undo(void **state)
{
    (void)state;
    CURL *jar = curl_easy_init(); /* a jar of its own, as the glue's share holds one */
    assert_non_null(jar);
    curl_easy_setopt(jar, CURLOPT_COOKIEFILE, "");
    curl_easy_setopt(jar, CURLOPT_COOKIELIST, "h.example\tFALSE\t/\tFALSE\t0\tkeep\t1");
    cookie_snap snap = {0};
    cookie_snap_take(&snap, jar, "http://h.example/x");
    assert_int_equal(snap.n, 1);
    /* the head's cookies, as libcurl stores them while it arrives; another host's too */
    static const char *const head[] = {"HTTP/1.1 200 OK\r\n", "Set-Cookie: keep=2; Path=/\r\n",
                                       "set-cookie:  bad = 1\r\n"};
    for (size_t i = 0; i < sizeof head / sizeof head[0]; i++)
        cookie_snap_saw(&snap, head[i], strlen(head[i]));
    assert_int_equal(snap.nnames, 2);
    curl_easy_setopt(jar, CURLOPT_COOKIELIST, "h.example\tFALSE\t/\tFALSE\t0\tkeep\t2");
    curl_easy_setopt(jar, CURLOPT_COOKIELIST, "h.example\tFALSE\t/\tFALSE\t0\tbad\t1");
    curl_easy_setopt(jar, CURLOPT_COOKIELIST, "o.example\tFALSE\t/\tFALSE\t0\tbad\t9");
    cookie_snap_undo(&snap, jar);
    cookie_snap_clear(&snap);
    struct curl_slist *list = NULL;
    assert_int_equal(curl_easy_getinfo(jar, CURLINFO_COOKIELIST, &list), CURLE_OK);
    char all[1024] = "";
    time_t now = time(NULL);
    for (struct curl_slist *l = list; l; l = l->next)
        if (!cookie_snap_expired(l->data, now))
            collect(all, l->data);
    curl_slist_free_all(list);
    assert_non_null(strstr(all, "h.example\tFALSE\t/\tFALSE\t0\tkeep\t1\n"));
    assert_null(strstr(all, "\tkeep\t2"));
    assert_null(strstr(all, "h.example\tFALSE\t/\tFALSE\t0\tbad"));
    assert_non_null(strstr(all, "o.example\tFALSE\t/\tFALSE\t0\tbad\t9\n"));
    curl_easy_cleanup(jar);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lines),        cmocka_unit_test(test_read),
        cmocka_unit_test(test_write),        cmocka_unit_test(test_pairs),
        cmocka_unit_test(test_proxy_urls),   cmocka_unit_test(test_glue_store),
        cmocka_unit_test(test_snap_matches), cmocka_unit_test(test_snap_undo),
    };
    return cmocka_run_group_tests(tests, scratch_setup, scratch_teardown);
}
