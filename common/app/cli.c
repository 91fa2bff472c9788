/* cli.c — the command line every crawler shares: getopt_long over the core's flags and
 * the crawler's table (cli.h), strict validation, and usage errors as exactly one line
 * on stderr naming the bad argument.
 */
#include "cli.h"

#include "alloc.h"
#include "log.h"
#include "outpaths.h"
#include "pattern.h"
#include "selector.h"
#include "url.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef CRAWL_VERSION
#define CRAWL_VERSION "unknown"
#endif

/* Long-only options get values above any char, so getopt's optopt names them. */
enum {
    OPT_MAX_TASKS = 256,
    OPT_MAX_REDIRECT,
    OPT_MAX_TRIES,
    OPT_EXCLUDE,
    OPT_STRICT,
    OPT_LENIENT,
    OPT_SELECTOR,
    OPT_TRANSPORT,
    OPT_FORMAT,
    OPT_OUTPUT,
    OPT_TIMEOUT,
    OPT_MAX_PAGES,
    OPT_MAX_SIZE,
    OPT_CACERT,
    OPT_TRACE_EVENTS,
    OPT_TABLE = 512 /* + the row's index: a flag of the crawler's table */
};

static const struct option core_opts[] = {
    {"max-tasks", required_argument, NULL, OPT_MAX_TASKS},
    {"max-redirect", required_argument, NULL, OPT_MAX_REDIRECT},
    {"max-tries", required_argument, NULL, OPT_MAX_TRIES},
    {"exclude", required_argument, NULL, OPT_EXCLUDE},
    {"strict", no_argument, NULL, OPT_STRICT},
    {"lenient", no_argument, NULL, OPT_LENIENT},
    {"selector", required_argument, NULL, OPT_SELECTOR},
    {"transport", required_argument, NULL, OPT_TRANSPORT},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"output", required_argument, NULL, OPT_OUTPUT},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"max-pages", required_argument, NULL, OPT_MAX_PAGES},
    {"max-size", required_argument, NULL, OPT_MAX_SIZE},
    {"cacert", required_argument, NULL, OPT_CACERT},
    {"trace-events", required_argument, NULL, OPT_TRACE_EVENTS},
    {"verbose", no_argument, NULL, 'v'},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0}};

/* Leading ':' makes getopt return ':' (not '?') for a missing value. */
static const char short_opts[] = ":vqhV";

static const char *const transports[] = {"raw", "curl", NULL};
static const char *const formats[] = {"text", "jsonl", NULL};

#define DEFAULT_MAX_SIZE 16777216LL

/* Print "prog: message" as one line: control characters in the arguments that went
 * into the message (a newline in a ROOT, say) become '?'. */
