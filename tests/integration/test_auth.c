/* test_auth.c — crawl-queue --user and --netrc (#37 item 7; docs/cookies.md), checked at
 * the servers: the root's server (127.0.0.2) has pages behind HTTP basic auth
 * (auth=USER:PASSWORD: a 401 without it), a redirect to another server on 127.0.0.2
 * (another port: another origin, which the host policy lets the crawl follow) and an
 * image on a third host, 127.0.0.3 (fetched with --requisites); each logs every
 * request's Authorization field (--log-header Authorization).
 *
 * - without a login the pages are 401s; with --user (or --netrc and a ~/.netrc of the
 *   test's own) they are 200s, and every request to the root's server carried the
 *   credentials;
 * - none went to the redirect's target nor to the other host (nor a .netrc default
 *   entry): the credentials go to the roots' origins only;
 * - the password is never shown: not in the records, -vv's stderr, --trace-events,
 *   --store, nor --warc (its request records say "Authorization: [redacted]"), nor in
 *   the process's command line while it runs (ps);
 * - bad usage never quotes it; the raw transport refuses both flags;
 * - digest (testsite's digest=): the record is the response after the challenge (200,
 *   its links followed, the WARC holds it), a wrong password a 401;
 * - a form login by a spider (examples/login.lua: download{method="POST", form=...},
 *   --cookies, follow{dont_filter=true}): the members' items, none with a wrong
 *   password; the form's encoding at the server and the request table's errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#include <cmocka.h>

#include "jsonl.h"
#include "scratch.h"
#include "testsite_helper.h"

static char *const dir = scratch_dir;
enum { ROOT, OTHER_PORT, OTHER_HOST, NHOSTS };
static testsite hosts[NHOSTS]; /* on 127.0.0.2, 127.0.0.2 and 127.0.0.3 */

#define PASSWORD "s3cr3t-pw"
/* base64 of "alice:s3cr3t-pw", as basic auth sends it */
#define BASIC    "YWxpY2U6czNjcjN0LXB3"

/* Server k: a testsite on bind serving text, its log (Authorization) in dir/log.k. */
static void serve(int k, const char *bind, const char *text)
{
    char log[300], file[300], name[16];
    snprintf(log, sizeof log, "%s/log.%d", dir, k);
    snprintf(name, sizeof name, "site.%d", k);
    unlink(log);
    assert_non_null(scratch_write(file, sizeof file, name, text));
    const char *const args[] = {"--bind",        bind, "--log", log, "--log-header",
                                "Authorization", file, NULL};
    assert_int_equal(testsite_start(&hosts[k], args), 0);
}

static int stop_hosts(void **state)
{
    (void)state;
    for (int k = 0; k < NHOSTS; k++)
        testsite_stop(&hosts[k]);
    return 0;
}

/* The other servers: a landing page, an image. The root's: / and /private behind
 * basic auth, /away redirecting to the other port's /landing, / showing the other
 * host's image; /private answers after 1.5 s (time to look at the process). */
static void serve_all(void)
{
    static const char other[] = "page /robots.txt type=text/plain body=\"User-agent: *\\n\"\n"
                                "page /landing\n"
                                "page /pic.png type=image/png body=PNG\n";
    serve(OTHER_PORT, "127.0.0.2", other);
    serve(OTHER_HOST, "127.0.0.3", other);
    char site[1024];
    snprintf(site, sizeof site,
             "page /robots.txt type=text/plain body=\"User-agent: *\\n\"\n"
             "page / auth=alice:" PASSWORD "\n"
             " body <<END\n"
             "<html><body><a href=\"/private\">p</a> <a href=\"/away\">a</a>"
             "<img src=\"%spic.png\"></body></html>\n"
             "END\n"
             "page /private auth=alice:" PASSWORD " delay=1500\n"
             "page /away status=302 location=%slanding\n",
             hosts[OTHER_HOST].url, hosts[OTHER_PORT].url);
    serve(ROOT, "127.0.0.2", site);
}

/* The Authorization fields host k logged: "PATH VALUE" a line ("-": none). */
static char *logged(int k)
{
    char log[300], line[700];
    static char out[8192];
    snprintf(log, sizeof log, "%s/log.%d", dir, k);
    out[0] = '\0';
    FILE *f = fopen(log, "r");
    while (f && fgets(line, sizeof line, f)) {
        char path[100], how[32], auth[400];
        if (sscanf(line, "%*s %*s %*s %99s %31s %399s", path, how, auth) == 3
            && strlen(out) + strlen(path) + strlen(auth) + 3 < sizeof out) {
            strcat(out, path);
            strcat(out, " ");
            strcat(out, auth);
            strcat(out, "\n");
        }
    }
    if (f)
        fclose(f);
    return out;
}

