/* test_cli.c — cli_parse: defaults, every option, every kind of usage error (one line
 * on stderr naming the bad argument), --help and --version; a crawler's own table of
 * flags (cli_table: each kind of argument, ranges, a repeatable flag, the rules between
 * flags, its help), and crawl-queue's table (stage3_queue/assembly/settings.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "crawl.h"
#include "log.h"
#include "settings.h"

#define PROG     "crawl-queue"
#define MAX_ARGS 32

/* ---- helpers ---------------------------------------------------------------- */

typedef struct run {
    int rc;
    crawl_options o;
    settings s; /* crawl-queue's flags, with parse_table == &settings_table */
    char *out;  /* what was written to stdout */
    char *err;  /* what was written to stderr */
    char *argv[MAX_ARGS + 1];
} run;

/* Everything written to fd while fn runs, via a temporary file dup2'd over fd. */
static char *slurp(FILE *f)
{
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long len = ftell(f);
    assert_true(len >= 0);
    rewind(f);
    char *buf = malloc((size_t)len + 1);
    assert_non_null(buf);
    size_t got = fread(buf, 1, (size_t)len, f);
    assert_int_equal(got, (size_t)len);
    buf[len] = '\0';
    return buf;
}

/* Swap fd for a temp file; returns the saved descriptor. */
static int capture_start(int fd, FILE **tmp)
{
    *tmp = tmpfile();
    assert_non_null(*tmp);
    int saved = dup(fd);
    assert_true(saved >= 0);
    assert_true(dup2(fileno(*tmp), fd) >= 0);
    return saved;
}

static char *capture_end(int fd, int saved, FILE *tmp)
{
    assert_true(dup2(saved, fd) >= 0);
    close(saved);
    char *text = slurp(tmp);
    fclose(tmp);
    return text;
}

/* What parse() parses as (reset after each test): the core's flags only, with the
 * note stages 1 and 2 give an unknown option; or a crawler's table filling run.s
 * (crawl-queue's, settings_table) or parse_settings (another). */
#define NOTE "the engine's flags are elsewhere"
static const cli_table *parse_table;
static void *parse_settings;

/* cli_parse(PROG, args...) with stdout and stderr captured. args ends with NULL. */
static run *parse(const char *first, ...)
{
    run *r = calloc(1, sizeof *r);
    assert_non_null(r);
    int argc = 0;
    r->argv[argc++] = PROG;
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a; a = va_arg(ap, const char *)) {
        assert_true(argc < MAX_ARGS);
        r->argv[argc++] = (char *)a;
    }
    va_end(ap);

    FILE *tout, *terr;
    fflush(stdout);
    fflush(stderr);
    int sout = capture_start(STDOUT_FILENO, &tout);
    int serr = capture_start(STDERR_FILENO, &terr);
    cli_command cmd = {.prog = PROG,
                       .default_transport = "raw",
                       .table = parse_table,
                       .settings = parse_settings ? parse_settings : &r->s,
                       .unknown_note = parse_table ? NULL : NOTE};
    r->rc = cli_parse(&r->o, argc, r->argv, &cmd);
    fflush(stdout);
    fflush(stderr);
    r->err = capture_end(STDERR_FILENO, serr, terr);
    r->out = capture_end(STDOUT_FILENO, sout, tout);
    return r;
}

static void run_free(run *r)
{
    cli_table_free(parse_table, parse_settings ? parse_settings : &r->s);
    free(r->out);
    free(r->err);
    free(r);
}

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* The call failed with exactly one stderr line that starts with the program name and
 * contains each of the given fragments. */
static void assert_usage_error(run *r, const char *frag1, const char *frag2)
{
    assert_int_equal(r->rc, CLI_USAGE);
    assert_int_equal(count_lines(r->err), 1);
    assert_true(r->err[strlen(r->err) - 1] == '\n');
    assert_true(strncmp(r->err, PROG ": ", strlen(PROG ": ")) == 0);
    if (frag1 && !strstr(r->err, frag1))
        fail_msg("'%s' not in: %s", frag1, r->err);
    if (frag2 && !strstr(r->err, frag2))
        fail_msg("'%s' not in: %s", frag2, r->err);
    assert_string_equal(r->out, "");
}

static void assert_ok(run *r)
{
    if (r->rc != CLI_OK)
        fail_msg("cli_parse returned %d: %s", r->rc, r->err);
    assert_string_equal(r->err, "");
    assert_string_equal(r->out, "");
}

static int reset_log_level(void **state)
{
    (void)state;
    log_level = LOG_WARN;
    parse_table = NULL;
    parse_settings = NULL;
    return 0;
}

/* ---- success ---------------------------------------------------------------- */

static void test_defaults(void **state)
{
    (void)state;
    run *r = parse("example.com", NULL);
    assert_ok(r);
    const crawl_options *o = &r->o;
    assert_int_equal(o->nroots, 1);
    assert_string_equal(o->roots[0], "example.com");
    assert_int_equal(o->max_tasks, 100);
    assert_int_equal(o->max_redirect, 10);
    assert_int_equal(o->max_tries, 4);
    assert_null(o->exclude);
    assert_int_equal(o->strict, 1);
    assert_string_equal(o->selector, "epoll");
    assert_string_equal(o->transport, "raw");
    assert_string_equal(o->format, "text");
    assert_null(o->output);
    assert_true(o->timeout == 30.0);
    assert_int_equal(o->max_pages, 0);
    assert_int_equal(o->max_size, 16777216);
    assert_null(o->cacert);
    assert_null(o->trace_events);
    assert_int_equal(o->verbose, 0);
    assert_int_equal(o->quiet, 0);
    assert_int_equal(log_level, LOG_WARN);
    run_free(r);
}

static void test_default_transport_is_the_stages(void **state)
{
    (void)state;
    char *argv[] = {PROG, "http://a/", NULL};
    crawl_options o;
    const cli_command cmd = {.prog = PROG, .default_transport = "curl"};
    assert_int_equal(cli_parse(&o, 2, argv, &cmd), CLI_OK);
    assert_string_equal(o.transport, "curl");
}

static void test_every_option_separate_values(void **state)
{
    (void)state;
    run *r = parse("--max-tasks", "7", "--max-redirect", "0", "--max-tries", "100", "--exclude",
                   "\\.pdf$", "--lenient", "--selector", "poll", "--transport", "curl", "--format",
                   "jsonl", "--output", "out.jsonl", "--timeout", "2.5", "--max-pages", "50",
                   "--max-size", "1", "--cacert", "/dev/null", "--trace-events", "t.json", "-v",
                   "http://a/", "https://b.example/x", NULL);
    assert_ok(r);
    const crawl_options *o = &r->o;
    assert_int_equal(o->max_tasks, 7);
    assert_int_equal(o->max_redirect, 0);
    assert_int_equal(o->max_tries, 100);
    assert_string_equal(o->exclude, "\\.pdf$");
    assert_int_equal(o->strict, 0);
    assert_string_equal(o->selector, "poll");
    assert_string_equal(o->transport, "curl");
    assert_string_equal(o->format, "jsonl");
    assert_string_equal(o->output, "out.jsonl");
    assert_true(o->timeout == 2.5);
    assert_int_equal(o->max_pages, 50);
    assert_int_equal(o->max_size, 1);
    assert_string_equal(o->cacert, "/dev/null");
    assert_string_equal(o->trace_events, "t.json");
    assert_int_equal(o->verbose, 1);
    assert_int_equal(log_level, LOG_INFO);
    assert_int_equal(o->nroots, 2);
    assert_string_equal(o->roots[0], "http://a/");
    assert_string_equal(o->roots[1], "https://b.example/x");
    run_free(r);
}