static int usage_error(const char *prog, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int usage_error(const char *prog, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = xvasprintf(fmt, ap);
    va_end(ap);
    for (char *p = msg; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    fprintf(stderr, "%s: %s\n", prog, msg);
    free(msg);
    return CLI_USAGE;
}

/* The core's options and the table's rows, for getopt_long: made per parse. */
static struct option *long_opts;

static const char *opt_name(int val)
{
    for (const struct option *lo = long_opts; lo->name; lo++)
        if (lo->val == val)
            return lo->name;
    return "?";
}

static size_t count_rows(const cli_table *t)
{
    size_t n = 0;
    while (t && t->flags[n].name)
        n++;
    return n;
}

/* core_opts with the table's rows before its terminator. */
static struct option *make_long_opts(const cli_table *t)
{
    size_t ncore = sizeof core_opts / sizeof core_opts[0] - 1, nrows = count_rows(t);
    struct option *all = xcalloc(ncore + nrows + 1, sizeof *all);
    memcpy(all, core_opts, ncore * sizeof *all);
    for (size_t i = 0; i < nrows; i++)
        all[ncore + i] = (struct option){
            t->flags[i].name, t->flags[i].arg == CLI_ARG_NONE ? no_argument : required_argument,
            NULL, OPT_TABLE + (int)i};
    return all;
}

/* ---- values ----------------------------------------------------------------- */

/* A whole number in [lo, hi]: optional sign, decimal digits, nothing else. */
static int parse_whole(const char *prog, const char *opt, const char *arg, long long lo,
                       long long hi, long long *out)
{
    const char *p = arg;
    if (*p == '+' || *p == '-')
        p++;
    if (!isdigit((unsigned char)*p))
        return usage_error(prog, "--%s: '%s' is not a whole number", opt, arg);
    char *end;
    errno = 0;
    long long v = strtoll(arg, &end, 10);
    if (*end != '\0')
        return usage_error(prog, "--%s: '%s' is not a whole number", opt, arg);
    if (errno == ERANGE || v < lo || v > hi) {
        if (hi == LLONG_MAX || hi == LONG_MAX)
            return usage_error(prog, "--%s: %s is out of range (at least %lld)", opt, arg, lo);
        return usage_error(prog, "--%s: %s is out of range (%lld to %lld)", opt, arg, lo, hi);
    }
    *out = v;
    return CLI_OK;
}

static int parse_int(const char *prog, const char *opt, const char *arg, int lo, int hi, int *out)
{
    long long v;
    int rc = parse_whole(prog, opt, arg, lo, hi, &v);
    if (rc == CLI_OK)
        *out = (int)v;
    return rc;
}

/* The shortest --timeout: 1 ms. Less would round to 0 ms, which libcurl reads as
 * "no limit" (CURLOPT_TIMEOUT_MS) and the raw transport as "at once". */
#define MIN_TIMEOUT 0.001

/* A decimal number (no hex, inf or nan) lo <= t <= hi; what: "seconds" or "requests". */
static int parse_decimal(const char *prog, const char *opt, const char *arg, double lo, double hi,
                         const char *what, double *out)
{
    char *end = NULL;
    double t = 0;
    if (*arg != '\0' && arg[strspn(arg, "0123456789.eE+-")] == '\0')
        t = strtod(arg, &end);
    if (!end || end == arg || *end != '\0')
        return usage_error(prog, "--%s: '%s' is not a number of %s", opt, arg, what);
    if (!isfinite(t) || !(t >= lo) || t > hi)
        return usage_error(prog, "--%s: %s is out of range (%g to %g)", opt, arg, lo, hi);
    *out = t;
    return CLI_OK;
}

/* Seconds, MIN_TIMEOUT <= t <= 86400: --timeout. */
static int parse_seconds(const char *prog, const char *opt, const char *arg, double *out)
{
    return parse_decimal(prog, opt, arg, MIN_TIMEOUT, 86400, "seconds", out);
}

/* "a, b or c" from a NULL-terminated list. */
static void join_choices(const char *const *list, char *buf, size_t len)
{
    size_t n = 0;
    while (list[n])
        n++;
    buf[0] = '\0';
    size_t used = 0;
    for (size_t i = 0; i < n && used < len; i++) {
        const char *sep = i == 0 ? "" : (i + 1 == n ? " or " : ", ");
        int w = snprintf(buf + used, len - used, "%s%s", sep, list[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

/* arg must be one of list; returns the list's own string in *out. */
static int parse_choice(const char *prog, const char *opt, const char *arg, const char *const *list,
                        const char **out)
{
    for (size_t i = 0; list[i]; i++)
        if (strcmp(arg, list[i]) == 0) {
            *out = list[i];
            return CLI_OK;
        }
    char choices[256];
    join_choices(list, choices, sizeof choices);
    return usage_error(prog, "--%s: unknown '%s' (choose %s)", opt, arg, choices);
}

/* Catch a bad --exclude now, as bad usage, rather than later as a fatal error. */
static int check_regex(const char *prog, const char *arg)
{
    char why[256];
    pattern *re = pattern_compile(arg, why, sizeof why);
    if (re) {
        pattern_free(re);
        return CLI_OK;
    }
    return usage_error(prog, "--exclude: bad regex '%s': %s", arg, why);
}

/* ---- help ------------------------------------------------------------------- */

/* One row of a table: "--name METAVAR" in a column of 20 (or alone on its line when
 * longer than 24), its help lines at column 26. */
static void print_row(const cli_flag *f)
{
    char head[128];
    snprintf(head, sizeof head, "--%s%s%s", f->name, f->metavar ? " " : "",
             f->metavar ? f->metavar : "");
    size_t n = strlen(head);
    if (n <= 19)
        printf("      %-20s", head);
    else if (n <= 24)
        printf("      %s  ", head);
    else
        printf("      %s\n%26s", head, "");
    for (const char *line = f->help ? f->help : "";;) {
        size_t len = strcspn(line, "\n");
        printf("%.*s\n", (int)len, line);
        if (!line[len])
            break;
        line += len + 1;
        printf("%26s", "");
    }
}

static void print_help(const char *prog, const char *default_transport, const cli_table *t)
{
    char selectors[128];
    join_choices(selector_backends, selectors, sizeof selectors);
    printf("Usage: %s [options] ROOT...\n"
           "Crawl the web sites at ROOT... (http or https; \"http://\" is added when no\n"
           "scheme is given) and report every URL fetched.\n"
           "\n"
           "Options (default in brackets):\n"
           "      --max-tasks N       fetches in progress at once, 1 to 1000000 [100]\n"
           "      --max-redirect N    redirects followed per URL, 0 to 1000 [10]\n"
           "      --max-tries N       attempts per URL, 1 to 100 [4]\n"
           "      --exclude REGEX     skip URLs matching this regex (PCRE2 with limits:\n"
           "                          README.md; repeatable: any of them) [none]\n"
           "      --strict            only the roots' hosts, with or without www. [on]\n"
           "      --lenient           any host in the roots' domains [off]\n"
           "      --selector NAME     event loop backend: %s [%s]\n"
           "      --transport NAME    raw or curl [%s]\n"
           "      --format NAME       report format: text or jsonl [text]\n"
           "      --output FILE       write the report to FILE [stdout]\n"
           "      --timeout SECS      per request, 0.001 to 86400 [30]\n"
           "      --max-pages N       stop adding URLs after N, 0 = no limit [0]\n"
           "      --max-size BYTES    largest body read per URL [16777216]\n"
           "      --cacert FILE       CA certificates for https [system default]\n"
           "      --trace-events FILE write a Chrome trace-event timeline [none]\n"
           "  -v, --verbose           more messages on stderr (-vv for debug)\n"
           "  -q, --quiet             only errors on stderr (wins over -v)\n"
           "  -h, --help              show this help and exit\n"
           "  -V, --version           show the version and exit\n",
           prog, selectors, selector_backends[0] ? selector_backends[0] : "epoll",
           default_transport);
    if (t) {
        printf("\n%s\n", t->title);
        for (const cli_flag *f = t->flags; f->name; f++) {
            if (f->section) /* "": a blank line only */
                printf("\n%s%s", f->section, *f->section ? "\n" : "");
            print_row(f);
        }
    }
    printf("\nExit status: 0 crawl completed, 1 fatal error, 2 bad usage.\n");
}

/* ---- parsing ---------------------------------------------------------------- */

static void set_defaults(crawl_options *o, const char *default_transport)
{
    memset(o, 0, sizeof *o);
    o->max_tasks = 100;
    o->max_redirect = 10;
    o->max_tries = 4;
    o->strict = 1;
    o->selector = "epoll";
    o->transport = default_transport;
    o->format = "text";
    o->timeout = 30;
    o->max_size = DEFAULT_MAX_SIZE;
}

/* getopt returned '?': an unknown option, an ambiguous abbreviation, or a value given
 * to an option that takes none (optopt is then that option's val). An unknown long
 * option's line ends with the command's note (where the other options are). */
static int bad_option(const cli_command *cmd, int argc, char **argv)
{
    const char *prog = cmd->prog;
    const char *arg = (optind >= 1 && optind <= argc) ? argv[optind - 1] : "";
    if (optopt >= OPT_MAX_TASKS || (optopt && strchr("vqhV", optopt)))
        return usage_error(prog, "option '--%s' takes no value", opt_name(optopt));
    if (optopt)
        return usage_error(prog, "unknown option '-%c' (see --help)", optopt);
    size_t len = strcspn(arg, "=");
    int matches = 0;
    if (len > 2)
        for (const struct option *lo = long_opts; lo->name; lo++)
            matches += strncmp(lo->name, arg + 2, len - 2) == 0;
    if (matches > 1)
        return usage_error(prog, "option '%.*s' is ambiguous (see --help)", (int)len, arg);
    const char *note = cmd->unknown_note;
    return usage_error(prog, "unknown option '%.*s' (see --help)%s%s", (int)len, arg,
                       note ? "; " : "", note ? note : "");
}

void cli_list_clear(cli_list *l)
{
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

void cli_table_free(const cli_table *t, void *settings)
{
    for (size_t i = 0; settings && i < count_rows(t); i++)
        if (t->flags[i].arg == CLI_ARG_LIST)
            cli_list_clear((cli_list *)((char *)settings + t->flags[i].offset));
}

/* A flag of the crawler's table: its value parsed by its kind, stored at its offset,
 * then its own hook. */
static int apply_row(const cli_command *cmd, const cli_flag *f, const char *arg)
{
    const char *prog = cmd->prog;
    char *at = (char *)cmd->settings + f->offset;
    long long v = 0;
    int rc = CLI_OK;
    switch (f->arg) {
    case CLI_ARG_NONE: *(int *)at = 1; break;
    case CLI_ARG_INT:
        rc = parse_whole(prog, f->name, arg, (long long)f->min, (long long)f->max, &v);
        if (rc == CLI_OK)
            *(int *)at = (int)v;
        break;
    case CLI_ARG_BYTES:
        rc = parse_whole(prog, f->name, arg, (long long)f->min,
                         f->max > 0 ? (long long)f->max : LLONG_MAX, (long long *)at);
        break;
    case CLI_ARG_DOUBLE:
        rc = parse_decimal(prog, f->name, arg, f->min, f->max, f->noun ? f->noun : "seconds",
                           (double *)at);
        break;
    case CLI_ARG_STRING: *(const char **)at = arg; break;
    case CLI_ARG_LIST: {
        cli_list *l = (cli_list *)at;
        l->v = xreallocarray(l->v, l->n + 1, sizeof *l->v);
        l->v[l->n++] = arg;
        break;
    }
    }
    char why[512];
    if (rc == CLI_OK && f->set && f->set(cmd->settings, arg, why, sizeof why) < 0)
        return usage_error(prog, "%s", why);
    return rc;
}

/* One option with its value. */
static int apply_option(crawl_options *o, int c, const char *arg, const cli_command *cmd)
{
    const char *prog = cmd->prog;
    long long v = 0;
    int rc = CLI_OK;
    if (c >= OPT_TABLE)
        return apply_row(cmd, &cmd->table->flags[c - OPT_TABLE], arg);
    switch (c) {
    case OPT_MAX_TASKS: return parse_int(prog, "max-tasks", arg, 1, 1000000, &o->max_tasks);
    case OPT_MAX_REDIRECT: return parse_int(prog, "max-redirect", arg, 0, 1000, &o->max_redirect);
    case OPT_MAX_TRIES: return parse_int(prog, "max-tries", arg, 1, 100, &o->max_tries);
    case OPT_EXCLUDE:
        if (o->nexcludes == CRAWL_MAX_EXCLUDES)
            return usage_error(prog, "--exclude '%s': at most %d --exclude", arg,
                               CRAWL_MAX_EXCLUDES);
        if (!o->exclude)
            o->exclude = arg;
        o->excludes[o->nexcludes++] = arg;
        return check_regex(prog, arg);
    case OPT_STRICT: o->strict = 1; return CLI_OK;
    case OPT_LENIENT: o->strict = 0; return CLI_OK;
    case OPT_SELECTOR: return parse_choice(prog, "selector", arg, selector_backends, &o->selector);
    case OPT_TRANSPORT: return parse_choice(prog, "transport", arg, transports, &o->transport);
    case OPT_FORMAT: return parse_choice(prog, "format", arg, formats, &o->format);
    case OPT_OUTPUT: o->output = arg; return CLI_OK;
    case OPT_TIMEOUT: return parse_seconds(prog, "timeout", arg, &o->timeout);
    case OPT_MAX_PAGES:
        rc = parse_whole(prog, "max-pages", arg, 0, LONG_MAX, &v);
        if (rc == CLI_OK)
            o->max_pages = (long)v;
        return rc;
    case OPT_MAX_SIZE: return parse_whole(prog, "max-size", arg, 1, LLONG_MAX, &o->max_size);
    case OPT_CACERT: o->cacert = arg; return CLI_OK;
    case OPT_TRACE_EVENTS: o->trace_events = arg; return CLI_OK;
    case 'v': o->verbose++; return CLI_OK;
    case 'q': o->quiet = 1; return CLI_OK;
    case 'h': print_help(prog, cmd->default_transport, cmd->table); return CLI_EXIT_OK;
    case 'V': printf("%s %s\n", prog, CRAWL_VERSION); return CLI_EXIT_OK;
    default: return usage_error(prog, "unhandled option %d", c);
    }
}

static int check_roots(const crawl_options *o, const char *prog)
{
    if (o->nroots < 1)
        return usage_error(prog, "no ROOT given (see --help)");
    for (int i = 0; i < o->nroots; i++) {
        char err[256] = "";
        char *fixed = url_fix(o->roots[i], err, sizeof err);
        if (!fixed)
            return usage_error(prog, "ROOT '%s': %s", o->roots[i], err[0] ? err : "not a URL");
        free(fixed);
    }
    return CLI_OK;
}

/* ---- files --------------------------------------------------------------------- */

/* The files named on the command line: --cacert must be readable now (on either
 * transport: a typo is caught before the crawl, not as a certificate error per
 * fetch). The outputs: check_outputs, below. */
static int check_files(const crawl_options *o, const char *prog)
{
    if (o->cacert) {
        int fd = open(o->cacert, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0)
            return usage_error(prog, "--cacert: cannot read '%s': %s", o->cacert, strerror(errno));
        bool dir = fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
        close(fd);
        if (dir)
            return usage_error(prog,
                               "--cacert: '%s' is a directory, not a file of "
                               "certificates",
                               o->cacert);
    }
    return CLI_OK;
}

/* Every file the crawl writes — --output, --trace-events and the table's rows marked
 * out_file — against one another and stdout (outpaths.h): no two may be one file (two
 * streams writing one file each from its own offset garble both; SQLite deletes its
 * -wal file). */
static int check_outputs(const crawl_options *o, const cli_command *cmd)
{
    bool to_stdout = !o->output || strcmp(o->output, "-") == 0;
    size_t n;
    cli_output *out = cli_outputs(o, cmd, &n);
    char err[1024];
    int rc = CLI_OK;
    if (cli_check_outputs(out, n, to_stdout, err, sizeof err) < 0)
        rc = usage_error(cmd->prog, "%s", err);
    free(out);
    return rc;
}

/* The table's rules between flags, and what the core must know of them. */
static int finish_table(crawl_options *o, const cli_command *cmd)
{
    char why[512];
    if (cmd->table->finish && cmd->table->finish(cmd->settings, o, why, sizeof why) < 0)
        return usage_error(cmd->prog, "%s", why);
    return CLI_OK;
}

/* The crawler logs in nowhere: a root's "user:password@" is dropped (url.h), which the
 * user hears of, without the password being shown. */
static void warn_userinfo(const crawl_options *o, const char *prog)
{
    for (int i = 0; i < o->nroots; i++) {
        if (!url_has_userinfo(o->roots[i]))
            continue;
        char err[256];
        char *fixed = url_fix(o->roots[i], err, sizeof err);
        log_warn("%s: ROOT %s: the user name and password are dropped (the crawler does "
                 "not log in)",
                 prog, fixed ? fixed : "?");
        free(fixed);
    }
}

static void set_log_level(const crawl_options *o)
{
    if (o->quiet)
        log_level = LOG_ERROR;
    else if (o->verbose >= 2)
        log_level = LOG_DEBUG;
    else if (o->verbose == 1)
        log_level = LOG_INFO;
    else
        log_level = LOG_WARN;
}

int cli_parse(crawl_options *o, int argc, char **argv, const cli_command *in)
{
    cli_command cmd = *in;
    if (!cmd.prog)
        cmd.prog = "crawl";
    if (!cmd.default_transport)
        cmd.default_transport = "raw";
    if (!cmd.settings)
        cmd.table = NULL;
    const char *prog = cmd.prog;
    set_defaults(o, cmd.default_transport);
    if (cmd.table && cmd.table->defaults)
        cmd.table->defaults(cmd.settings);
    if (argc < 1 || !argv)
        return usage_error(prog, "no ROOT given (see --help)");

    long_opts = make_long_opts(cmd.table);
    optind = 0; /* GNU: full reinitialisation, so cli_parse can run again */
    opterr = 0; /* our own messages, one line each */
    int c, rc = CLI_OK;
    while (rc == CLI_OK && (c = getopt_long(argc, argv, short_opts, long_opts, NULL)) != -1) {
        if (c == ':')
            rc = usage_error(prog, "option '--%s' needs a value", opt_name(optopt));
        else if (c == '?')
            rc = bad_option(&cmd, argc, argv);
        else
            rc = apply_option(o, c, optarg, &cmd);
    }
    free(long_opts);
    long_opts = NULL;
    if (rc != CLI_OK)
        return rc;
    o->roots = argv + optind;
    o->nroots = argc - optind;
    rc = check_roots(o, prog);
    if (rc == CLI_OK)
        rc = check_files(o, prog);
    if (rc == CLI_OK && cmd.table)
        rc = finish_table(o, &cmd);
    if (rc == CLI_OK)
        rc = check_outputs(o, &cmd);
    if (rc != CLI_OK)
        return rc;
    set_log_level(o);
    warn_userinfo(o, prog);
    return CLI_OK;
}