static void crawl(crawl_run *r, const char *first, ...)
{
    char *argv[40];
    int n = 0;
    argv[n++] = BIN_DIR "/crawl-queue";
    argv[n++] = "--format";
    argv[n++] = "jsonl";
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a && n < 39; a = va_arg(ap, const char *))
        argv[n++] = (char *)a;
    va_end(ap);
    argv[n] = NULL;
    assert_int_equal(run_crawler(r, argv, 60), 0);
}

static int status_of(const crawl_run *r, int k, const char *path)
{
    char url[300];
    snprintf(url, sizeof url, "%.200s%s", hosts[k].url, path + 1);
    const jobj *rec = crawl_run_find(r, url);
    return rec ? (int)jobj_int(rec, "status", -1) : -1;
}

/* Whether the file at path holds s (bytes, anywhere). */
static bool file_has(const char *path, const char *s)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    return memmem(buf, n, s, strlen(s)) != NULL;
}

/* Whether server k logged line (a path and its Authorization, "-" or "=..."), waited
 * for: a server logs a request once it has ended (5 s at most). */
static bool logged_wait(int k, const char *line)
{
    for (int i = 0; i < 100 && !strstr(logged(k), line); i++)
        usleep(50 * 1000);
    return strstr(logged(k), line) != NULL;
}

/* Each request to the root's server carried the credentials; none to the others. */
static void check_servers(void)
{
    if (!logged_wait(ROOT, "/ =Basic%20" BASIC "\n")
        || !logged_wait(ROOT, "/private =Basic%20" BASIC "\n"))
        fail_msg("the root's server did not get the credentials:\n%s", logged(ROOT));
    if (!logged_wait(OTHER_PORT, "/landing -\n") || strstr(logged(OTHER_PORT), "Basic"))
        fail_msg("the redirect's target got credentials, or no request:\n%s", logged(OTHER_PORT));
    if (!logged_wait(OTHER_HOST, "/pic.png -\n") || strstr(logged(OTHER_HOST), "Basic"))
        fail_msg("the other host got credentials, or no request:\n%s", logged(OTHER_HOST));
}

static void test_no_login(void **state)
{
    (void)state;
    serve_all();
    crawl_run r;
    crawl(&r, "-q", hosts[ROOT].url, NULL);
    assert_int_equal(r.exit_code, 0);
    assert_int_equal(status_of(&r, ROOT, "/"), 401);
    crawl_run_free(&r);
    stop_hosts(NULL);
}

static bool logged_wait(int k, const char *line);

/* /proc/PID/cmdline of the running crawl, once its first page is fetched (its command
 * line read long before; /private, which answers after 1.5 s, still to come): the
 * password must be gone from it. */
static void look_at_cmdline(pid_t pid, void *ctx)
{
    (void)logged_wait(ROOT, "/ =");
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(ctx, 1, 4095, f) : 0;
    if (f)
        fclose(f);
    for (size_t i = 0; i < n; i++)
        if (((char *)ctx)[i] == '\0')
            ((char *)ctx)[i] = ' ';
    ((char *)ctx)[n] = '\0';
}

