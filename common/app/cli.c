/* cli.c — the command line of the three crawlers: getopt_long, strict validation,
 * and usage errors as exactly one line on stderr naming the bad argument.
 */
#include "cli.h"

#include "alloc.h"
#include "http.h"
#include "log.h"
#include "selector.h"
#include "threadpool.h"
#include "url.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef CRAWL_VERSION
#define CRAWL_VERSION "unknown"
#endif

/* Long-only options get values above any char, so getopt's optopt names them. */
enum {
    OPT_MAX_TASKS = 256, OPT_MAX_REDIRECT, OPT_MAX_TRIES, OPT_EXCLUDE, OPT_STRICT,
    OPT_LENIENT, OPT_SELECTOR, OPT_TRANSPORT, OPT_FORMAT, OPT_OUTPUT, OPT_TIMEOUT,
    OPT_MAX_PAGES, OPT_MAX_SIZE, OPT_CACERT, OPT_TRACE_EVENTS, OPT_USER_AGENT, OPT_THREADS,
    OPT_DNS_TIMEOUT, OPT_STORE, OPT_IGNORE_ROBOTS, OPT_WARC, OPT_CDX, OPT_STATE, OPT_RESUME,
    OPT_FRONTIER, OPT_CLAIM_AFTER, OPT_PER_HOST, OPT_PER_IP, OPT_DELAY, OPT_RANDOM_DELAY,
    OPT_MAX_CRAWL_DELAY, OPT_AUTOTHROTTLE, OPT_TARGET_CONCURRENCY, OPT_SITEMAPS,
    OPT_HEADER
};

static const struct option long_opts[] = {
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
    {"user-agent", required_argument, NULL, OPT_USER_AGENT},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"dns-timeout", required_argument, NULL, OPT_DNS_TIMEOUT},
    {"store", required_argument, NULL, OPT_STORE},
    {"warc", required_argument, NULL, OPT_WARC},
    {"cdx", required_argument, NULL, OPT_CDX},
    {"state", required_argument, NULL, OPT_STATE},
    {"resume", no_argument, NULL, OPT_RESUME},
    {"frontier", required_argument, NULL, OPT_FRONTIER},
    {"claim-after", required_argument, NULL, OPT_CLAIM_AFTER},
    {"ignore-robots", no_argument, NULL, OPT_IGNORE_ROBOTS},
    {"per-host", required_argument, NULL, OPT_PER_HOST},
    {"per-ip", no_argument, NULL, OPT_PER_IP},
    {"delay", required_argument, NULL, OPT_DELAY},
    {"random-delay", no_argument, NULL, OPT_RANDOM_DELAY},
    {"max-crawl-delay", required_argument, NULL, OPT_MAX_CRAWL_DELAY},
    {"autothrottle", no_argument, NULL, OPT_AUTOTHROTTLE},
    {"target-concurrency", required_argument, NULL, OPT_TARGET_CONCURRENCY},
    {"sitemaps", no_argument, NULL, OPT_SITEMAPS},
    {"header", required_argument, NULL, OPT_HEADER},
    {"verbose", no_argument, NULL, 'v'},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0}
};

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

static const char *opt_name(int val)
{
    for (const struct option *lo = long_opts; lo->name; lo++)
        if (lo->val == val)
            return lo->name;
    return "?";
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
            return usage_error(prog, "--%s: %s is out of range (at least %lld)", opt, arg,
                               lo);
        return usage_error(prog, "--%s: %s is out of range (%lld to %lld)", opt, arg, lo,
                           hi);
    }
    *out = v;
    return CLI_OK;
}

static int parse_int(const char *prog, const char *opt, const char *arg, int lo, int hi,
                     int *out)
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
static int parse_decimal(const char *prog, const char *opt, const char *arg, double lo,
                         double hi, const char *what, double *out)
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

/* Seconds, MIN_TIMEOUT <= t <= 86400: --timeout, --dns-timeout, --claim-after. */
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
static int parse_choice(const char *prog, const char *opt, const char *arg,
                        const char *const *list, const char **out)
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
    regex_t re;
    int rc = regcomp(&re, arg, REG_EXTENDED | REG_NOSUB);
    if (rc == 0) {
        regfree(&re);
        return CLI_OK;
    }
    char why[128];
    regerror(rc, &re, why, sizeof why);
    return usage_error(prog, "--exclude: bad regex '%s': %s", arg, why);
}

/* A User-Agent header value: printable ASCII (no control character could end the
 * header early), 1 to 256 characters, no space at either end. */
