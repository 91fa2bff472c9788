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

/* getopt's values: above any char, so that optopt names the option. */
enum {
    OPT_CORE = 256,   /* + the row's index: a flag of the core's rows */
    OPT_TABLE = 512,  /* + the row's index: a flag of the crawler's table */
    OPT_GROUP = 1024, /* + the row's index among all groups' rows: a group's flag */
};

static const char *const transports[] = {"raw", "curl", NULL};
static const char *const formats[] = {"text", "jsonl", NULL};

static int set_exclude(void *o, const char *arg, char *why, size_t whylen);

/* The shortest --timeout: 1 ms. Less would round to 0 ms, which libcurl reads as
 * "no limit" (CURLOPT_TIMEOUT_MS) and the raw transport as "at once". */
#define MIN_TIMEOUT 0.001

#define AT(field)  offsetof(crawl_options, field)
#define CLI_ACTION ((size_t)-1) /* --help and --version: no value, an action */

/* The crawl core's flags, in --help's order; help, range and default said once here.
 * One row per flag, read as a table: clang-format would put each field on a line. */
/* clang-format off */
static const cli_flag core_rows[] = {
    {.name = "max-tasks", .arg = CLI_ARG_INT, .metavar = "N", .min = 1, .max = 1000000,
     .offset = AT(max_tasks), .show_range = true, .def = "",
     .help = "fetches in progress at once"},
    {.name = "max-redirect", .arg = CLI_ARG_INT, .metavar = "N", .min = 0, .max = 1000,
     .offset = AT(max_redirect), .show_range = true, .def = "",
     .help = "redirects followed per URL"},
    {.name = "max-tries", .arg = CLI_ARG_INT, .metavar = "N", .min = 1, .max = 100,
     .offset = AT(max_tries), .show_range = true, .def = "", .help = "attempts per URL"},
    {.name = "exclude", .arg = CLI_ARG_VALUE, .metavar = "REGEX", .set = set_exclude,
     .def = "none",
     .help = "skip URLs matching this regex (PCRE2 with limits:\n"
             "README.md; repeatable: any of them)"},
    {.name = "strict", .arg = CLI_ARG_NONE, .offset = AT(strict), .def = "on",
     .help = "only the roots' hosts, with or without www."},
    {.name = "lenient", .arg = CLI_ARG_NONE, .offset = AT(strict), .clears = true, .def = "off",
     .help = "any host in the roots' domains"},
    {.name = "selector", .arg = CLI_ARG_CHOICE, .metavar = "NAME", .offset = AT(selector),
     .choices = selector_backends, .def = "", .help = "event loop backend:"},
    {.name = "transport", .arg = CLI_ARG_CHOICE, .metavar = "NAME", .offset = AT(transport),
     .choices = transports, .def = "", .help = ""},
    {.name = "format", .arg = CLI_ARG_CHOICE, .metavar = "NAME", .offset = AT(format),
     .choices = formats, .def = "", .help = "report format:"},
    {.name = "output", .arg = CLI_ARG_STRING, .metavar = "FILE", .offset = AT(output),
     .def = "stdout", .help = "write the report to FILE"},
    {.name = "timeout", .arg = CLI_ARG_DOUBLE, .metavar = "SECS", .min = MIN_TIMEOUT, .max = 86400,
     .offset = AT(timeout), .show_range = true, .def = "", .help = "per request"},
    {.name = "max-pages", .arg = CLI_ARG_LONG, .metavar = "N", .min = 0, .max = 0,
     .offset = AT(max_pages), .def = "", .help = "stop adding URLs after N, 0 = no limit"},
    {.name = "max-size", .arg = CLI_ARG_BYTES, .metavar = "BYTES", .min = 1, .max = 0,
     .offset = AT(max_size), .def = "", .help = "largest body read per URL"},
    {.name = "cacert", .arg = CLI_ARG_STRING, .metavar = "FILE", .offset = AT(cacert),
     .def = "system default", .help = "CA certificates for https"},
    {.name = "trace-events", .arg = CLI_ARG_STRING, .metavar = "FILE", .offset = AT(trace_events),
     .def = "none", .help = "write a Chrome trace-event timeline"},
    {.name = "verbose", .arg = CLI_ARG_COUNT, .short_name = 'v', .offset = AT(verbose),
     .help = "more messages on stderr (-vv for debug)"},
    {.name = "quiet", .arg = CLI_ARG_NONE, .short_name = 'q', .offset = AT(quiet),
     .help = "only errors on stderr (wins over -v)"},
    {.name = "help", .arg = CLI_ARG_NONE, .short_name = 'h', .offset = CLI_ACTION,
     .help = "show this help and exit"},
    {.name = "version", .arg = CLI_ARG_NONE, .short_name = 'V', .offset = CLI_ACTION,
     .help = "show the version and exit"},
    {.name = NULL},
};
/* clang-format on */

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