static void test_user(void **state)
{
    (void)state;
    serve_all();
    char trace[300], store[300], warc[300];
    snprintf(trace, sizeof trace, "%s/auth-trace.json", dir);
    snprintf(store, sizeof store, "%s/auth.db", dir);
    snprintf(warc, sizeof warc, "%s/auth.warc", dir);
    unlink(trace), unlink(store), unlink(warc);
    char *argv[] = {
        BIN_DIR "/crawl-queue", "--format", "jsonl",   "-v",  "-v",     "--user", "alice:" PASSWORD,
        "--trace-events",       trace,      "--store", store, "--warc", warc,     "--requisites",
        hosts[ROOT].url,        NULL};
    char cmdline[4096] = "";
    crawl_run r;
    assert_int_equal(run_crawler_at(&r, argv, 60, 0.05, look_at_cmdline, cmdline), 0);
    if (r.exit_code != 0)
        fail_msg("%s", crawl_run_describe(&r));
    assert_int_equal(status_of(&r, ROOT, "/"), 200);
    assert_int_equal(status_of(&r, ROOT, "/private"), 200);
    assert_int_equal(status_of(&r, OTHER_PORT, "/landing"), 200);
    assert_int_equal(status_of(&r, OTHER_HOST, "/pic.png"), 200);
    check_servers();
    /* the first request to the origin asked without credentials (basic or digest: the
     * 401 says which); once it said basic, basic went with each request at once */
    if (!strstr(logged(ROOT), "/ -\n") || strstr(logged(ROOT), "/private -\n"))
        fail_msg("not one 401 first, then basic at once:\n%s", logged(ROOT));
    /* never shown */
    const char *const secrets[] = {PASSWORD, BASIC};
    for (size_t i = 0; i < 2; i++) {
        if (strstr(r.out, secrets[i]) || strstr(r.err, secrets[i]))
            fail_msg("the password in the output or on stderr: %s", crawl_run_describe(&r));
        assert_false(file_has(trace, secrets[i]));
        assert_false(file_has(store, secrets[i]));
        assert_false(file_has(warc, secrets[i]));
    }
    assert_true(file_has(warc, "Authorization: [redacted]\r\n"));
    if (!strstr(cmdline, "--user alice:") || strstr(cmdline, PASSWORD))
        fail_msg("the command line while it ran: %s", cmdline);
    crawl_run_free(&r);
    stop_hosts(NULL);
}

static void test_netrc(void **state)
{
    (void)state;
    serve_all();
    char *was = scratch_netrc_home("machine 127.0.0.2 login alice password " PASSWORD
                                   "\ndefault login mallory password elsewhere\n");
    crawl_run r;
    crawl(&r, "-q", "--netrc", "--requisites", hosts[ROOT].url, NULL);
    scratch_home_restore(was);
    if (r.exit_code != 0)
        fail_msg("%s", crawl_run_describe(&r));
    assert_int_equal(status_of(&r, ROOT, "/"), 200);
    assert_int_equal(status_of(&r, ROOT, "/private"), 200);
    check_servers();
    crawl_run_free(&r);
    stop_hosts(NULL);
}

/* Digest (RFC 7616): / and /members behind it on the root's server; libcurl answers each
 * 401's challenge in the same transfer, and the record is the last response's. */
static void serve_digest(void)
{
    serve(ROOT, "127.0.0.2",
          "page /robots.txt type=text/plain body=\"User-agent: *\\n\"\n"
          "page / digest=alice:" PASSWORD "\n"
          "  link /members\n"
          "page /members digest=alice:" PASSWORD "\n"
          "  link /members/list\n"
          "page /members/list digest=alice:" PASSWORD " status=404\n");
}

static void test_digest(void **state)
{
    (void)state;
    serve_digest();
    char warc[300];
    snprintf(warc, sizeof warc, "%s/digest.warc", dir);
    unlink(warc);
    crawl_run r;
    crawl(&r, "-v", "-v", "--user", "alice:" PASSWORD, "--warc", warc, hosts[ROOT].url, NULL);
    if (r.exit_code != 0)
        fail_msg("%s", crawl_run_describe(&r));
    /* the final responses, and their bodies: / gave /members, /members gave /list */
    assert_int_equal(status_of(&r, ROOT, "/"), 200);
    assert_int_equal(status_of(&r, ROOT, "/members"), 200);
    assert_int_equal(status_of(&r, ROOT, "/members/list"), 404);
    if (!logged_wait(ROOT, "/ -\n") || !logged_wait(ROOT, "/ =Digest%20username")
        || !logged_wait(ROOT, "/members =Digest%20username"))
        fail_msg("no digest answers at the server:\n%s", logged(ROOT));
    if (strstr(r.out, PASSWORD) || strstr(r.err, PASSWORD) || file_has(warc, PASSWORD))
        fail_msg("the password in the output or on stderr: %s", crawl_run_describe(&r));
    /* the archive holds the answered request and the 200, not the 401 */
    assert_true(file_has(warc, "Authorization: [redacted]\r\n"));
    assert_true(file_has(warc, "HTTP/1.1 200 OK\r\n"));
    assert_false(file_has(warc, "HTTP/1.1 401"));
    crawl_run_free(&r);

    /* a wrong password: libcurl answers once, the server says 401 again, the record
     * says 401, with the 401's body (no links followed) */
    crawl(&r, "--user", "alice:wrong-pw", hosts[ROOT].url, NULL);
    if (r.exit_code != 0)
        fail_msg("%s", crawl_run_describe(&r));
    assert_int_equal(status_of(&r, ROOT, "/"), 401);
    assert_int_equal(status_of(&r, ROOT, "/members"), -1);
    assert_null(strstr(r.out, "wrong-pw"));
    assert_null(strstr(r.err, "wrong-pw"));
    crawl_run_free(&r);
    stop_hosts(NULL);
}