static void test_every_option_equals_form(void **state)
{
    (void)state;
    run *r =
        parse("--max-tasks=1000000", "--max-redirect=1000", "--max-tries=1", "--exclude=foo|bar",
              "--selector=select", "--transport=raw", "--format=text", "--output=-",
              "--timeout=86400", "--max-pages=0", "--max-size=9223372036854775807",
              "--cacert=/dev/null", "--trace-events=e", "a.example", NULL);
    assert_ok(r);
    const crawl_options *o = &r->o;
    assert_int_equal(o->max_tasks, 1000000);
    assert_int_equal(o->max_redirect, 1000);
    assert_int_equal(o->max_tries, 1);
    assert_string_equal(o->exclude, "foo|bar");
    assert_string_equal(o->selector, "select");
    assert_string_equal(o->transport, "raw");
    assert_string_equal(o->format, "text");
    assert_string_equal(o->output, "-");
    assert_true(o->timeout == 86400.0);
    assert_int_equal(o->max_pages, 0);
    assert_true(o->max_size == 9223372036854775807LL);
    assert_string_equal(o->cacert, "/dev/null");
    assert_string_equal(o->trace_events, "e");
    run_free(r);
}

/* --exclude is repeatable: a URL matching any of them is excluded (a second --exclude
 * used to replace the first, silently). */
static void test_exclude_repeatable(void **state)
{
    (void)state;
    run *r = parse("--exclude", "\\.pdf$", "--exclude=/private/", "a.example", NULL);
    assert_ok(r);
    const crawl_options *o = &r->o;
    assert_int_equal(o->nexcludes, 2);
    assert_string_equal(o->exclude, "\\.pdf$");
    char err[256];
    crawl *c = crawl_prepare(o, "test", err, sizeof err);
    assert_non_null(c);
    assert_false(crawl_allowed(c, "http://a.example/x.pdf"));
    assert_false(crawl_allowed(c, "http://a.example/private/y"));
    assert_true(crawl_allowed(c, "http://a.example/ok"));
    crawl_free(c);
    run_free(r);
}

static void test_options_after_roots_and_last_wins(void **state)
{
    (void)state;
    run *r = parse("a.example", "--lenient", "b.example", "--strict", "--max-tasks", "3",
                   "--max-tasks=5", "--", "--not-an-option.example", NULL);
    assert_ok(r);
    assert_int_equal(r->o.strict, 1);
    assert_int_equal(r->o.max_tasks, 5);
    assert_int_equal(r->o.nroots, 3);
    assert_string_equal(r->o.roots[0], "a.example");
    assert_string_equal(r->o.roots[1], "b.example");
    assert_string_equal(r->o.roots[2], "--not-an-option.example");
    run_free(r);
}

static void test_verbose_and_quiet_set_log_level(void **state)
{
    (void)state;
    run *r = parse("-vv", "--verbose", "a.example", NULL);
    assert_ok(r);
    assert_int_equal(r->o.verbose, 3);
    assert_int_equal(log_level, LOG_DEBUG);
    run_free(r);

    r = parse("-q", "a.example", NULL);
    assert_ok(r);
    assert_int_equal(r->o.quiet, 1);
    assert_int_equal(log_level, LOG_ERROR);
    run_free(r);

    r = parse("--quiet", "-v", "a.example", NULL);
    assert_ok(r);
    assert_int_equal(log_level, LOG_ERROR);
    run_free(r);

    r = parse("a.example", NULL);
    assert_ok(r);
    assert_int_equal(log_level, LOG_WARN);
    run_free(r);
}

static void test_timeout_decimal_forms(void **state)
{
    (void)state;
    run *r = parse("--timeout", "0.001", "a.example", NULL);
    assert_ok(r);
    assert_true(r->o.timeout == 0.001);
    run_free(r);
    r = parse("--timeout", "1e2", "a.example", NULL);
    assert_ok(r);
    assert_true(r->o.timeout == 100.0);
    run_free(r);
}

/* ---- help and version ------------------------------------------------------- */

static void test_help(void **state)
{
    (void)state;
    const char *flags[] = {"-h", "--help"};
    for (size_t i = 0; i < 2; i++) {
        run *r = parse(flags[i], NULL);
        assert_int_equal(r->rc, CLI_EXIT_OK);
        assert_string_equal(r->err, "");
        assert_non_null(strstr(r->out, "Usage: " PROG " [options] ROOT..."));
        const char *opts[] = {
            "--max-tasks",
            "[100]",
            "--max-redirect",
            "[10]",
            "--max-tries",
            "[4]",
            "--exclude",
            "--strict",
            "--lenient",
            "--selector",
            "epoll, poll or select",
            "[epoll]",
            "--transport",
            "[raw]",
            "--format",
            "[text]",
            "--output",
            "[stdout]",
            "--timeout",
            "[30]",
            "--max-pages",
            "[0]",
            "--max-size",
            "[16777216]",
            "--cacert",
            "--trace-events",
            "--verbose",
            "--quiet",
            "--help",
            "--version",
        };
        for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++)
            if (!strstr(r->out, opts[k]))
                fail_msg("help lacks '%s'", opts[k]);
        run_free(r);
    }
}

static void test_help_wins_over_missing_root(void **state)
{
    (void)state;
    run *r = parse("--max-tasks", "5", "--help", NULL);
    assert_int_equal(r->rc, CLI_EXIT_OK);
    assert_string_equal(r->err, "");
    run_free(r);
}

static void test_version(void **state)
{
    (void)state;
    const char *flags[] = {"-V", "--version"};
    for (size_t i = 0; i < 2; i++) {
        run *r = parse(flags[i], NULL);
        assert_int_equal(r->rc, CLI_EXIT_OK);
        assert_string_equal(r->out, PROG " " CRAWL_VERSION "\n");
        assert_string_equal(r->err, "");
        run_free(r);
    }
}

/* ---- usage errors ----------------------------------------------------------- */

static void test_not_a_whole_number(void **state)
{
    (void)state;
    run *r = parse("--max-tasks", "zero", "a.example", NULL);
    assert_usage_error(r, "--max-tasks: 'zero' is not a whole number", NULL);
    run_free(r);
    const char *bad[] = {"", " 5", "5 ", "5x", "0x10", "1.5", "+", "-", "1e3"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = parse("--max-redirect", bad[i], "a.example", NULL);
        assert_usage_error(r, "--max-redirect:", "is not a whole number");
        run_free(r);
    }
}

static void test_out_of_range(void **state)
{
    (void)state;
    run *r = parse("--max-tasks", "0", "a.example", NULL);
    assert_usage_error(r, "--max-tasks: 0 is out of range (1 to 1000000)", NULL);
    run_free(r);

    r = parse("--max-tasks=1000001", "a.example", NULL);
    assert_usage_error(r, "--max-tasks: 1000001 is out of range", NULL);
    run_free(r);

    r = parse("--max-tasks", "99999999999999999999999", "a.example", NULL);
    assert_usage_error(r, "99999999999999999999999 is out of range", NULL);
    run_free(r);

    r = parse("--max-redirect", "-1", "a.example", NULL);
    assert_usage_error(r, "--max-redirect: -1 is out of range (0 to 1000)", NULL);
    run_free(r);

    r = parse("--max-tries", "101", "a.example", NULL);
    assert_usage_error(r, "--max-tries: 101 is out of range (1 to 100)", NULL);
    run_free(r);

    r = parse("--max-pages", "-1", "a.example", NULL);
    assert_usage_error(r, "--max-pages: -1 is out of range", NULL);
    run_free(r);

    r = parse("--max-size", "0", "a.example", NULL);
    assert_usage_error(r, "--max-size: 0 is out of range", NULL);
    run_free(r);
}