static const cli_flag *core_row(int c);

static const char *opt_name(int val)
{
    for (const struct option *lo = long_opts; lo->name; lo++)
        if (lo->val == val)
            return lo->name;
    const cli_flag *f = core_row(val);
    return f ? f->name : "?";
}

static size_t count_rows(const cli_table *t)
{
    size_t n = 0;
    while (t && t->flags[n].name)
        n++;
    return n;
}

static bool takes_value(const cli_flag *f)
{
    return f->arg != CLI_ARG_NONE && f->arg != CLI_ARG_COUNT;
}

/* The table's groups of rows (cli_group), *n of them. */
static const cli_group *groups_of(const cli_table *t, size_t *n)
{
    *n = 0;
    return t && t->groups ? t->groups(n) : NULL;
}

/* The row for a group's value k (its index among all the groups' rows), and its base. */
static const cli_flag *group_row(const cli_table *t, size_t k, void **base)
{
    size_t n;
    const cli_group *g = groups_of(t, &n);
    for (size_t i = 0; i < n; i++) {
        for (const cli_flag *f = g[i].flags; f && f->name; f++, k--)
            if (k == 0) {
                *base = g[i].base;
                return f;
            }
    }
    return NULL;
}

/* The core's rows, then the table's, then its groups', for getopt_long. */
static struct option *make_long_opts(const cli_table *t)
{
    size_t ncore = sizeof core_rows / sizeof core_rows[0] - 1, nrows = count_rows(t), ngroups;
    const cli_group *groups = groups_of(t, &ngroups);
    size_t ngrouped = 0;
    for (size_t i = 0; i < ngroups; i++)
        for (const cli_flag *f = groups[i].flags; f && f->name; f++)
            ngrouped++;
    struct option *all = xcalloc(ncore + nrows + ngrouped + 1, sizeof *all);
    size_t k = ncore + nrows;
    for (size_t i = 0; i < ngroups; i++)
        for (const cli_flag *f = groups[i].flags; f && f->name; f++, k++)
            all[k] = (struct option){f->name, takes_value(f) ? required_argument : no_argument,
                                     NULL, OPT_GROUP + (int)(k - ncore - nrows)};
    for (size_t i = 0; i < ncore; i++)
        all[i] = (struct option){core_rows[i].name,
                                 takes_value(&core_rows[i]) ? required_argument : no_argument, NULL,
                                 OPT_CORE + (int)i};
    for (size_t i = 0; i < nrows; i++)
        all[ncore + i] = (struct option){
            t->flags[i].name, takes_value(&t->flags[i]) ? required_argument : no_argument, NULL,
            OPT_TABLE + (int)i};
    return all;
}

/* getopt's short options: ':' first (a missing value is ':', not '?'), then each core
 * row's letter (none takes a value). */
static const char *short_options(void)
{
    static char buf[32] = ":";
    size_t n = 1;
    for (const cli_flag *f = core_rows; f->name && n + 1 < sizeof buf; f++)
        if (f->short_name)
            buf[n++] = f->short_name;
    buf[n] = '\0';
    return buf;
}