/* A login form (docs/spiders.md, examples/login.lua): / and the members' pages need the
 * session cookie (without it, a 302 to /login); /login shows the form, and a POST of
 * the right fields sets the cookie and redirects to /. */
static void serve_login(void)
{
    serve(ROOT, "127.0.0.2",
          "page /robots.txt type=text/plain body=\"User-agent: *\\n\"\n"
          "page / cookie=session=k7 login=/login\n"
          "  link /members/ann /members/bob /members/cy\n"
          "page /login form=user=alice&password=" PASSWORD " status=302 location=/\n"
          "  header Set-Cookie: session=k7; Path=/; HttpOnly\n"
          "page /members/ann cookie=session=k7 login=/login body=\"<h1>Ann</h1>\"\n"
          "page /members/bob cookie=session=k7 login=/login body=\"<h1>Bob</h1>\"\n"
          "page /members/cy cookie=session=k7 login=/login body=\"<h1>Cy</h1>\"\n");
}

/* The whole file at path (static; "" when none). */
static const char *slurp(const char *path)
{
    static char buf[65536];
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    return buf;
}

static void test_form_login(void **state)
{
    (void)state;
    serve_login();
    char jar[300], items[300], spider[300];
    snprintf(jar, sizeof jar, "%s/login-jar.txt", dir);
    snprintf(items, sizeof items, "%s/login-items.jsonl", dir);
    unlink(jar), unlink(items);
    crawl_run r;
    crawl(&r, "-v", "-v", "--spider", SOURCE_DIR "/stage3_queue/spiders/examples/login.lua",
          "--cookies", jar, "--items", items, hosts[ROOT].url, NULL);
    if (r.exit_code != 0)
        fail_msg("%s", crawl_run_describe(&r));
    const char *got = slurp(items);
    const char *const names[] = {"\"name\":\"Ann\"", "\"name\":\"Bob\"", "\"name\":\"Cy\""};
    for (size_t i = 0; i < 3; i++)
        if (!strstr(got, names[i]))
            fail_msg("no %s among the items:\n%s\n%s", names[i], got, crawl_run_describe(&r));
    assert_int_equal(status_of(&r, ROOT, "/members/ann"), 200);
    if (strstr(r.out, PASSWORD) || strstr(r.err, PASSWORD))
        fail_msg("the password in the output or on stderr: %s", crawl_run_describe(&r));
    crawl_run_free(&r);

    /* a wrong password: the form again, no session, no member's page */
    FILE *f = fopen(SOURCE_DIR "/stage3_queue/spiders/examples/login.lua", "r");
    assert_non_null(f);
    static char text[8192];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    char *pw = strstr(text, "\"" PASSWORD "\"");
    assert_non_null(pw);
    memcpy(pw + 1, "wrong-pw!", strlen(PASSWORD)); /* as long as the password */
    assert_non_null(scratch_write(spider, sizeof spider, "login-wrong.lua", text));
    unlink(jar), unlink(items);
    crawl(&r, "--spider", spider, "--cookies", jar, "--items", items, hosts[ROOT].url, NULL);
    if (r.exit_code != 0)
        fail_msg("%s", crawl_run_describe(&r));
    if (strstr(slurp(items), "members") || strstr(r.out, "/members/"))
        fail_msg("a member's page without a login:\n%s", crawl_run_describe(&r));
    if (!strstr(r.err, "login refused: 200"))
        fail_msg("the spider did not see the form again: %s", crawl_run_describe(&r));
    crawl_run_free(&r);
    stop_hosts(NULL);
}

/* download{...}'s form as sent (urlencoded: the server compares the pairs as written,
 * in any order), and the request tables' errors, each raised where pcall catches it. */