static void test_bad_timeout(void **state)
{
    (void)state;
    const char *words[] = {"abc", "", "nan", "inf", "0x10", "1s", "2..5"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        run *r = parse("--timeout", words[i], "a.example", NULL);
        assert_usage_error(r, "--timeout:", "is not a number of seconds");
        run_free(r);
    }
    /* below 1 ms it would round to 0 ms: "no limit" to libcurl */
    const char *ranges[] = {"0",      "-1",       "86400.5", "1e9",
                            "0.0004", "4.9e-324", "0.00099", "1e-3000"};
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
        run *r = parse("--timeout", ranges[i], "a.example", NULL);
        assert_usage_error(r, "--timeout:", "is out of range");
        assert_non_null(strstr(r->err, ranges[i]));
        run_free(r);
    }
}

static void test_bad_choices(void **state)
{
    (void)state;
    run *r = parse("--selector", "kqueue", "a.example", NULL);
    assert_usage_error(r, "--selector: unknown 'kqueue' (choose epoll, poll or select)", NULL);
    run_free(r);

    r = parse("--transport=tcp", "a.example", NULL);
    assert_usage_error(r, "--transport: unknown 'tcp' (choose raw or curl)", NULL);
    run_free(r);

    r = parse("--format", "JSONL", "a.example", NULL);
    assert_usage_error(r, "--format: unknown 'JSONL' (choose text or jsonl)", NULL);
    run_free(r);
}

static void test_bad_exclude_regex(void **state)
{
    (void)state;
    run *r = parse("--exclude", "(", "a.example", NULL);
    assert_usage_error(r, "--exclude", "'('");
    run_free(r);
}

static void test_unknown_options(void **state)
{
    (void)state;
    run *r = parse("--bogus", "a.example", NULL);
    assert_usage_error(r, "unknown option '--bogus' (see --help)", NULL);
    run_free(r);

    r = parse("--bogus=3", "a.example", NULL);
    assert_usage_error(r, "unknown option '--bogus'", NULL);
    run_free(r);

    r = parse("-x", "a.example", NULL);
    assert_usage_error(r, "unknown option '-x'", NULL);
    run_free(r);

    r = parse("-vz", "a.example", NULL);
    assert_usage_error(r, "unknown option '-z'", NULL);
    run_free(r);

    /* --max-t could be --max-tasks or --max-tries. */
    r = parse("--max-t=3", "a.example", NULL);
    assert_usage_error(r, "'--max-t'", "ambiguous");
    run_free(r);
}

static void test_value_given_to_a_flag(void **state)
{
    (void)state;
    run *r = parse("--strict=yes", "a.example", NULL);
    assert_usage_error(r, "option '--strict' takes no value", NULL);
    run_free(r);

    r = parse("--verbose=2", "a.example", NULL);
    assert_usage_error(r, "option '--verbose' takes no value", NULL);
    run_free(r);
}

static void test_missing_value(void **state)
{
    (void)state;
    const char *opts[] = {"--max-tasks",   "--max-redirect", "--max-tries", "--exclude",
                          "--selector",    "--transport",    "--format",    "--output",
                          "--timeout",     "--max-pages",    "--max-size",  "--cacert",
                          "--trace-events"};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
        run *r = parse("a.example", opts[i], NULL);
        char want[64];
        snprintf(want, sizeof want, "option '%s' needs a value", opts[i]);
        assert_usage_error(r, want, NULL);
        run_free(r);
    }
}

static void test_no_root(void **state)
{
    (void)state;
    run *r = parse(NULL);
    assert_usage_error(r, "no ROOT given (see --help)", NULL);
    run_free(r);

    r = parse("--max-tasks", "4", "-v", NULL);
    assert_usage_error(r, "no ROOT given", NULL);
    run_free(r);
}

static void test_bad_roots(void **state)
{
    (void)state;
    run *r = parse("ftp://x/", NULL);
    assert_usage_error(r, "ROOT 'ftp://x/': ", "ftp");
    run_free(r);

    /* The first root is fine; the second is reported. */
    r = parse("http://ok.example/", "ftp://x/", NULL);
    assert_usage_error(r, "ROOT 'ftp://x/'", NULL);
    run_free(r);

    /* A newline in the argument must not split the message into two lines. */
    r = parse("ftp://a\nb/", NULL);
    assert_usage_error(r, "ROOT 'ftp://a", NULL);
    run_free(r);
}

/* --cacert must name a readable file, on either transport. */
static void test_bad_cacert(void **state)
{
    (void)state;
    const char *transports[] = {"raw", "curl"};
    for (int t = 0; t < 2; t++) {
        run *r = parse("--transport", transports[t], "--cacert", "/nonexistent/ca.pem", "a.example",
                       NULL);
        assert_usage_error(
            r, "--cacert: cannot read '/nonexistent/ca.pem':", "No such file or directory");
        run_free(r);
        r = parse("--transport", transports[t], "--cacert", "/", "a.example", NULL);
        assert_usage_error(r, "--cacert: '/' is a directory", NULL);
        run_free(r);
    }
}

/* --output and --trace-events naming one file, however spelled: refused. */
static void test_output_and_trace_same_file(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_cli_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char a[64], a_dot[64], link[64], other[64], fresh[64], fresh_dot[64];
    snprintf(a, sizeof a, "%s/a", dir);
    snprintf(a_dot, sizeof a_dot, "%s/./a", dir);
    snprintf(link, sizeof link, "%s/link", dir);
    snprintf(other, sizeof other, "%s/other", dir);
    snprintf(fresh, sizeof fresh, "%s/new.json", dir); /* does not exist */
    snprintf(fresh_dot, sizeof fresh_dot, "%s//new.json", dir);
    FILE *f = fopen(a, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(symlink(a, link), 0);
    const char *same[][2] = {{a, a}, {a, a_dot}, {a, link}, {fresh, fresh}, {fresh, fresh_dot}};
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        run *r = parse("--output", same[i][0], "--trace-events", same[i][1], "x.example", NULL);
        assert_usage_error(r, "are the same file", same[i][0]);
        run_free(r);
    }
    const char *apart[][2] = {{a, other}, {a, fresh}, {"/dev/null", "/dev/null"}};
    for (size_t i = 0; i < sizeof apart / sizeof apart[0]; i++) {
        run *r = parse("--output", apart[i][0], "--trace-events", apart[i][1], "x.example", NULL);
        assert_ok(r);
        run_free(r);
    }
    /* no --output: the report goes to stdout, here a temporary file (parse captures it) */
    run *r = parse("--trace-events", "/proc/self/fd/1", "x.example", NULL);
    assert_usage_error(r, "--trace-events '/proc/self/fd/1' is where the report goes", NULL);
    run_free(r);
    unlink(link);
    unlink(a);
    rmdir(dir);
}

static void test_callable_repeatedly(void **state)
{
    (void)state;
    /* An error part-way through must not leak into the next parse. */
    run *r = parse("--max-tasks", "0", "a.example", NULL);
    assert_int_equal(r->rc, CLI_USAGE);
    run_free(r);
    for (int i = 0; i < 3; i++) {
        r = parse("--max-tasks", "9", "a.example", NULL);
        assert_ok(r);
        assert_int_equal(r->o.max_tasks, 9);
        assert_int_equal(r->o.nroots, 1);
        run_free(r);
    }
}

/* ---- crawl-queue's options ------------------------------------------------- */

static void test_stage3_options(void **state)
{
    (void)state;
    parse_table = &settings_table;
    run *r = parse("http://a/", NULL);
    assert_ok(r);
    assert_null(r->o.user_agent);
    assert_int_equal(r->s.ignore_robots, 0);
    run_free(r);
    r = parse("--user-agent", "MyBot/2.0 (+http://x/)", "--ignore-robots", "http://a/", NULL);
    assert_ok(r);
    assert_string_equal(r->o.user_agent, "MyBot/2.0 (+http://x/)");
    assert_int_equal(r->s.ignore_robots, 1);
    run_free(r);
    r = parse("--user-agent=x", "http://a/", NULL);
    assert_ok(r);
    assert_string_equal(r->o.user_agent, "x");
    run_free(r);
}

