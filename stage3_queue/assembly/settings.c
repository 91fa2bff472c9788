/* settings.c — crawl-queue's flags, one row each (settings.h), and the rules between
 * them. */
#include "settings.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cookiejar.h"
#include "curlglue.h"
#include "http.h"
#include "pattern.h"
#include "recrawl_db.h"
#include "redisurl.h"
#include "alloc.h"
#include "spiderload.h"
#include "registry.h"
#include "threadpool.h"
#include "warc.h"

#define STR_(x) #x
#define STR(x)  STR_(x)

/* ---- the rows' own checks -------------------------------------------------------- */

/* A User-Agent header value: printable ASCII (no control character could end the
 * header early), 1 to 256 characters, no space at either end. */
static int check_user_agent(void *s, const char *arg, char *why, size_t n)
{
    (void)s;
    size_t len = strlen(arg);
    bool printable = true;
    for (const char *p = arg; *p; p++)
        printable &= *p >= 0x20 && *p < 0x7f;
    if (len > 0 && len <= 256 && printable && arg[0] != ' ' && arg[len - 1] != ' ')
        return 0;
    snprintf(why, n,
             "--user-agent: '%s' is not a User-Agent (printable ASCII, 1 to 256 "
             "characters, no space at either end)",
             arg);
    return -1;
}

/* --header "Name: value" (the last one given, appended to s->header): a field both
 * transports can send (http_field_check); not User-Agent, which --user-agent gives (it
 * picks the robots.txt group too); each name once (a field's values are joined with
 * ", " in one, RFC 9110 5.3). */
static int check_header(void *p, const char *arg, char *why, size_t n)
{
    const cli_list *h = &((const settings *)p)->header;
    const char *bad = http_field_check(arg);
    size_t len = http_field_name_len(arg);
    if (bad)
        snprintf(why, n, "--header '%s': %s", arg, bad);
    else if (len == 10 && strncasecmp(arg, "User-Agent", len) == 0)
        snprintf(why, n,
                 "--header '%s': give --user-agent (it also picks the robots.txt "
                 "group)",
                 arg);
    else if (h->n > SETTINGS_MAX_HEADERS)
        snprintf(why, n, "--header '%s': at most %d --header", arg, SETTINGS_MAX_HEADERS);
    else {
        for (size_t i = 0; i + 1 < h->n; i++)
            if (http_field_name_len(h->v[i]) == len && strncasecmp(h->v[i], arg, len) == 0) {
                snprintf(why, n,
                         "--header '%s': %.*s given twice (join the values with ', ' "
                         "in one)",
                         arg, (int)len, arg);
                return -1;
            }
        return 0;
    }
    return -1;
}

/* redis://[[USER:]PASSWORD@]HOST:PORT/NAME, checked now (a malformed one is bad usage);
 * its password is never shown (redisurl.h). */
static int check_frontier(void *s, const char *arg, char *why, size_t n)
{
    (void)s;
    redis_url u;
    char err[700];
    int bad = redis_url_parse(arg, &u, err, sizeof err);
    redis_url_forget(&u);
    if (bad)
        snprintf(why, n, "--frontier %s", err);
    return bad ? -1 : 0;
}

/* --cookie NAME=VALUE (the last one given): a cookie (cookiejar.h); at most
 * SETTINGS_MAX_HEADERS of them. */
static int check_cookie(void *p, const char *arg, char *why, size_t n)
{
    const char *bad = cookiejar_pair_check(arg);
    if (bad)
        snprintf(why, n, "--cookie '%s': %s", arg, bad);
    else if (((const settings *)p)->cookie.n > SETTINGS_MAX_HEADERS)
        snprintf(why, n, "--cookie '%s': at most %d --cookie", arg, SETTINGS_MAX_HEADERS);
    return bad || ((const settings *)p)->cookie.n > SETTINGS_MAX_HEADERS ? -1 : 0;
}

/* --proxy URL: one libcurl can use; never quoted (it may hold a password). */
static int check_proxy(void *s, const char *arg, char *why, size_t n)
{
    (void)s;
    const char *bad = curl_glue_proxy_check(arg);
    if (bad)
        snprintf(why, n, "--proxy: %s", bad);
    return bad ? -1 : 0;
}

/* --user USER:PASSWORD: never quoted; kept in a copy of its own, and the password in
 * argv overwritten, as curl does, so that ps shows "--user alice:***" (the last one
 * given: one crawl a process). */