static int check_user_agent(const char *prog, const char *arg)
{
    size_t n = strlen(arg);
    bool printable = true;
    for (const char *p = arg; *p; p++)
        printable &= *p >= 0x20 && *p < 0x7f;
    if (n == 0 || n > 256 || !printable || arg[0] == ' ' || arg[n - 1] == ' ')
        return usage_error(prog, "--user-agent: '%s' is not a User-Agent (printable ASCII, "
                           "1 to 256 characters, no space at either end)", arg);
    return CLI_OK;
}

/* --header "Name: value": a field both transports can send (http_field_check); not
 * User-Agent, which --user-agent gives (it picks the robots.txt group too); each name
 * once (a field's values are joined with ", " in one, RFC 9110 5.3). */
static int add_header(crawl_options *o, const char *prog, const char *arg)
{
    const char *why = http_field_check(arg);
    size_t n = http_field_name_len(arg);
    if (why)
        return usage_error(prog, "--header '%s': %s", arg, why);
    if (n == 10 && strncasecmp(arg, "User-Agent", n) == 0)
        return usage_error(prog, "--header '%s': give --user-agent (it also picks the "
                           "robots.txt group)", arg);
    for (int i = 0; i < o->nheaders; i++)
        if (http_field_name_len(o->headers[i]) == n && strncasecmp(o->headers[i], arg, n) == 0)
            return usage_error(prog, "--header '%s': %.*s given twice (join the values with "
                               "', ' in one)", arg, (int)n, arg);
    if (o->nheaders == CRAWL_MAX_HEADERS)
        return usage_error(prog, "--header '%s': at most %d --header", arg, CRAWL_MAX_HEADERS);
    o->headers[o->nheaders++] = arg;
    return CLI_OK;
}

/* ---- help ------------------------------------------------------------------- */

static void print_help(const char *prog, const char *default_transport, cli_stage stage)
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
           "      --exclude REGEX     skip URLs matching this POSIX extended regex [none]\n"
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
    if (stage == CLI_STAGE3)
        printf("\n"
               "crawl-queue's engine:\n"
               "      --user-agent NAME   the User-Agent sent; its product token (the letters\n"
               "                          before a '/') picks the robots.txt group\n"
               "                          [crawlstages/%s]\n"
               "      --ignore-robots     fetch what robots.txt forbids [obey robots.txt]\n"
               "      --header \"Name: value\"\n"
               "                          send this header field on every request\n"
               "                          (repeatable; docs/extensions.md) [none]\n"
               "      --store FILE.db     store every record, headers and body in SQLite\n"
               "                          (docs/storage.md) [none]\n"
               "      --warc FILE         archive every response in WARC/1.1, as it came\n"
               "                          over the wire; FILE.gz: gzip per record\n"
               "                          (docs/warc.md) [none]\n"
               "      --cdx FILE          with --warc: a CDXJ index of it [none]\n"
               "      --state FILE.db     keep the crawl's frontier in SQLite, so that a\n"
               "                          crawl stopped (even by kill -9) can --resume;\n"
               "                          needs --format jsonl --output FILE (docs/state.md)\n"
               "      --resume            go on with --state's (or --frontier's) crawl,\n"
               "                          appending to --output\n"
               "      --frontier redis://HOST:PORT/NAME\n"
               "                          one crawl NAME run by many processes: the Queue\n"
               "                          and seen URLs in Redis; needs --format jsonl\n"
               "                          (docs/scale.md) [the Queue in memory]\n"
               "      --claim-after SECS  with --frontier: take over URLs a process left\n"
               "                          unacknowledged this long (it died) [60]\n"
               "\n"
               "Politeness (any of these: a Queue per host, docs/politeness.md):\n"
               "      --per-host N        at most N requests in flight per host [no cap]\n"
               "      --per-ip            ... per address the host resolves to\n"
               "      --delay SECS        between two starts on one host [0]\n"
               "      --random-delay      each delay x 0.5 to 1.5 (needs --delay)\n"
               "      --max-crawl-delay SECS  cap on robots.txt's Crawl-delay [30]\n"
               "      --autothrottle      each host's delay follows its latency\n"
               "      --target-concurrency N  autothrottle's aim per host [1]\n"
               "      --sitemaps          also start from each host's sitemaps (robots.txt's\n"
               "                          Sitemap lines, /sitemap.xml)\n"
               "\n"
               "      --threads N         the thread pool (DNS lookups, the store), 1 to %d [4]\n"
               "      --dns-timeout SECS  per DNS lookup on the raw transport [60]\n",
               CRAWL_VERSION, THREADPOOL_MAX_THREADS);
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
    o->threads = 4;
    o->dns_timeout = 60;
    o->claim_after = 60;
    o->max_crawl_delay = 30;
    o->target_concurrency = 1;      /* Scrapy's AUTOTHROTTLE_TARGET_CONCURRENCY */
}