static void test_stage3_options_refused_by_chapter(void **state)
{
    (void)state;
    run *r = parse("--user-agent", "MyBot", "http://a/", NULL);
    assert_usage_error(r, "unknown option '--user-agent' (see --help); " NOTE, NULL);
    run_free(r);
    r = parse("--ignore-robots", "http://a/", NULL);
    assert_usage_error(r, "unknown option '--ignore-robots' (see --help); " NOTE, NULL);
    run_free(r);
}

/* The spider middlewares: depth and referrer on by default, off with --chapter (where
 * --max-depth turns depth on); --include repeatable and checked now; each flag refused
 * by stages 1 and 2. */
static void test_spider_middleware_options(void **state)
{
    (void)state;
    parse_table = &settings_table;
    run *r = parse("http://a/", NULL);
    assert_ok(r);
    assert_int_equal(r->s.max_depth, -1);
    assert_int_equal(r->s.depth, 1);
    assert_int_equal(r->s.referrer, 1);
    run_free(r);
    r = parse("--chapter", "http://a/", NULL);
    assert_ok(r);
    assert_int_equal(r->s.depth, 0);
    assert_int_equal(r->s.referrer, 0);
    run_free(r);
    r = parse("--chapter", "--max-depth", "2", "http://a/", NULL);
    assert_ok(r);
    assert_int_equal(r->s.depth, 1);
    assert_int_equal(r->s.referrer, 0);
    run_free(r);
    r = parse("--depth", "http://a/", NULL);
    assert_usage_error(r, "unknown option '--depth'", NULL);
    run_free(r);
    r = parse("--max-depth", "0", "--include", "/a/", "--include=/b/", "--requisites", "http://a/",
              NULL);
    assert_ok(r);
    assert_int_equal(r->s.max_depth, 0);
    assert_int_equal(r->s.depth, 1);
    assert_int_equal(r->s.include.n, 2);
    assert_string_equal(r->s.include.v[1], "/b/");
    assert_int_equal(r->s.referrer, 1);
    assert_int_equal(r->s.requisites, 1);
    run_free(r);
    r = parse("--max-depth", "-1", "http://a/", NULL);
    assert_usage_error(r, "--max-depth", NULL);
    run_free(r);
    r = parse("--include", "(", "http://a/", NULL);
    assert_usage_error(r, "--include: bad regex '(': ", NULL);
    run_free(r);
    parse_table = NULL;
    const char *const flags[] = {"--max-depth=1", "--include=x", "--requisites"};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        r = parse(flags[i], "http://a/", NULL);
        assert_usage_error(r, "unknown option '", NOTE);
        run_free(r);
    }
}

static void test_bad_user_agent(void **state)
{
    (void)state;
    parse_table = &settings_table;
    char long_ua[300];
    memset(long_ua, 'a', 257);
    long_ua[257] = '\0';
    const char *const bad[] = {"",        " lead", "trail ", "tab\there", "line\nbreak",
                               "nul\x7f", long_ua};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        run *r = parse("--user-agent", bad[i], "http://a/", NULL);
        assert_usage_error(r, "--user-agent: '", "is not a User-Agent");
        run_free(r);
    }
    long_ua[256] = '\0'; /* 256: the longest allowed */
    run *r = parse("--user-agent", long_ua, "http://a/", NULL);
    assert_ok(r);
    run_free(r);
    r = parse("--ignore-robots=yes", "http://a/", NULL);
    assert_usage_error(r, "option '--ignore-robots' takes no value", NULL);
    run_free(r);
}

static void test_help_stage3(void **state)
{
    (void)state;
    run *r = parse("--help", NULL);
    assert_null(strstr(r->out, "--user-agent"));
    assert_null(strstr(r->out, "--threads"));
    assert_null(strstr(r->out, "--ignore-robots"));
    run_free(r);
    parse_table = &settings_table;
    r = parse("--help", NULL);
    assert_int_equal(r->rc, CLI_EXIT_OK);
    assert_non_null(strstr(r->out, "--user-agent NAME"));
    assert_non_null(strstr(r->out, "[crawlstages/" CRAWL_VERSION "]"));
    assert_non_null(strstr(r->out, "--threads N"));
    assert_non_null(strstr(r->out, "--dns-timeout SECS"));
    assert_non_null(strstr(r->out, "--ignore-robots"));
    assert_non_null(strstr(r->out, "--header \"Name: value\""));
    assert_non_null(strstr(r->out, "Exit status:"));
    run_free(r);
}

/* ---- crawl-queue's options: --header ---------------------------------------- */

/* --header "Name: value", repeatable, kept in order as given; each bad one is one line
 * naming it and why. */