static int check_user(void *p, const char *arg, char *why, size_t n)
{
    static char *copy;
    settings *s = p;
    const char *colon = strchr(arg, ':');
    if (!colon || colon == arg) {
        snprintf(why, n, "--user: give USER:PASSWORD (the value is not shown)");
        return -1;
    }
    free(copy);
    copy = xstrdup(arg);
    s->user = copy;
    for (char *c = (char *)colon + 1; *c; c++)
        *c = '*';
    return 0;
}

/* --recrawl OLD.db: a database --store wrote, checked now (one line, exit 2). */
static int check_recrawl(void *s, const char *arg, char *why, size_t n)
{
    (void)s;
    return old_db_check(arg, why, n);
}

/* Politeness is on unless --chapter (finish); its flags are remembered, for --chapter's
 * refusal. Some hold per process only. */
static int set_polite(void *s, const char *arg, char *why, size_t n)
{
    (void)arg, (void)why, (void)n;
    ((settings *)s)->polite_given = 1;
    return 0;
}

static int set_polite_local(void *s, const char *arg, char *why, size_t n)
{
    ((settings *)s)->polite_local = 1;
    return set_polite(s, arg, why, n);
}

/* --max-depth N: the depth middleware, with a limit. */
static int set_max_depth(void *s, const char *arg, char *why, size_t n)
{
    (void)arg, (void)why, (void)n;
    ((settings *)s)->depth = 1;
    return 0;
}

/* --include REGEX (the last one given): a regex as --exclude's (pattern.h), checked now. */
static int check_include(void *p, const char *arg, char *why, size_t n)
{
    (void)p;
    return pattern_check("--include", arg, why, n);
}

/* --extract NAME=XPATH (the last one given): its XPath compiles. */
static int check_extract(void *p, const char *arg, char *why, size_t n)
{
    (void)p;
    return extract_check(arg, why, n);
}

/* ---- the table ------------------------------------------------------------------- */

#define AT(field) offsetof(settings, field)