/* getopt returned '?': an unknown option, an ambiguous abbreviation, or a value given
 * to an option that takes none (optopt is then that option's val). */
static int bad_option(const char *prog, int argc, char **argv)
{
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
    return usage_error(prog, "unknown option '%.*s' (see --help)", (int)len, arg);
}

/* The options only crawl-queue's engine understands (robots.txt, storage, politeness,
 * the thread pool, ...): stages 1 and 2 refuse them. */
static bool stage3_only(int c)
{
    switch (c) {
    case OPT_USER_AGENT:
    case OPT_THREADS:
    case OPT_DNS_TIMEOUT:
    case OPT_STORE:
    case OPT_IGNORE_ROBOTS:
    case OPT_WARC:
    case OPT_CDX:
    case OPT_STATE:
    case OPT_RESUME:
    case OPT_FRONTIER:
    case OPT_CLAIM_AFTER:
    case OPT_PER_HOST:
    case OPT_PER_IP:
    case OPT_DELAY:
    case OPT_RANDOM_DELAY:
    case OPT_MAX_CRAWL_DELAY:
    case OPT_AUTOTHROTTLE:
    case OPT_TARGET_CONCURRENCY:
    case OPT_SITEMAPS:
    case OPT_HEADER:
        return true;
    default:
        return false;
    }
}

/* One option with its value. */
static int apply_option(crawl_options *o, int c, const char *arg, const char *prog,
                        const char *default_transport, cli_stage stage)
{
    long long v = 0;
    int rc = CLI_OK;
    switch (c) {
    case OPT_MAX_TASKS:
        return parse_int(prog, "max-tasks", arg, 1, 1000000, &o->max_tasks);
    case OPT_MAX_REDIRECT:
        return parse_int(prog, "max-redirect", arg, 0, 1000, &o->max_redirect);
    case OPT_MAX_TRIES:
        return parse_int(prog, "max-tries", arg, 1, 100, &o->max_tries);
    case OPT_EXCLUDE:
        o->exclude = arg;
        return check_regex(prog, arg);
    case OPT_STRICT: o->strict = 1; return CLI_OK;
    case OPT_LENIENT: o->strict = 0; return CLI_OK;
    case OPT_SELECTOR:
        return parse_choice(prog, "selector", arg, selector_backends, &o->selector);
    case OPT_TRANSPORT:
        return parse_choice(prog, "transport", arg, transports, &o->transport);
    case OPT_FORMAT:
        return parse_choice(prog, "format", arg, formats, &o->format);
    case OPT_OUTPUT: o->output = arg; return CLI_OK;
    case OPT_TIMEOUT:
        return parse_seconds(prog, "timeout", arg, &o->timeout);
    case OPT_MAX_PAGES:
        rc = parse_whole(prog, "max-pages", arg, 0, LONG_MAX, &v);
        if (rc == CLI_OK)
            o->max_pages = (long)v;
        return rc;
    case OPT_MAX_SIZE:
        return parse_whole(prog, "max-size", arg, 1, LLONG_MAX, &o->max_size);
    case OPT_CACERT: o->cacert = arg; return CLI_OK;
    case OPT_TRACE_EVENTS: o->trace_events = arg; return CLI_OK;
    case OPT_USER_AGENT:
        o->user_agent = arg;
        return check_user_agent(prog, arg);
    case OPT_THREADS:
        return parse_int(prog, "threads", arg, 1, THREADPOOL_MAX_THREADS, &o->threads);
    case OPT_DNS_TIMEOUT:
        return parse_seconds(prog, "dns-timeout", arg, &o->dns_timeout);
    case OPT_STORE: o->store = arg; return CLI_OK;
    case OPT_WARC: o->warc = arg; return CLI_OK;
    case OPT_CDX: o->cdx = arg; return CLI_OK;
    case OPT_STATE: o->state = arg; return CLI_OK;
    case OPT_RESUME: o->resume = 1; return CLI_OK;
    case OPT_FRONTIER:
        if (strncmp(arg, "redis://", 8) != 0)
            return usage_error(prog, "--frontier '%s': give redis://HOST:PORT/NAME", arg);
        o->frontier = arg;
        return CLI_OK;
    case OPT_CLAIM_AFTER:
        return parse_seconds(prog, "claim-after", arg, &o->claim_after);
    case OPT_IGNORE_ROBOTS: o->ignore_robots = 1; return CLI_OK;
    /* Politeness: any of these turns it on (the polite Queue, hostqueue.h). */
    case OPT_PER_HOST:
        o->polite = 1;
        return parse_int(prog, "per-host", arg, 1, 1000000, &o->per_host);
    case OPT_PER_IP: o->polite = o->per_ip = o->polite_local = 1; return CLI_OK;
    case OPT_DELAY:
        o->polite = 1;
        return parse_decimal(prog, "delay", arg, 0, 86400, "seconds", &o->delay);
    case OPT_RANDOM_DELAY: o->polite = o->random_delay = 1; return CLI_OK;
    case OPT_MAX_CRAWL_DELAY:
        o->polite = o->polite_local = 1;
        return parse_decimal(prog, "max-crawl-delay", arg, 0, 86400, "seconds",
                             &o->max_crawl_delay);
    case OPT_AUTOTHROTTLE: o->polite = o->autothrottle = o->polite_local = 1; return CLI_OK;
    case OPT_TARGET_CONCURRENCY:
        o->polite = o->polite_local = 1;
        return parse_decimal(prog, "target-concurrency", arg, 0.01, 1000000, "requests",
                             &o->target_concurrency);
    case OPT_SITEMAPS: o->sitemaps = 1; return CLI_OK;
    case OPT_HEADER: return add_header(o, prog, arg);
    case 'v': o->verbose++; return CLI_OK;
    case 'q': o->quiet = 1; return CLI_OK;
    case 'h':
        print_help(prog, default_transport, stage);
        return CLI_EXIT_OK;
    case 'V':
        printf("%s %s\n", prog, CRAWL_VERSION);
        return CLI_EXIT_OK;
    default:
        return usage_error(prog, "unhandled option %d", c);
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
            return usage_error(prog, "ROOT '%s': %s", o->roots[i],
                               err[0] ? err : "not a URL");
        free(fixed);
    }
    return CLI_OK;
}