static void test_header(void **state)
{
    (void)state;
    parse_table = &settings_table;
    run *r = parse("--header", "X-One: 1", "--header=accept:text/html", "--header",
                   "X-E:", "a.example", NULL);
    assert_ok(r);
    assert_int_equal(r->s.header.n, 3);
    assert_string_equal(r->s.header.v[0], "X-One: 1");
    assert_string_equal(r->s.header.v[1], "accept:text/html");
    assert_string_equal(r->s.header.v[2], "X-E:");
    run_free(r);
    static const char *const bad[][2] = {
        {"X-One", "not a header field: give \"Name: value\""},
        {": v", "the name is empty"},
        {"X One: v", "the name is not an RFC 9110 token"},
        {"X-One : v", "the name is not an RFC 9110 token"},
        {"X-One: a\r\nX-Evil: b", "a control character (CR, LF, ...) in the value"},
        {"X-One: a\nb", "a control character"},
        {"X\nOne: a", "the name is not an RFC 9110 token"},
        {"Host: other.example", "the transport writes this field itself"},
        {"content-length: 0", "the transport writes this field itself"},
        {"Connection: keep-alive", "the transport writes this field itself"},
        {"Transfer-Encoding: chunked", "the transport writes this field itself"},
        {"user-agent: Bot/1", "give --user-agent (it also picks the robots.txt group)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        r = parse("--header", bad[i][0], "a.example", NULL);
        assert_usage_error(r, "--header '", bad[i][1]);
        run_free(r);
    }
    r = parse("--header", "X-One: 1", "--header", "x-one: 2", "a.example", NULL);
    assert_usage_error(r, "--header 'x-one: 2': x-one given twice", NULL);
    run_free(r);
    r = parse("--header", "a.example", NULL);
    assert_usage_error(r, "--header 'a.example': not a header field", NULL);
    run_free(r);
    char names[SETTINGS_MAX_HEADERS + 1][16];
    const char *argv[2 * (SETTINGS_MAX_HEADERS + 1) + 2];
    int argc = 0;
    argv[argc++] = PROG;
    argv[argc++] = "a.example";
    for (int i = 0; i <= SETTINGS_MAX_HEADERS; i++) { /* one too many */
        snprintf(names[i], sizeof names[i], "X-%d: v", i);
        argv[argc++] = "--header";
        argv[argc++] = names[i];
    }
    crawl_options o;
    settings st;
    const cli_command cmd = {.prog = PROG, .table = &settings_table, .settings = &st};
    FILE *terr;
    fflush(stderr);
    int serr = capture_start(STDERR_FILENO, &terr);
    assert_int_equal(cli_parse(&o, argc, (char **)argv, &cmd), CLI_USAGE);
    char *err = capture_end(STDERR_FILENO, serr, terr);
    assert_int_equal(count_lines(err), 1);
    assert_non_null(strstr(err, "at most 64 --header"));
    free(err);
    cli_table_free(&settings_table, &st);
    assert_int_equal(cli_parse(&o, argc - 2, (char **)argv, &cmd), CLI_OK);
    assert_int_equal(st.header.n, SETTINGS_MAX_HEADERS);
    cli_table_free(&settings_table, &st);
}

/* ---- crawl-queue's options: --threads, --dns-timeout ------------------------ */

static void test_threads_and_dns_timeout(void **state)
{
    (void)state;
    parse_table = &settings_table;
    run *r = parse("a.example", NULL);
    assert_ok(r);
    assert_int_equal(r->o.threads, 4);
    assert_true(r->o.dns_timeout == 60.0);
    run_free(r);

    r = parse("--threads", "16", "--dns-timeout=2.5", "a.example", NULL);
    assert_ok(r);
    assert_int_equal(r->o.threads, 16);
    assert_true(r->o.dns_timeout == 2.5);
    run_free(r);

    r = parse("--threads", "0", "a.example", NULL);
    assert_usage_error(r, "--threads: 0 is out of range (1 to 1024)", NULL);
    run_free(r);
    r = parse("--threads", "many", "a.example", NULL);
    assert_usage_error(r, "--threads: 'many' is not a whole number", NULL);
    run_free(r);
    r = parse("--dns-timeout", "0", "a.example", NULL);
    assert_usage_error(r, "--dns-timeout: 0 is out of range", NULL);
    run_free(r);
    r = parse("--dns-timeout", "soon", "a.example", NULL);
    assert_usage_error(r, "--dns-timeout: 'soon' is not a number of seconds", NULL);
    run_free(r);
}

/* Stages 1 and 2 keep the chapter's crawler: they pass no table, and each row of
 * crawl-queue's is refused with one line, exit 2, even with a good value. */
static void test_stage3_options_refused_by_chapter_stages(void **state)
{
    (void)state;
    const char *args[][2] = {{"--threads", "4"},
                             {"--dns-timeout", "5"},
                             {"--store", "c.db"},
                             {"--warc", "c.warc.gz"},
                             {"--cdx", "c.cdxj"},
                             {"--user-agent", "bot/1"},
                             {"--frontier", "redis://127.0.0.1:6379/c"},
                             {"--claim-after", "5"},
                             {"--per-host", "2"},
                             {"--per-ip", NULL},
                             {"--delay", "1"},
                             {"--random-delay", NULL},
                             {"--max-crawl-delay", "5"},
                             {"--autothrottle", NULL},
                             {"--target-concurrency", "2"},
                             {"--sitemaps", NULL},
                             {"--header", "X-A: b"}};
    for (size_t i = 0; i < sizeof args / sizeof *args; i++) {
        run *r = args[i][1] ? parse(args[i][0], args[i][1], "a.example", NULL)
                            : parse(args[i][0], "a.example", NULL);
        char want[128];
        snprintf(want, sizeof want, "unknown option '%s' (see --help); " NOTE, args[i][0]);
        assert_usage_error(r, want, NULL);
        run_free(r);
    }
    /* every row of the table, by its name (its value, if it takes one, is good) */
    for (const cli_flag *f = settings_table.flags; f->name; f++) {
        char flag[64];
        snprintf(flag, sizeof flag, "--%s", f->name);
        run *r = f->arg == CLI_ARG_NONE ? parse(flag, "a.example", NULL)
                                        : parse(flag, "1", "a.example", NULL);
        assert_usage_error(r, "unknown option", flag);
        run_free(r);
    }
}

/* --warc, --cdx, --store: crawl-queue's files; --cdx needs --warc; no two of the files
 * named on the command line may be one file. */
static void test_archive_and_store_files(void **state)
{
    (void)state;
    parse_table = &settings_table;
    run *r = parse("--warc", "c.warc.gz", "--cdx", "c.cdxj", "--store", "c.db", "a.example", NULL);
    assert_ok(r);
    assert_string_equal(r->s.warc, "c.warc.gz");
    assert_string_equal(r->s.cdx, "c.cdxj");
    assert_string_equal(r->s.store, "c.db");
    run_free(r);
    r = parse("--cdx", "c.cdxj", "a.example", NULL);
    assert_usage_error(r, "--cdx 'c.cdxj' indexes a --warc file: give --warc too", NULL);
    run_free(r);
    r = parse("--warc", "same", "--cdx", "same", "a.example", NULL);
    assert_usage_error(r, "--warc 'same' and --cdx 'same' are the same file", NULL);
    run_free(r);
    r = parse("--output", "same", "--store", "same", "a.example", NULL);
    assert_usage_error(r, "--output 'same' and --store 'same' are the same file", NULL);
    run_free(r);
    r = parse("--store", "same", "--warc", "same", "a.example", NULL);
    assert_usage_error(r, "--store 'same' and --warc 'same' are the same file", NULL);
    run_free(r);
}

/* --frontier redis://HOST:PORT/NAME and --claim-after: jsonl only, not with --state;
 * the process's name for its records. */
static void test_frontier(void **state)
{
    (void)state;
    parse_table = &settings_table;
    run *r = parse("a.example", NULL);
    assert_ok(r);
    assert_null(r->s.frontier);
    assert_null(r->o.fetched_by);
    assert_true(r->s.claim_after == 60.0);
    run_free(r);
    r = parse("--frontier", "redis://127.0.0.1:7000/c1", "--claim-after", "2.5", "--format",
              "jsonl", "a.example", NULL);
    assert_ok(r);
    assert_string_equal(r->s.frontier, "redis://127.0.0.1:7000/c1");
    assert_true(r->s.claim_after == 2.5);
    char pid[32];
    snprintf(pid, sizeof pid, ":%ld", (long)getpid());
    assert_non_null(r->o.fetched_by);
    assert_non_null(strstr(r->o.fetched_by, pid));
    run_free(r);
    r = parse("--frontier", "redis://x/c", "a.example", NULL);
    assert_usage_error(r, "--frontier 'redis://x/c' needs --format jsonl", NULL);
    run_free(r);
    r = parse("--frontier", "http://x/c", "--format", "jsonl", "a.example", NULL);
    assert_usage_error(r, "--frontier 'http://x/c': give redis://HOST:PORT/NAME", NULL);
    run_free(r);
    r = parse("--frontier", "redis://x/c", "--format", "jsonl", "--output", "o.jsonl", "--state",
              "s.db", "a.example", NULL);
    assert_usage_error(r, "--frontier 'redis://x/c' keeps the frontier in Redis", NULL);
    run_free(r);
    r = parse("--frontier", "redis://x/c", "--format", "jsonl", "--resume", "a.example", NULL);
    assert_usage_error(r, "--resume with --frontier 'redis://x/c' appends to --output FILE", NULL);
    run_free(r);
    r = parse("--frontier", "redis://x/c", "--format", "jsonl", "--resume", "--output", "o",
              "a.example", NULL);
    assert_ok(r);
    assert_int_equal(r->s.resume, 1);
    assert_int_equal(r->o.append_output, 1); /* what the core is told */
    run_free(r);
    r = parse("--claim-after", "0", "a.example", NULL);
    assert_usage_error(r, "--claim-after: 0 is out of range", NULL);
    run_free(r);
    /* a malformed URL is bad usage now, not a failure once the crawl starts */
    const char *bad[] = {"redis://x:0/c", "redis://x:1", "redis://x/a b", "redis://:pw@/c", NULL};
    for (int i = 0; bad[i]; i++) {
        r = parse("--frontier", bad[i], "--format", "jsonl", "a.example", NULL);
        assert_usage_error(r, "--frontier '", NULL);
        run_free(r);
    }
    /* a password: accepted (AUTH), and never shown in a message */
    r = parse("--frontier", "redis://crawler:secret@x:7000/c", "--format", "jsonl", "a.example",
              NULL);
    assert_ok(r);
    run_free(r);
    r = parse("--frontier", "redis://crawler:secret@x:0/c", "a.example", NULL);
    assert_usage_error(r, "--frontier 'redis://crawler:***@x:0/c': the port", NULL);
    assert_null(strstr(r->err, "secret"));
    run_free(r);
    r = parse("--frontier", "redis://:secret@x/c", "a.example", NULL);
    assert_usage_error(r, "--frontier 'redis://:***@x/c' needs --format jsonl", NULL);
    assert_null(strstr(r->err, "secret"));
    run_free(r);
}

/* Politeness: on by default (8 per host), off with --chapter alone; values in range;
 * --random-delay and --target-concurrency need what they vary; some not with --frontier
 * yet. */
static void test_politeness(void **state)
{
    (void)state;
    parse_table = &settings_table;
    run *r = parse("a.example", NULL);
    assert_ok(r);
    assert_int_equal(r->s.polite, 1);
    assert_int_equal(r->s.per_host, 8);
    assert_true(r->s.max_crawl_delay == 30 && r->s.target_concurrency == 1);
    run_free(r);
    r = parse("--chapter", "--ignore-robots", "--sitemaps", "a.example", NULL);
    assert_ok(r);
    assert_int_equal(r->s.polite, 0);
    run_free(r);
    static const char *const polite_flags[][2] = {
        {"--per-host", "2"}, {"--per-host", "0"},        {"--per-ip", NULL},
        {"--delay", "0"},    {"--max-crawl-delay", "5"}, {"--autothrottle", NULL}};
    for (size_t i = 0; i < sizeof polite_flags / sizeof polite_flags[0]; i++) {
        r = polite_flags[i][1]
            ? parse("--chapter", polite_flags[i][0], polite_flags[i][1], "a.example", NULL)
            : parse("--chapter", polite_flags[i][0], "a.example", NULL);
        assert_usage_error(r,
                           "--chapter is the chapter's crawler, without politeness: not "
                           "with --per-host",
                           NULL);
        run_free(r);
    }
    r = parse("--chapter", "--frontier", "redis://x/c", "--format", "jsonl", "a.example", NULL);
    assert_usage_error(r,
                       "--chapter is the chapter's crawler, its Queue in memory: not with "
                       "--frontier 'redis://x/c'",
                       NULL);
    run_free(r);
    r = parse("--per-host", "2", "--delay", "0.25", "--random-delay", "--per-ip",
              "--max-crawl-delay", "10", "--autothrottle", "--target-concurrency", "3",
              "--sitemaps", "a.example", NULL);
    assert_ok(r);
    assert_int_equal(r->s.polite, 1);
    assert_int_equal(r->s.per_host, 2);
    assert_true(r->s.delay == 0.25 && r->s.max_crawl_delay == 10);
    assert_true(r->s.random_delay && r->s.per_ip && r->s.autothrottle && r->s.sitemaps);
    assert_true(r->s.target_concurrency == 3);
    run_free(r);
    r = parse("--delay", "0", "a.example", NULL); /* on, with no delay */
    assert_ok(r);
    assert_int_equal(r->s.polite, 1);
    run_free(r);
    r = parse("--per-host", "0", "a.example", NULL); /* polite, no cap */
    assert_ok(r);
    assert_int_equal(r->s.polite, 1);
    assert_int_equal(r->s.per_host, 0);
    run_free(r);
    r = parse("--per-host", "-1", "a.example", NULL);
    assert_usage_error(r, "--per-host: -1 is out of range", NULL);
    run_free(r);
    r = parse("--delay", "-1", "a.example", NULL);
    assert_usage_error(r, "--delay: -1 is out of range", NULL);
    run_free(r);
    r = parse("--delay", "soon", "a.example", NULL);
    assert_usage_error(r, "--delay: 'soon' is not a number of seconds", NULL);
    run_free(r);
    r = parse("--random-delay", "a.example", NULL);
    assert_usage_error(r, "--random-delay varies --delay SECS: give --delay too", NULL);
    run_free(r);
    r = parse("--target-concurrency", "4", "a.example", NULL);
    assert_usage_error(r, "--target-concurrency is --autothrottle's aim", NULL);
    run_free(r);
    r = parse("--frontier", "redis://x/c", "--format", "jsonl", "--per-host", "2", "--delay", "1",
              "--random-delay", "a.example", NULL); /* held in Redis */
    assert_ok(r);
    run_free(r);
    r = parse("--frontier", "redis://x/c", "--format", "jsonl", "--autothrottle", "a.example",
              NULL);
    assert_usage_error(r, "--frontier 'redis://x/c' keeps --per-host and --delay", NULL);
    run_free(r);
    r = parse("--autothrottle", "--target-concurrency", "0", "a.example", NULL);
    assert_usage_error(r, "--target-concurrency: 0 is out of range", NULL);
    run_free(r);
}

/* ---- a crawler's own table -------------------------------------------------- */

/* A crawler's flags, one of each kind. */
typedef struct fake {
    int count;         /* --count N, 1 to 10 [3] */
    long long size;    /* --size BYTES, at least 1 */
    double ratio;      /* --ratio X, 0.5 to 2 [1] */
    const char *name;  /* --name WORD */
    cli_list header;   /* --header "Name: value", repeatable */
    int on;            /* --on */
    const char *a, *b; /* --a FILE, --b FILE: files it writes; --b needs --a */
    int hooked;        /* the --on row's hook ran */
} fake;

static fake the_fake;

static int check_header(void *p, const char *arg, char *why, size_t n)
{
    (void)p;
    if (strchr(arg, ':'))
        return 0;
    snprintf(why, n, "--header '%s': give \"Name: value\"", arg);
    return -1;
}

static int hook_on(void *p, const char *arg, char *why, size_t n)
{
    (void)arg, (void)why, (void)n;
    ((fake *)p)->hooked++;
    return 0;
}

static void fake_defaults(void *p)
{
    fake *f = p;
    *f = (fake){.count = 3, .ratio = 1};
}

/* The rules between its flags, and what it tells the core. */
static int fake_finish(void *p, crawl_options *o, char *why, size_t n)
{
    fake *f = p;
    if (f->b && !f->a) {
        snprintf(why, n, "--b '%s' needs --a: give --a too", f->b);
        return -1;
    }
    if (f->on && f->name) {
        snprintf(why, n, "--on refuses --name '%s'", f->name);
        return -1;
    }
    o->threads = f->on ? f->count : 0;
    return 0;
}

static const cli_flag fake_rows[] = {{.name = "count",
                                      .arg = CLI_ARG_INT,
                                      .metavar = "N",
                                      .min = 1,
                                      .max = 10,
                                      .offset = offsetof(fake, count),
                                      .help = "how many [3]"},
                                     {.name = "size",
                                      .arg = CLI_ARG_BYTES,
                                      .metavar = "BYTES",
                                      .min = 1,
                                      .offset = offsetof(fake, size),
                                      .help = "how large"},
                                     {.name = "ratio",
                                      .arg = CLI_ARG_DOUBLE,
                                      .metavar = "X",
                                      .min = 0.5,
                                      .max = 2,
                                      .noun = "times",
                                      .offset = offsetof(fake, ratio),
                                      .help = "how much [1]"},
                                     {.name = "name",
                                      .arg = CLI_ARG_STRING,
                                      .metavar = "WORD",
                                      .offset = offsetof(fake, name),
                                      .section = "Names:",
                                      .help = "first line\nsecond line"},
                                     {.name = "header",
                                      .arg = CLI_ARG_LIST,
                                      .metavar = "\"Name: value\"",
                                      .offset = offsetof(fake, header),
                                      .set = check_header,
                                      .help = "sent on every request (repeatable)"},
                                     {.name = "on",
                                      .arg = CLI_ARG_NONE,
                                      .offset = offsetof(fake, on),
                                      .set = hook_on,
                                      .section = "",
                                      .help = "switch it on"},
                                     {.name = "a",
                                      .arg = CLI_ARG_STRING,
                                      .metavar = "FILE",
                                      .offset = offsetof(fake, a),
                                      .out_file = true,
                                      .help = "file a"},
                                     {.name = "b",
                                      .arg = CLI_ARG_STRING,
                                      .metavar = "FILE",
                                      .offset = offsetof(fake, b),
                                      .out_file = true,
                                      .help = "file b (needs --a)"},
                                     {0}};

static const cli_table fake_table = {.title = "The fake's own:",
                                     .flags = fake_rows,
                                     .defaults = fake_defaults,
                                     .finish = fake_finish};

static void use_fake(void)
{
    parse_table = &fake_table;
    parse_settings = &the_fake;
}

static void test_table_values(void **state)
{
    (void)state;
    use_fake();
    run *r = parse("a.example", NULL);
    assert_ok(r);
    assert_int_equal(the_fake.count, 3); /* the table's defaults */
    assert_true(the_fake.ratio == 1);
    assert_null(the_fake.name);
    assert_int_equal(the_fake.header.n, 0);
    assert_int_equal(the_fake.on, 0);
    assert_int_equal(the_fake.hooked, 0);
    run_free(r);
    r = parse("--count", "10", "--size=9223372036854775807", "--ratio", "0.5", "--on",
              "--max-tasks", "7", "a.example", NULL);
    assert_ok(r);
    assert_int_equal(the_fake.count, 10);
    assert_true(the_fake.size == 9223372036854775807LL);
    assert_true(the_fake.ratio == 0.5);
    assert_int_equal(the_fake.on, 1);
    assert_int_equal(the_fake.hooked, 1);
    assert_int_equal(r->o.max_tasks, 7); /* the core's flags still parse */
    assert_int_equal(r->o.threads, 10);  /* what finish told the core */
    run_free(r);
    r = parse("--name", "w", "a.example", NULL);
    assert_ok(r);
    assert_string_equal(the_fake.name, "w");
    assert_int_equal(r->o.threads, 0);
    run_free(r);
    r = parse("--on", "--name", "w", "a.example", NULL);
    assert_usage_error(r, "--on refuses --name 'w'", NULL);
    run_free(r);
}

static void test_table_ranges(void **state)
{
    (void)state;
    use_fake();
    const char *bad[][3] = {{"--count", "0", "--count: 0 is out of range (1 to 10)"},
                            {"--count", "11", "--count: 11 is out of range (1 to 10)"},
                            {"--count", "two", "--count: 'two' is not a whole number"},
                            {"--size", "0", "--size: 0 is out of range (at least 1)"},
                            {"--size", "1.5", "--size: '1.5' is not a whole number"},
                            {"--ratio", "2.5", "--ratio: 2.5 is out of range (0.5 to 2)"},
                            {"--ratio", "0.4", "--ratio: 0.4 is out of range"},
                            {"--ratio", "nan", "--ratio: 'nan' is not a number of times"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        run *r = parse(bad[i][0], bad[i][1], "a.example", NULL);
        assert_usage_error(r, bad[i][2], NULL);
        run_free(r);
    }
    run *r = parse("--count", "1", "--ratio", "2", "--size", "1", "a.example", NULL);
    assert_ok(r);
    assert_int_equal(the_fake.count, 1);
    assert_true(the_fake.ratio == 2);
    run_free(r);
}

/* A repeatable flag keeps every value, in order; its hook checks each. */
static void test_table_repeatable(void **state)
{
    (void)state;
    use_fake();
    for (int round = 0; round < 2; round++) { /* parsed again: a fresh list */
        run *r = parse("--header", "A: 1", "a.example", "--header=B: 2", "--header", "A: 3", NULL);
        assert_ok(r);
        assert_int_equal(the_fake.header.n, 3);
        assert_string_equal(the_fake.header.v[0], "A: 1");
        assert_string_equal(the_fake.header.v[1], "B: 2");
        assert_string_equal(the_fake.header.v[2], "A: 3");
        assert_int_equal(r->o.nroots, 1);
        run_free(r);
        assert_int_equal(the_fake.header.n, 0); /* cli_table_free emptied it */
    }
    run *r = parse("--header", "A: 1", "--header", "no colon\n", "a.example", NULL);
    assert_usage_error(r, "--header 'no colon?': give \"Name: value\"", NULL);
    run_free(r);
}

/* The rules between flags (finish), and the table's files against the core's. */
static void test_table_rules_and_files(void **state)
{
    (void)state;
    use_fake();
    run *r = parse("--b", "b.out", "a.example", NULL);
    assert_usage_error(r, "--b 'b.out' needs --a: give --a too", NULL);
    run_free(r);
    r = parse("--a", "a.out", "--b", "b.out", "a.example", NULL);
    assert_ok(r);
    assert_string_equal(the_fake.a, "a.out");
    assert_string_equal(the_fake.b, "b.out");
    run_free(r);
    r = parse("--a", "same", "--b", "./same", "a.example", NULL);
    assert_usage_error(r, "--a 'same' and --b './same' are the same file", NULL);
    run_free(r);
    r = parse("--output", "same", "--a", "same", "a.example", NULL);
    assert_usage_error(r, "--output 'same' and --a 'same' are the same file", NULL);
    run_free(r);
    r = parse("--trace-events", "t.json", "--b", "t.json", "--a", "x", "a.example", NULL);
    assert_usage_error(r, "--trace-events 't.json' and --b 't.json' are the same file", NULL);
    run_free(r);
}

static void test_table_usage_errors(void **state)
{
    (void)state;
    use_fake();
    run *r = parse("--on=yes", "a.example", NULL);
    assert_usage_error(r, "option '--on' takes no value", NULL);
    run_free(r);
    r = parse("a.example", "--count", NULL);
    assert_usage_error(r, "option '--count' needs a value", NULL);
    run_free(r);
    r = parse("--bogus", "a.example", NULL); /* no note: the table is the stage's */
    assert_usage_error(r, "unknown option '--bogus' (see --help)", NULL);
    assert_null(strstr(r->err, NOTE));
    run_free(r);
    r = parse("--si", "5", "a.example", NULL); /* an abbreviation of a row */
    assert_ok(r);
    assert_int_equal(the_fake.size, 5);
    run_free(r);
}

/* --help lists the table's rows from the table: title, sections, metavars, every help
 * line at column 26; without the table, none of them. */
static void test_table_help(void **state)
{
    (void)state;
    run *r = parse("--help", NULL);
    assert_null(strstr(r->out, "The fake's own:"));
    assert_null(strstr(r->out, "--count"));
    run_free(r);
    use_fake();
    r = parse("--help", NULL);
    assert_int_equal(r->rc, CLI_EXIT_OK);
    const char *want[] = {
        "\nThe fake's own:\n",
        "\n      --count N           how many [3]\n",
        "\n      --size BYTES        how large\n",
        "\n\nNames:\n      --name WORD         first line\n"
        "                          second line\n",
        "\n      --header \"Name: value\"  sent on every request (repeatable)\n",
        "second line\n      --header",
        "(repeatable)\n\n      --on                switch it on\n",
        "--max-tasks N", /* the core's, still */
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        if (!strstr(r->out, want[i]))
            fail_msg("help lacks '%s' in:\n%s", want[i], r->out);
    assert_true(strstr(r->out, "--max-tasks") < strstr(r->out, "The fake's own:"));
    assert_true(strstr(r->out, "--b FILE") < strstr(r->out, "Exit status:"));
    run_free(r);
}

/* A flag planted in a table's rows and nowhere else: --help shows its words, choices,
 * range and default, all from the row; its value is checked against the same range
 * and choices; and a crawler that passes no table (stages 1 and 2) refuses it as an
 * unknown option, with the note saying where the engine's flags are. */
typedef struct planted {
    const char *mode;
    long span;
    int level;
    int fast;
} planted;
static const char *const modes[] = {"fast", "slow", NULL};
static const cli_flag planted_rows[] = {{.name = "planted-mode",
                                         .arg = CLI_ARG_CHOICE,
                                         .metavar = "NAME",
                                         .choices = modes,
                                         .offset = offsetof(planted, mode),
                                         .def = "fast",
                                         .help = "how to go:"},
                                        {.name = "planted-span",
                                         .arg = CLI_ARG_LONG,
                                         .metavar = "N",
                                         .min = 1,
                                         .max = 5,
                                         .show_range = true,
                                         .offset = offsetof(planted, span),
                                         .def = "2",
                                         .help = "how far"},
                                        {.name = "planted-level",
                                         .arg = CLI_ARG_COUNT,
                                         .offset = offsetof(planted, level),
                                         .help = "once more each time"},
                                        {.name = "planted-fast",
                                         .arg = CLI_ARG_NONE,
                                         .offset = offsetof(planted, fast),
                                         .needs = "planted-mode",
                                         .needs_why = "picks a --planted-mode",
                                         .help = "hurry"},
                                        {0}};
static const cli_table planted_table = {.title = "Planted:", .flags = planted_rows};

static void test_planted_row(void **state)
{
    (void)state;
    planted p = {0};
    parse_table = &planted_table;
    parse_settings = &p;
    run *r = parse("--help", NULL);
    const char *want[] = {
        "\n      --planted-mode NAME how to go: fast or slow [fast]\n",
        "\n      --planted-span N    how far, 1 to 5 [2]\n",
        "\n      --planted-level     once more each time\n",
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        if (!strstr(r->out, want[i]))
            fail_msg("help lacks '%s' in:\n%s", want[i], r->out);
    run_free(r);
    r = parse("--planted-mode", "slow", "--planted-span", "5", "--planted-level", "--planted-level",
              "a.example", NULL);
    assert_int_equal(r->rc, CLI_OK);
    assert_string_equal(p.mode, "slow");
    assert_int_equal(p.span, 5);
    assert_int_equal(p.level, 2);
    run_free(r);
    r = parse("--planted-span", "6", "a.example", NULL);
    assert_usage_error(r, "--planted-span: 6 is out of range (1 to 5)", NULL);
    run_free(r);
    p = (planted){0}; /* the table has no defaults: what the last parse set stays */
    r = parse("--planted-fast", "a.example", NULL); /* a requirement, declared in the row */
    assert_usage_error(r, "--planted-fast picks a --planted-mode: give --planted-mode too", NULL);
    run_free(r);
    r = parse("--planted-fast", "--planted-mode", "fast", "a.example", NULL);
    assert_int_equal(r->rc, CLI_OK);
    assert_int_equal(p.fast, 1);
    run_free(r);
    r = parse("--planted-mode", "medium", "a.example", NULL);
    assert_usage_error(r, "--planted-mode: unknown 'medium' (choose fast or slow)", NULL);
    run_free(r);
    parse_table = NULL;
    parse_settings = NULL;
    r = parse("--planted-mode", "slow", "a.example", NULL);
    assert_usage_error(r, "unknown option '--planted-mode' (see --help); " NOTE, NULL);
    run_free(r);
}

/* crawl-queue's --help lists every row of its table, with its value's name. */
static void test_help_lists_stage3_rows(void **state)
{
    (void)state;
    parse_table = &settings_table;
    run *r = parse("--help", NULL);
    assert_int_equal(r->rc, CLI_EXIT_OK);
    size_t rows = 0;
    for (const cli_flag *f = settings_table.flags; f->name; f++, rows++) {
        char line[128];
        snprintf(line, sizeof line, "      --%s%s%s", f->name, f->metavar ? " " : "",
                 f->metavar ? f->metavar : "");
        if (!strstr(r->out, line))
            fail_msg("crawl-queue's help lacks '%s'", line);
    }
    assert_true(rows >= 19);
    run_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_defaults, reset_log_level),
        cmocka_unit_test_teardown(test_default_transport_is_the_stages, reset_log_level),
        cmocka_unit_test_teardown(test_every_option_separate_values, reset_log_level),
        cmocka_unit_test_teardown(test_every_option_equals_form, reset_log_level),
        cmocka_unit_test_teardown(test_options_after_roots_and_last_wins, reset_log_level),
        cmocka_unit_test_teardown(test_exclude_repeatable, reset_log_level),
        cmocka_unit_test_teardown(test_spider_middleware_options, reset_log_level),
        cmocka_unit_test_teardown(test_verbose_and_quiet_set_log_level, reset_log_level),
        cmocka_unit_test_teardown(test_timeout_decimal_forms, reset_log_level),
        cmocka_unit_test_teardown(test_help, reset_log_level),
        cmocka_unit_test_teardown(test_help_wins_over_missing_root, reset_log_level),
        cmocka_unit_test_teardown(test_version, reset_log_level),
        cmocka_unit_test_teardown(test_not_a_whole_number, reset_log_level),
        cmocka_unit_test_teardown(test_out_of_range, reset_log_level),
        cmocka_unit_test_teardown(test_bad_timeout, reset_log_level),
        cmocka_unit_test_teardown(test_bad_choices, reset_log_level),
        cmocka_unit_test_teardown(test_bad_exclude_regex, reset_log_level),
        cmocka_unit_test_teardown(test_unknown_options, reset_log_level),
        cmocka_unit_test_teardown(test_value_given_to_a_flag, reset_log_level),
        cmocka_unit_test_teardown(test_missing_value, reset_log_level),
        cmocka_unit_test_teardown(test_no_root, reset_log_level),
        cmocka_unit_test_teardown(test_bad_roots, reset_log_level),
        cmocka_unit_test_teardown(test_bad_cacert, reset_log_level),
        cmocka_unit_test_teardown(test_output_and_trace_same_file, reset_log_level),
        cmocka_unit_test_teardown(test_callable_repeatedly, reset_log_level),
        cmocka_unit_test_teardown(test_stage3_options, reset_log_level),
        cmocka_unit_test_teardown(test_stage3_options_refused_by_chapter, reset_log_level),
        cmocka_unit_test_teardown(test_bad_user_agent, reset_log_level),
        cmocka_unit_test_teardown(test_help_stage3, reset_log_level),
        cmocka_unit_test_teardown(test_threads_and_dns_timeout, reset_log_level),
        cmocka_unit_test_teardown(test_header, reset_log_level),
        cmocka_unit_test_teardown(test_frontier, reset_log_level),
        cmocka_unit_test_teardown(test_politeness, reset_log_level),
        cmocka_unit_test_teardown(test_stage3_options_refused_by_chapter_stages, reset_log_level),
        cmocka_unit_test_teardown(test_archive_and_store_files, reset_log_level),
        cmocka_unit_test_teardown(test_table_values, reset_log_level),
        cmocka_unit_test_teardown(test_table_ranges, reset_log_level),
        cmocka_unit_test_teardown(test_table_repeatable, reset_log_level),
        cmocka_unit_test_teardown(test_table_rules_and_files, reset_log_level),
        cmocka_unit_test_teardown(test_table_usage_errors, reset_log_level),
        cmocka_unit_test_teardown(test_table_help, reset_log_level),
        cmocka_unit_test_teardown(test_planted_row, reset_log_level),
        cmocka_unit_test_teardown(test_help_lists_stage3_rows, reset_log_level),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