/* One row per flag, read as a table: clang-format would put each field on a line. */
/* clang-format off */
static const cli_flag rows[] = {
    {.name = "user-agent", .arg = CLI_ARG_STRING, .metavar = "NAME", .offset = AT(user_agent),
     .set = check_user_agent,
     .help = "the User-Agent sent; its product token (the letters\n"
             "before a '/') picks the robots.txt group\n"
             "[crawlstages/" CRAWL_VERSION "]"},
    {.name = "ignore-robots", .arg = CLI_ARG_NONE, .offset = AT(ignore_robots),
     .help = "fetch what robots.txt forbids [obey robots.txt]"},
    {.name = "header", .arg = CLI_ARG_LIST, .metavar = "\"Name: value\"", .offset = AT(header),
     .set = check_header,
     .help = "send this header field on every request\n"
             "(repeatable; docs/extensions.md) [none]"},
    {.name = "store", .arg = CLI_ARG_STRING, .metavar = "FILE.db", .offset = AT(store),
     .out_file = true, .out_sqlite = true,
     .help = "store every record, headers and body in SQLite\n"
             "(docs/storage.md) [none]"},
    {.name = "warc", .arg = CLI_ARG_STRING, .metavar = "FILE", .offset = AT(warc),
     .out_file = true, .out_keep = true,
     .help = "archive every response in WARC/1.1, as it came\n"
             "over the wire; FILE.gz: gzip per record\n"
             "(docs/warc.md) [none]"},
    {.name = "cdx", .arg = CLI_ARG_STRING, .metavar = "FILE", .offset = AT(cdx),
     .out_file = true, .out_keep = true, .needs = "warc", .needs_why = "indexes a --warc file",
     .help = "with --warc: a CDXJ index of it [none]"},
    {.name = "warc-max-size", .arg = CLI_ARG_BYTES, .metavar = "BYTES", .min = 1,
     .offset = AT(warc_max_size), .needs = "warc", .needs_why = "rotates a --warc archive",
     .help = "with --warc: a new file before one would pass\n"
             "BYTES: FILE-00000.warc.gz, FILE-00001... (1 GB is\n"
             "usual; docs/warc.md) [one file]"},
    {.name = "state", .arg = CLI_ARG_STRING, .metavar = "FILE.db", .offset = AT(state),
     .out_file = true, .out_sqlite = true,
     .help = "keep the crawl's frontier in SQLite, so that a\n"
             "crawl stopped (even by kill -9) can --resume;\n"
             "needs --format jsonl --output FILE (docs/state.md)"},
    {.name = "resume", .arg = CLI_ARG_NONE, .offset = AT(resume),
     .help = "go on with --state's (or --frontier's) crawl,\n"
             "appending to --output"},
    {.name = "frontier", .arg = CLI_ARG_STRING,
     .metavar = "redis://[[USER:]PASSWORD@]HOST:PORT/NAME", .offset = AT(frontier),
     .set = check_frontier,
     .help = "one crawl NAME run by many processes: the Queue\n"
             "and seen URLs in Redis; needs --format jsonl;\n"
             "every process gives the same roots and options\n"
             "(docs/scale.md) [the Queue in memory]"},
    {.name = "claim-after", .arg = CLI_ARG_DOUBLE, .metavar = "SECS", .min = 0.001,
     .max = 86400, .offset = AT(claim_after),
     .help = "with --frontier: take over URLs a process left\n"
             "unacknowledged this long (it died) [60]"},
    {.name = "chapter", .arg = CLI_ARG_NONE, .offset = AT(chapter),
     .section = "Politeness (on by default: a Queue per host, docs/politeness.md):",
     .help = "the chapter's crawler, line for line: the chapter's\n"
             "Queue, no politeness (for the course, cross-stage\n"
             "comparisons and benchmarks; not with the flags below)"},
    {.name = "per-host", .arg = CLI_ARG_INT, .metavar = "N", .min = 0, .max = 1000000,
     .offset = AT(per_host), .set = set_polite,
     .help = "at most N requests in flight per host (0: no cap;\n"
             "the rest of politeness stays) [" STR(SETTINGS_PER_HOST) "]"},
    {.name = "per-ip", .arg = CLI_ARG_NONE, .offset = AT(per_ip), .set = set_polite_local,
     .help = "... per address the host resolves to"},
    {.name = "delay", .arg = CLI_ARG_DOUBLE, .metavar = "SECS", .min = 0, .max = 86400,
     .offset = AT(delay), .set = set_polite,
     .help = "between two starts on one host [0]"},
    {.name = "random-delay", .arg = CLI_ARG_NONE, .offset = AT(random_delay),
     .set = set_polite, .needs = "delay", .needs_why = "varies --delay SECS",
     .help = "each delay x 0.5 to 1.5 (needs --delay)"},
    {.name = "max-crawl-delay", .arg = CLI_ARG_DOUBLE, .metavar = "SECS", .min = 0,
     .max = 86400, .offset = AT(max_crawl_delay), .set = set_polite_local,
     .help = "cap on robots.txt's Crawl-delay [30]"},
    {.name = "autothrottle", .arg = CLI_ARG_NONE, .offset = AT(autothrottle),
     .set = set_polite_local, .help = "each host's delay follows its latency"},
    {.name = "target-concurrency", .arg = CLI_ARG_DOUBLE, .metavar = "N", .min = 0.01,
     .max = 1000000, .noun = "requests", .offset = AT(target_concurrency),
     .set = set_polite_local, .needs = "autothrottle", .needs_why = "is --autothrottle's aim",
     .help = "autothrottle's aim per host [1]"},
    {.name = "sitemaps", .arg = CLI_ARG_NONE, .offset = AT(sitemaps),
     .help = "also start from each host's sitemaps (robots.txt's\n"
             "Sitemap lines, /sitemap.xml)"},
    {.name = "cookies", .arg = CLI_ARG_STRING, .metavar = "FILE", .offset = AT(cookie_file),
     .out_file = true, .section = "Cookies and proxies (the curl transport; docs/cookies.md):",
     .help = "a Netscape cookie file: read before the crawl,\n"
             "written back with the cookies servers set, at\n"
             "the end (after SIGINT too) [no cookies]"},
    {.name = "cookie", .arg = CLI_ARG_LIST, .metavar = "NAME=VALUE", .offset = AT(cookie),
     .set = check_cookie,
     .help = "send this cookie to the roots' hosts\n"
             "(repeatable) [none]"},
    {.name = "proxy", .arg = CLI_ARG_STRING, .metavar = "URL", .offset = AT(proxy),
     .set = check_proxy,
     .help = "every request through this proxy: http://,\n"
             "https://, socks5h://HOST:PORT [http_proxy,\n"
             "https_proxy, no_proxy: docs/cookies.md]"},
    {.name = "user", .arg = CLI_ARG_STRING, .metavar = "USER:PASSWORD", .offset = AT(user),
     .set = check_user,
     .help = "HTTP basic or digest auth for the roots' hosts\n"
             "(never sent elsewhere, never shown) [none]"},
    {.name = "netrc", .arg = CLI_ARG_NONE, .offset = AT(netrc),
     .help = "the roots' hosts' logins from ~/.netrc [off]"},
    {.name = "max-depth", .arg = CLI_ARG_INT, .metavar = "N", .min = 0, .max = 1000000,
     .offset = AT(max_depth), .set = set_max_depth,
     .section = "Spider middleware (docs/extensions.md; records say \"depth\" and\n"
                "\"referrer\", requests send Referer, --store gets a links table,\n"
                "unless --chapter):",
     .help = "follow no link deeper than N (0: the roots\n"
             "only) [no limit]"},
    {.name = "include", .arg = CLI_ARG_LIST, .metavar = "REGEX", .offset = AT(include),
     .set = check_include,
     .help = "follow only links matching one of these\n"
             "regexes (repeatable; as --exclude's) [all]"},
    {.name = "requisites", .arg = CLI_ARG_NONE, .offset = AT(requisites),
     .help = "also fetch what each page needs to render\n"
             "(images, scripts, stylesheets), on any host"},
    {.name = "spider", .arg = CLI_ARG_STRING, .metavar = "FILE.lua", .offset = AT(spider),
     .section = "Spiders (docs/spiders.md):",
     .help = "parse each 2xx response with FILE.lua's callbacks;\n"
             "only its follow() follows links [no spider]"},
    {.name = "items", .arg = CLI_ARG_STRING, .metavar = "FILE", .offset = AT(items),
     .out_file = true, .out_as_output = true,
     .help = "the items a spider or --extract scrapes, one JSON\n"
             "object a line [none]"},
    {.name = "extract", .arg = CLI_ARG_LIST, .metavar = "NAME=XPATH", .offset = AT(extract),
     .set = check_extract,
     .help = "without a spider: an item per HTML page, NAME its\n"
             "XPath's first string (repeatable) [none]"},
    {.name = "spider-budget", .arg = CLI_ARG_DOUBLE, .metavar = "N", .min = 1000, .max = 1e15,
     .noun = "instructions", .offset = AT(spider_budget),
     .help = "instructions per callback before it is stopped\n"
             "[300000000]"},
    {.name = "spider-memory", .arg = CLI_ARG_INT, .metavar = "MB", .min = 1, .max = 65536,
     .offset = AT(spider_memory),
     .help = "the spider's memory cap [256]"},
    {.name = "spider-timeout", .arg = CLI_ARG_DOUBLE, .metavar = "SECS", .min = 0.001, .max = 86400,
     .noun = "seconds", .offset = AT(spider_timeout),
     .help = "CPU seconds a callback may run (not counting\n"
             "its downloads) before it is stopped [10]"},
    {.name = "threads", .arg = CLI_ARG_INT, .metavar = "N", .min = 1,
     .max = THREADPOOL_MAX_THREADS, .offset = AT(threads), .section = "",
     .help = "the thread pool (DNS lookups, the store), 1 to " STR(THREADPOOL_MAX_THREADS)
             " [4]"},
    {.name = "dns-timeout", .arg = CLI_ARG_DOUBLE, .metavar = "SECS", .min = 0.001,
     .max = 86400, .offset = AT(dns_timeout),
     .help = "per DNS lookup on the raw transport [60]"},
    {.name = "progress-interval", .arg = CLI_ARG_DOUBLE, .metavar = "SECS", .min = 0,
     .max = 86400, .offset = AT(progress_every),
     .help = "when stderr is not a terminal, a progress line\n"
             "this often (0: none; docs/stage3.md) [60]"},
    {.name = "recrawl", .arg = CLI_ARG_STRING, .metavar = "OLD.db", .offset = AT(recrawl),
     .set = check_recrawl,
     .help = "ask for each page OLD.db (an earlier --store) holds\n"
             "only if it changed (ETag, Last-Modified); a 304 is\n"
             "the stored page (docs/recrawl.md) [fetch all]"},
    {.name = "http1.1", .arg = CLI_ARG_NONE, .offset = AT(http1_1),
     .help = "HTTP/1.1 only [over https, HTTP/2 when the server\n"
             "offers it, one connection per host] (docs/http2.md)"},
    {.name = "insecure", .arg = CLI_ARG_NONE, .offset = AT(insecure),
     .help = "do not check TLS certificates (a warning says so)"},
    {.name = "fail-on-broken", .arg = CLI_ARG_NONE, .offset = AT(fail_on_broken),
     .section = "",
     .help = "exit 8 if a page answered 4xx or 5xx, 4 if a fetch\n"
             "failed on the network (wget's numbers), and list\n"
             "the first of them on stderr [exit 0]"},
    {0}
};
/* clang-format on */