/* ---- files --------------------------------------------------------------------- */

/* dev+ino of a path's directory, and where its last component starts. */
static bool stat_dir_of(const char *path, struct stat *st, const char **last)
{
    const char *slash = strrchr(path, '/');
    *last = slash ? slash + 1 : path;
    if (!slash)
        return stat(".", st) == 0;
    char *dir = xstrndup(path, slash == path ? 1 : (size_t)(slash - path));
    bool ok = stat(dir, st) == 0;
    free(dir);
    return ok;
}

/* Whether a and b name one file. Both exist: the same device and inode (a link, a
 * "./" or "/dev/stdout" is seen through). Neither exists: the same directory (device
 * and inode) and the same last component. Character devices (/dev/null, a terminal)
 * are never "the same file": writing both there corrupts nothing. */
static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    bool ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
    if (ea && eb)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino && !S_ISCHR(sa.st_mode);
    if (ea || eb)
        return false;
    const char *la, *lb;
    if (!stat_dir_of(a, &sa, &la) || !stat_dir_of(b, &sb, &lb))
        return strcmp(a, b) == 0;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino && strcmp(la, lb) == 0;
}

/* Whether path is the file stdout writes to (the report, without --output). */
static bool is_stdout(const char *path)
{
    struct stat sp, so;
    return stat(path, &sp) == 0 && fstat(STDOUT_FILENO, &so) == 0 &&
           sp.st_dev == so.st_dev && sp.st_ino == so.st_ino && !S_ISCHR(sp.st_mode);
}

/* The files named on the command line: --cacert must be readable now (on either
 * transport: a typo is caught before the crawl, not as a certificate error per
 * fetch); the report and the trace cannot share a file (two streams writing one file
 * each from its own offset garble both). */