static void test_form_api(void **state)
{
    (void)state;
    serve(ROOT, "127.0.0.2",
          "page /robots.txt type=text/plain body=\"User-agent: *\\n\"\n"
          "page / body=\"<p>start</p>\"\n"
          "page /echo form=n=2&q=a%26b+c%2F%C3%A9%7E status=201 body=created\n");
    static const char spider_text[] =
        "function parse(response)\n"
        "  local r = download{url = '/echo', method = 'POST', form = {q = 'a&b c/\xc3\xa9~', n = "
        "2}}\n"
        "  item({status = r.status, body = r.body})\n"
        "  local g = download{url = '/echo'}\n"
        "  item({get = g.status})\n"
        "  local bad = {\n"
        "    function() download{url = '/', meth = 'POST'} end,\n"
        "    function() download{url = '/', form = {a = 'b'}} end,\n"
        "    function() download{url = '/', method = 'PUT'} end,\n"
        "    function() download{url = '/', method = 'POST', form = {a = {}}} end,\n"
        "    function() download{url = '/', method = 'POST', form = {a = ('x'):rep(70000)}} end,\n"
        "    function() download{method = 'POST'} end,\n"
        "    function() follow{url = '/echo', method = 'POST'} end,\n"
        "    function() follow{url = '/', dont_filter = 'yes'} end,\n"
        "  }\n"
        "  for i, f in ipairs(bad) do\n"
        "    local ok, e = pcall(f)\n"
        "    item({i = i, ok = ok, e = tostring(e)})\n"
        "  end\n"
        "end\n";
    char spider[300], items[300];
    assert_non_null(scratch_write(spider, sizeof spider, "form-api.lua", spider_text));
    snprintf(items, sizeof items, "%s/form-api.jsonl", dir);
    unlink(items);
    crawl_run r;
    crawl(&r, "-q", "--spider", spider, "--items", items, hosts[ROOT].url, NULL);
    if (r.exit_code != 0)
        fail_msg("%s", crawl_run_describe(&r));
    const char *got = slurp(items);
    static const char *const want[] = {
        "{\"body\":\"created\",\"status\":201}",
        "{\"get\":200}", /* a GET of the form's URL: the form page */
        "download: unknown field 'meth' (url, method, form, dont_filter)",
        "download: form = a table, with method = \\\"POST\\\"",
        "download: method = \\\"GET\\\" or \\\"POST\\\"",
        "download: form: each field is name = string (or number)",
        "download: form: over 65536 bytes urlencoded",
        "download: url = a string is needed",
        "follow: method = \\\"POST\\\": the Queue carries GET requests only",
        "follow: dont_filter = true or false",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(got, want[i]))
            fail_msg("not among the items: %s\n%s", want[i], got);
    assert_null(strstr(got, "\"ok\":true"));
    crawl_run_free(&r);
    /* the raw transport: the POST is refused, the callback's error in the record */
    unlink(items);
    crawl(&r, "-q", "--transport", "raw", "--spider", spider, "--items", items, hosts[ROOT].url,
          NULL);
    if (r.exit_code != 0
        || !strstr(r.out, "/echo failed: Exception: the raw transport sends GET requests only"))
        fail_msg("%s", crawl_run_describe(&r));
    crawl_run_free(&r);
    stop_hosts(NULL);
}

static void test_refusals(void **state)
{
    (void)state;
    crawl_run r;
    crawl(&r, "--user", "alice" PASSWORD, "http://127.0.0.1:9/", NULL);
    assert_true(crawl_run_one_line(&r, 2, "--user: give USER:PASSWORD"));
    assert_null(strstr(r.err, PASSWORD));
    crawl_run_free(&r);
    crawl(&r, "--transport", "raw", "--user", "alice:" PASSWORD, "http://127.0.0.1:9/", NULL);
    assert_true(crawl_run_one_line(&r, 2, "the raw transport has no HTTP authentication"));
    assert_null(strstr(r.err, PASSWORD));
    crawl_run_free(&r);
    crawl(&r, "--user", "alice:" PASSWORD, "--netrc", "http://127.0.0.1:9/", NULL);
    assert_true(crawl_run_one_line(&r, 2, "--user and --netrc: give one"));
    crawl_run_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_no_login, stop_hosts),
        cmocka_unit_test_teardown(test_user, stop_hosts),
        cmocka_unit_test_teardown(test_netrc, stop_hosts),
        cmocka_unit_test_teardown(test_digest, stop_hosts),
        cmocka_unit_test_teardown(test_form_login, stop_hosts),
        cmocka_unit_test_teardown(test_form_api, stop_hosts),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, scratch_setup, scratch_teardown);
}