static void defaults(void *p)
{
    settings *s = p;
    *s = (settings){.threads = 4,
                    .dns_timeout = 60,
                    .progress_every = 60, /* Scrapy's LOGSTATS_INTERVAL */
                    .claim_after = 60,
                    .per_host = SETTINGS_PER_HOST, /* Scrapy's CONCURRENT_REQUESTS_PER_DOMAIN */
                    .max_crawl_delay = 30,
                    .max_depth = -1,
                    .target_concurrency = 1, /* Scrapy's AUTOTHROTTLE_TARGET_CONCURRENCY */
                    .spider_budget = (double)LUA_SPIDER_BUDGET,
                    .spider_memory = LUA_SPIDER_MEMORY_MB,
                    .spider_timeout = LUA_SPIDER_TIMEOUT};
}

/* ---- the rules between flags ----------------------------------------------------- */

#define REFUSE(...) (snprintf(why, n, __VA_ARGS__), -1)

/* Whether two paths name one existing file. */
static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return a && b && stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev
        && sa.st_ino == sb.st_ino;
}

static int check_rules(const settings *s, const crawl_options *o, char *why, size_t n)
{
    bool to_stdout = !o->output || strcmp(o->output, "-") == 0;
    bool jsonl = o->format && strcmp(o->format, "jsonl") == 0;
    char shown[700] = ""; /* as it may be shown: without its password */
    if (s->frontier)
        redis_url_shown(s->frontier, shown, sizeof shown);
    if (s->resume && !s->state && !s->frontier)
        return REFUSE("--resume goes on with the crawl of a --state file: give --state too");
    if (s->resume && s->frontier && to_stdout)
        return REFUSE("--resume with --frontier '%s' appends to --output FILE: give --output",
                      shown);
    if (s->state && (to_stdout || !jsonl))
        return REFUSE("--state '%s' needs --format jsonl --output FILE (the records of every "
                      "run go to that file)",
                      s->state);
    if (s->frontier && !jsonl)
        return REFUSE("--frontier '%s' needs --format jsonl (a URL is acknowledged to the "
                      "other processes once its record is written)",
                      shown);
    if (s->frontier && s->polite_local)
        return REFUSE("--frontier '%s' keeps --per-host and --delay for the whole crawl; "
                      "--per-ip, --max-crawl-delay and --autothrottle are one process's (not "
                      "with --frontier yet)",
                      shown);
    if (s->user && s->netrc)
        return REFUSE("%s", "--user and --netrc: give one (both say who logs in)");
    if (o->transport && strcmp(o->transport, "raw") == 0 && (s->user || s->netrc))
        return REFUSE("%s: the raw transport has no HTTP authentication: use --transport "
                      "curl (the default)",
                      s->user ? "--user" : "--netrc");
    if (o->transport && strcmp(o->transport, "raw") == 0
        && (s->cookie_file || s->cookie.n || s->proxy))
        return REFUSE("%s: the raw transport has no cookies and no proxy: use --transport "
                      "curl (the default)",
                      s->cookie_file    ? "--cookies"
                          : s->cookie.n ? "--cookie"
                                        : "--proxy");
    char bad[1024];
    if (s->cookie_file && cookiejar_read(s->cookie_file, NULL, NULL, bad, sizeof bad) < 0)
        return REFUSE("--cookies %s", bad); /* not a cookie file: never written over */
    if (same_file(s->recrawl, s->store) || same_file(s->recrawl, s->state))
        return REFUSE("--recrawl '%s' is read while the crawl runs: give --%s another file",
                      s->recrawl, same_file(s->recrawl, s->store) ? "store" : "state");
    if (strcmp(o->transport, "raw") == 0 && (s->http1_1 || s->insecure))
        return REFUSE("%s: the raw transport speaks HTTP/1.0 over plain TCP only (no TLS, "
                      "no HTTP/2): use --transport curl",
                      s->insecure ? "--insecure" : "--http1.1");
    if (s->chapter && s->polite_given)
        return REFUSE("--chapter is the chapter's crawler, without politeness: not with "
                      "--per-host, --per-ip, --delay, --random-delay, --max-crawl-delay, "
                      "--autothrottle or --target-concurrency");
    if (s->chapter && s->frontier)
        return REFUSE("--chapter is the chapter's crawler, its Queue in memory: not with "
                      "--frontier '%s' (--per-host 0 lifts the cap per host there)",
                      shown);
    if (s->frontier && s->state)
        return REFUSE("--frontier '%s' keeps the frontier in Redis: --state is for one "
                      "process",
                      shown);
    if (s->spider && s->extract.n > 0)
        return REFUSE("--extract is for a crawl without a spider: --spider '%s' scrapes "
                      "with response:xpath()",
                      s->spider);
    if (s->items && !s->spider && s->extract.n == 0)
        return REFUSE("--items '%s' holds what a --spider or --extract scrapes: give one",
                      s->items);
    return 0;
}