static int check_files(const crawl_options *o, const char *prog)
{
    if (o->cacert) {
        int fd = open(o->cacert, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0)
            return usage_error(prog, "--cacert: cannot read '%s': %s", o->cacert,
                               strerror(errno));
        bool dir = fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
        close(fd);
        if (dir)
            return usage_error(prog, "--cacert: '%s' is a directory, not a file of "
                               "certificates", o->cacert);
    }
    bool to_stdout = !o->output || strcmp(o->output, "-") == 0;
    if (o->trace_events && !to_stdout && same_file(o->output, o->trace_events))
        return usage_error(prog, "--output '%s' and --trace-events '%s' are the same file "
                           "(give each its own)", o->output, o->trace_events);
    if (o->cdx && !o->warc)
        return usage_error(prog, "--cdx '%s' indexes a --warc file: give --warc too", o->cdx);
    if (o->resume && !o->state && !o->frontier)
        return usage_error(prog, "--resume goes on with the crawl of a --state file: give "
                           "--state too");
    if (o->resume && o->frontier && to_stdout)
        return usage_error(prog, "--resume with --frontier '%s' appends to --output FILE: "
                           "give --output", o->frontier);
    if (o->state && (to_stdout || !o->format || strcmp(o->format, "jsonl") != 0))
        return usage_error(prog, "--state '%s' needs --format jsonl --output FILE (the "
                           "records of every run go to that file)", o->state);
    if (o->frontier && (!o->format || strcmp(o->format, "jsonl") != 0))
        return usage_error(prog, "--frontier '%s' needs --format jsonl (a URL is acknowledged "
                           "to the other processes once its record is written)", o->frontier);
    if (o->random_delay && o->delay <= 0)
        return usage_error(prog, "--random-delay varies --delay SECS: give --delay too");
    if (o->target_concurrency != 1 && !o->autothrottle)
        return usage_error(prog, "--target-concurrency is --autothrottle's aim: give "
                           "--autothrottle too");
    if (o->frontier && o->polite_local)
        return usage_error(prog, "--frontier '%s' keeps --per-host and --delay for the whole "
                           "crawl; --per-ip, --max-crawl-delay and --autothrottle are one "
                           "process's (not with --frontier yet)", o->frontier);
    if (o->frontier && o->state)
        return usage_error(prog, "--frontier '%s' keeps the frontier in Redis: --state is for "
                           "one process", o->frontier);
    const char *const named[][2] = {{"--output", to_stdout ? NULL : o->output},
                                    {"--trace-events", o->trace_events},
                                    {"--store", o->store}, {"--warc", o->warc},
                                    {"--cdx", o->cdx}, {"--state", o->state}};
    for (size_t i = 2; i < 6; i++)     /* --output and --trace-events: checked above */
        for (size_t j = 0; j < i && named[i][1]; j++)
            if (named[j][1] && same_file(named[i][1], named[j][1]))
                return usage_error(prog, "%s '%s' and %s '%s' are the same file (give each "
                                   "its own)", named[j][0], named[j][1], named[i][0],
                                   named[i][1]);
    if (o->trace_events && to_stdout && is_stdout(o->trace_events))
        return usage_error(prog, "--trace-events '%s' is where the report goes (stdout); "
                           "give it a file of its own", o->trace_events);
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
                 "not log in)", prog, fixed ? fixed : "?");
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

int cli_parse(crawl_options *o, int argc, char **argv, const char *prog,
              const char *default_transport, cli_stage stage)
{
    if (!prog)
        prog = "crawl";
    if (!default_transport)
        default_transport = "raw";
    set_defaults(o, default_transport);
    if (argc < 1 || !argv)
        return usage_error(prog, "no ROOT given (see --help)");

    optind = 0;   /* GNU: full reinitialisation, so cli_parse can run again */
    opterr = 0;   /* our own messages, one line each */
    int c;
    while ((c = getopt_long(argc, argv, short_opts, long_opts, NULL)) != -1) {
        int rc;
        if (c == ':')
            rc = usage_error(prog, "option '--%s' needs a value", opt_name(optopt));
        else if (c == '?')
            rc = bad_option(prog, argc, argv);
        else if (stage != CLI_STAGE3 && stage3_only(c))
            rc = usage_error(prog, "--%s is a crawl-queue (stage 3) option; this stage keeps "
                             "the chapter's crawler", opt_name(c));
        else
            rc = apply_option(o, c, optarg, prog, default_transport, stage);
        if (rc != CLI_OK)
            return rc;
    }
    o->roots = argv + optind;
    o->nroots = argc - optind;
    int rc = check_roots(o, prog);
    if (rc == CLI_OK)
        rc = check_files(o, prog);
    if (rc != CLI_OK)
        return rc;
    set_log_level(o);
    warn_userinfo(o, prog);
    if (o->frontier) {
        /* This process among the crawl's: HOST:PID, unique while it runs. */
        static char name[300];
        char host[256] = "localhost";
        gethostname(host, sizeof host - 1);
        snprintf(name, sizeof name, "%s:%ld", host, (long)getpid());
        o->fetched_by = name;
    }
    return CLI_OK;
}