/* The core's row for getopt's value c (a long option's, or a short letter's). */
static const cli_flag *core_row(int c)
{
    size_t ncore = sizeof core_rows / sizeof core_rows[0] - 1;
    if (c >= OPT_CORE && c < OPT_CORE + (int)ncore)
        return &core_rows[c - OPT_CORE];
    for (const cli_flag *f = core_rows; f->name; f++)
        if (c && f->short_name == c)
            return f;
    return NULL;
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

/* ---- help ------------------------------------------------------------------- */

/* A row's value in base (its defaults), as --help shows it. */
static void format_value(const cli_flag *f, const void *base, char *buf, size_t len)
{
    const char *at = (const char *)base + f->offset;
    switch (f->arg) {
    case CLI_ARG_INT: snprintf(buf, len, "%d", *(const int *)at); break;
    case CLI_ARG_LONG: snprintf(buf, len, "%ld", *(const long *)at); break;
    case CLI_ARG_BYTES: snprintf(buf, len, "%lld", *(const long long *)at); break;
    case CLI_ARG_DOUBLE: snprintf(buf, len, "%g", *(const double *)at); break;
    case CLI_ARG_STRING:
    case CLI_ARG_CHOICE: snprintf(buf, len, "%s", *(const char *const *)at); break;
    default: snprintf(buf, len, "?"); break;
    }
}

/* A row's help as --help prints it: its words, its choices ("raw or curl"), its range
 * (", 1 to 100") and its default in brackets, each from the row (the default from
 * defaults, the struct before parsing, when the row says ""). malloc'd. */
static char *row_help(const cli_flag *f, const void *defaults)
{
    char choices[256] = "", range[96] = "", def[160] = "";
    if (f->arg == CLI_ARG_CHOICE) {
        join_choices(f->choices, choices + 1, sizeof choices - 1);
        choices[0] = ' ';
    }
    if (f->show_range && f->arg == CLI_ARG_DOUBLE)
        snprintf(range, sizeof range, ", %g to %g", f->min, f->max);
    else if (f->show_range)
        snprintf(range, sizeof range, ", %lld to %lld", (long long)f->min, (long long)f->max);
    if (f->def && f->def[0])
        snprintf(def, sizeof def, " [%s]", f->def);
    else if (f->def && defaults) {
        char v[128];
        format_value(f, defaults, v, sizeof v);
        snprintf(def, sizeof def, " [%s]", v);
    }
    const char *words = f->help ? f->help : "";
    return xasprintf("%s%s%s%s", words, words[0] ? choices : choices + (choices[0] != 0), range,
                     def);
}

/* One row: "--name METAVAR" (after "-x, " when it has a letter) in a column of 20 (or
 * alone on its line when longer than 24), its help lines at column 26. */
static void print_row(const cli_flag *f, const void *defaults)
{
    char head[128], lead[8] = "      ";
    snprintf(head, sizeof head, "--%s%s%s", f->name, f->metavar ? " " : "",
             f->metavar ? f->metavar : "");
    if (f->short_name)
        snprintf(lead, sizeof lead, "  -%c, ", f->short_name);
    size_t n = strlen(head);
    if (n <= 19)
        printf("%s%-20s", lead, head);
    else if (n <= 24)
        printf("%s%s  ", lead, head);
    else
        printf("%s%s\n%26s", lead, head, "");
    char *help = row_help(f, defaults);
    for (const char *line = help;;) {
        size_t len = strcspn(line, "\n");
        printf("%.*s\n", (int)len, line);
        if (!line[len])
            break;
        line += len + 1;
        printf("%26s", "");
    }
    free(help);
}

static void set_defaults(crawl_options *o, const char *default_transport);

static void print_help(const char *prog, const char *default_transport, const cli_table *t)
{
    crawl_options defaults;
    set_defaults(&defaults, default_transport);
    printf("Usage: %s [options] ROOT...\n"
           "Crawl the web sites at ROOT... (http or https; \"http://\" is added when no\n"
           "scheme is given) and report every URL fetched.\n"
           "\n"
           "Options (default in brackets):\n",
           prog);
    for (const cli_flag *f = core_rows; f->name; f++)
        print_row(f, &defaults);
    if (t) {
        printf("\n%s\n", t->title);
        for (const cli_flag *f = t->flags; f->name; f++) {
            if (f->section) /* "": a blank line only */
                printf("\n%s%s", f->section, *f->section ? "\n" : "");
            print_row(f, NULL);
        }
        size_t n;
        const cli_group *g = groups_of(t, &n);
        for (size_t i = 0; i < n; i++) {
            if (g[i].title)
                printf("\n%s\n", g[i].title);
            for (const cli_flag *f = g[i].flags; f && f->name; f++)
                print_row(f, NULL);
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
    if (optopt >= OPT_CORE || core_row(optopt))
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
    size_t n;
    const cli_group *g = groups_of(t, &n);
    for (size_t i = 0; i < n; i++)
        for (const cli_flag *f = g[i].flags; f && f->name; f++)
            if (f->arg == CLI_ARG_LIST)
                cli_list_clear((cli_list *)((char *)g[i].base + f->offset));
}

/* A flag's row: its value parsed by its kind, stored at its offset in base (the core's
 * options or the crawler's struct), then its own hook. */
static int apply_row(const char *prog, const cli_flag *f, void *base, const char *arg)
{
    char *at = (char *)base + f->offset;
    long long v = 0;
    int rc = CLI_OK;
    switch (f->arg) {
    case CLI_ARG_NONE: *(int *)at = f->clears ? 0 : 1; break;
    case CLI_ARG_COUNT: (*(int *)at)++; break;
    case CLI_ARG_INT:
        rc = parse_whole(prog, f->name, arg, (long long)f->min, (long long)f->max, &v);
        if (rc == CLI_OK)
            *(int *)at = (int)v;
        break;
    case CLI_ARG_LONG:
        rc = parse_whole(prog, f->name, arg, (long long)f->min,
                         f->max > 0 ? (long long)f->max : LONG_MAX, &v);
        if (rc == CLI_OK)
            *(long *)at = (long)v;
        break;
    case CLI_ARG_BYTES:
        rc = parse_whole(prog, f->name, arg, (long long)f->min,
                         f->max > 0 ? (long long)f->max : LLONG_MAX, (long long *)at);
        break;
    case CLI_ARG_DOUBLE:
        rc = parse_decimal(prog, f->name, arg, f->min, f->max, f->noun ? f->noun : "seconds",
                           (double *)at);
        break;
    case CLI_ARG_CHOICE:
        rc = parse_choice(prog, f->name, arg, f->choices, (const char **)at);
        break;
    case CLI_ARG_STRING: *(const char **)at = arg; break;
    case CLI_ARG_LIST: {
        cli_list *l = (cli_list *)at;
        l->v = xreallocarray(l->v, l->n + 1, sizeof *l->v);
        l->v[l->n++] = arg;
        break;
    }
    case CLI_ARG_VALUE: break;
    }
    char why[512];
    if (rc == CLI_OK && f->set && f->set(base, arg, why, sizeof why) < 0)
        return usage_error(prog, "%s", why);
    return rc;
}

/* --exclude REGEX, repeatable: the first one is o->exclude; each must compile now (bad
 * usage, not later a fatal error). */
static int set_exclude(void *p, const char *arg, char *why, size_t whylen)
{
    crawl_options *o = p;
    if (o->nexcludes == CRAWL_MAX_EXCLUDES) {
        snprintf(why, whylen, "--exclude '%s': at most %d --exclude", arg, CRAWL_MAX_EXCLUDES);
        return -1;
    }
    if (!o->exclude)
        o->exclude = arg;
    o->excludes[o->nexcludes++] = arg;
    return pattern_check("--exclude", arg, why,
                         whylen); /* bad usage now, not a fatal error later */
}

/* One option with its value: a row of the table, or of the core (--help and --version
 * act at once). */
static int apply_option(crawl_options *o, int c, const char *arg, const cli_command *cmd)
{
    if (c >= OPT_GROUP) {
        void *base = NULL;
        const cli_flag *g = group_row(cmd->table, (size_t)(c - OPT_GROUP), &base);
        return g ? apply_row(cmd->prog, g, base, arg)
                 : usage_error(cmd->prog, "unhandled option %d", c);
    }
    if (c >= OPT_TABLE)
        return apply_row(cmd->prog, &cmd->table->flags[c - OPT_TABLE], cmd->settings, arg);
    const cli_flag *f = core_row(c);
    if (!f)
        return usage_error(cmd->prog, "unhandled option %d", c);
    if (f->offset != CLI_ACTION)
        return apply_row(cmd->prog, f, o, arg);
    if (f->short_name == 'h')
        print_help(cmd->prog, cmd->default_transport, cmd->table);
    else
        printf("%s %s\n", cmd->prog, CRAWL_VERSION);
    return CLI_EXIT_OK;
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

/* Whether a row's value in base is set: a switch on, a number not 0, a string, a list
 * not empty. */
static bool row_is_set(const cli_flag *f, const void *base)
{
    const char *at = (const char *)base + f->offset;
    switch (f->arg) {
    case CLI_ARG_NONE:
    case CLI_ARG_COUNT:
    case CLI_ARG_INT: return *(const int *)at != 0;
    case CLI_ARG_LONG: return *(const long *)at != 0;
    case CLI_ARG_BYTES: return *(const long long *)at != 0;
    case CLI_ARG_DOUBLE: return *(const double *)at != 0;
    case CLI_ARG_STRING:
    case CLI_ARG_CHOICE: return *(const char *const *)at != NULL;
    case CLI_ARG_LIST: return ((const cli_list *)at)->n > 0;
    case CLI_ARG_VALUE: return true;
    }
    return true;
}

/* Row k of the table's rows then its groups' (*base: the struct it fills); NULL past
 * the last. */
static const cli_flag *any_row(const cli_command *cmd, size_t k, void **base)
{
    size_t nrows = count_rows(cmd->table);
    if (k < nrows) {
        *base = cmd->settings;
        return &cmd->table->flags[k];
    }
    return group_row(cmd->table, k - nrows, base);
}

/* The requirements the rows declare (cli_flag's needs), for the rows given (given[k]:
 * any_row's k). A row needs a row of the table or of a group, by name. */
static int check_needs(const cli_command *cmd, const bool *given)
{
    const cli_flag *f, *other;
    void *base, *obase;
    for (size_t k = 0; (f = any_row(cmd, k, &base)); k++) {
        if (!given[k] || !f->needs)
            continue;
        for (size_t j = 0; (other = any_row(cmd, j, &obase)); j++)
            if (strcmp(other->name, f->needs) == 0)
                break;
        if (other && row_is_set(other, obase))
            continue;
        const char *value = f->arg == CLI_ARG_STRING
            ? *(const char *const *)((const char *)base + f->offset)
            : NULL;
        return usage_error(cmd->prog, "--%s%s%s%s %s: give --%s too", f->name, value ? " '" : "",
                           value ? value : "", value ? "'" : "",
                           f->needs_why ? f->needs_why : "needs it", f->needs);
    }
    return CLI_OK;
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
    size_t ngroups;
    const cli_group *groups = groups_of(cmd.table, &ngroups);
    for (size_t i = 0; i < ngroups; i++) {
        memset(groups[i].base, 0, groups[i].size);
        if (groups[i].defaults)
            groups[i].defaults(groups[i].base);
    }
    if (argc < 1 || !argv)
        return usage_error(prog, "no ROOT given (see --help)");

    long_opts = make_long_opts(cmd.table);
    optind = 0; /* GNU: full reinitialisation, so cli_parse can run again */
    opterr = 0; /* our own messages, one line each */
    int c, rc = CLI_OK;
    const char *short_opts = short_options();
    size_t nrows = count_rows(cmd.table), ngrouped = 0;
    for (size_t i = 0; i < ngroups; i++)
        for (const cli_flag *f = groups[i].flags; f && f->name; f++)
            ngrouped++;
    bool *given = xcalloc(nrows + ngrouped + 1, sizeof *given);
    while (rc == CLI_OK && (c = getopt_long(argc, argv, short_opts, long_opts, NULL)) != -1) {
        if (c == ':')
            rc = usage_error(prog, "option '--%s' needs a value", opt_name(optopt));
        else if (c == '?')
            rc = bad_option(&cmd, argc, argv);
        else
            rc = apply_option(o, c, optarg, &cmd);
        if (c >= OPT_GROUP && (size_t)(c - OPT_GROUP) < ngrouped)
            given[nrows + (size_t)(c - OPT_GROUP)] = true;
        else if (c >= OPT_TABLE && c < OPT_GROUP)
            given[c - OPT_TABLE] = true;
    }
    free(long_opts);
    long_opts = NULL;
    if (rc == CLI_OK && cmd.table)
        rc = check_needs(&cmd, given);
    free(given);
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