/* --spider FILE.lua: loaded now, before any request (a file that does not load is bad
 * usage), and kept for the engine (registry.c). */
static int load_spider(const settings *s, char *why, size_t n)
{
    if (!s->spider)
        return 0;
    return lua_spider_preload(s->spider, (long long)s->spider_budget, (size_t)s->spider_memory,
                              s->spider_timeout, why, n);
}

/* The rules, then what the core and the shared main must know of these flags. */
static int finish(void *p, crawl_options *o, char *why, size_t n)
{
    settings *s = p;
    if (check_rules(s, o, why, n) < 0 || load_spider(s, why, n) < 0)
        return -1;
    s->polite = !s->chapter;
    /* The depth and referrer spider middlewares are on, as in Scrapy, unless the
     * chapter's crawler is asked for (--max-depth turns depth on there too). */
    s->depth = s->depth || !s->chapter;
    s->referrer = !s->chapter;
    o->user_agent = s->user_agent;
    o->threads = s->threads;
    o->dns_timeout = s->dns_timeout;
    o->pool_dns = s->per_ip; /* the polite Queue's lookups */
    o->append_output = s->resume;
    /* A crawl that goes on with its --output never replaces one that holds records, nor
     * its --items or --skipped (out_as_output: app.c's claim_files). */
    if ((s->state || s->frontier) && !s->resume)
        o->keep_output = "add --resume to go on with it";
    /* Nor its --warc and --cdx (out_keep), which only --resume adds to. */
    o->keep_files = s->state || s->frontier ? "add --resume to go on with it"
                                            : "only --resume (with --state) adds to it";
    s->warc_base = s->warc;
    if (s->warc && s->warc_max_size) {
        /* Rotated: the files are FILE-00000.warc.gz, ...; the first is the one claimed. */
        static char *first; /* the last command line's: one crawl a process */
        free(first);
        first = warc_file_name(s->warc, 0);
        s->warc = first;
    }
    o->host_lanes = s->polite;
    o->http2 = !s->http1_1;
    o->insecure = s->insecure;
    o->record_http_version = 1;
    o->record_times = 1;
    o->normalize_urls = 1; /* seen_urls in RFC 3986's normal form (url_normalize) */
    o->count_skips = 1;    /* the summary's "skipped" (crawl_skip) */
    /* The sitemap seeder's download (one at a time) gets a libcurl transfer of its own;
     * robots.txt downloads have the glue's side lane (robotstxt.c): neither takes the
     * pages' (docs/politeness.md, Limits) */
    o->own_transfers = s->sitemaps ? 1 : 0;
    if (s->frontier) {
        /* This process among the crawl's: HOST:PID, unique while it runs. */
        static char name[300];
        char host[256] = "localhost";
        gethostname(host, sizeof host - 1);
        snprintf(name, sizeof name, "%s:%ld", host, (long)getpid());
        o->fetched_by = name; /* its name in Redis and in each of its records */
    }
    return 0;
}

const cli_table settings_table = {
    .title = "crawl-queue's engine:",
    .flags = rows,
    .defaults = defaults,
    .finish = finish,
    .groups = registry_flag_groups, /* the extensions' own flags (extension.h) */
};

app_stage settings_stage(const char *prog, settings *s)
{
    return (app_stage){
        .cli = {.prog = prog, .default_transport = "curl", .table = &settings_table, .settings = s},
        .open_outputs_late = true, /* after --state's and --frontier's checks: crawler.c */
        .name = "queue",
        .number = 3};
}
