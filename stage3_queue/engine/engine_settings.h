/* engine_settings.h — the settings of crawl-queue's crawl, as the engine's extensions
 * read them (Scrapy's crawler.settings): the values of the command line's flags, filled
 * by the assembly's table (assembly/settings.c) before anything is made. Plain data:
 * which flags there are, their ranges and their rules are the assembly's; an extension
 * reads the fields it needs in its descriptor (extension.h), when the registry asks
 * whether it is on and makes it.
 */
#ifndef CRAWL_ENGINE_SETTINGS_H
#define CRAWL_ENGINE_SETTINGS_H

#include "app.h"
#include "cli.h"

#define SETTINGS_MAX_HEADERS 64 /* --header given at most this many times */
#define SETTINGS_PER_HOST    8  /* --per-host's default: requests in flight per host */

typedef struct settings {
    const char *user_agent; /* --user-agent NAME (NULL: the transports' default) */
    int threads;            /* --threads N (4): the thread pool */
    double dns_timeout;     /* --dns-timeout SECS (60): a lookup in the pool */
    double progress_every;  /* --progress-interval SECS (60): off a terminal, a progress
                             * line this often (0: none) */
    const char *store;      /* --store FILE.db */
    const char *state;      /* --state FILE.db: the crawl's frontier */
    int resume;             /* --resume: go on with --state's crawl; --output appended */
    const char *warc;       /* --warc FILE: WARC/1.1, FILE.gz compressed */
    const char *cdx;        /* --cdx FILE (with --warc): a CDXJ index */
    int ignore_robots;      /* --ignore-robots */
    cli_list header;        /* --header "Name: value", repeatable: sent on every request */
    const char *frontier;   /* --frontier redis://HOST:PORT/NAME: the Queue on Redis
                             * Streams, shared by every process of the crawl */
    double claim_after;     /* --claim-after SECS (60): take over entries left that long
                             * unacknowledged by another process (a dead one) */
    /* Politeness: on unless --chapter; the Queue is then the polite one (hostqueue.h). */
    int chapter;               /* --chapter: the chapter's crawler (its Queue, no politeness) */
    int polite;                /* !chapter: the polite Queue and middleware */
    int polite_given;          /* a politeness flag was given (not with --chapter) */
    int polite_local;          /* one of them holds per process only (not with --frontier) */
    int per_host;              /* --per-host N (8; 0: no cap beyond --max-tasks) */
    int per_ip;                /* --per-ip: the cap and delay per address, not per name */
    double delay;              /* --delay SECS between starts on one host (0) */
    int random_delay;          /* --random-delay: x [0.5, 1.5) */
    double max_crawl_delay;    /* --max-crawl-delay SECS (30): robots.txt's Crawl-delay cap */
    int autothrottle;          /* --autothrottle */
    double target_concurrency; /* --target-concurrency N (1) */
    int sitemaps;              /* --sitemaps: seed from each host's sitemaps */
    const char *cookie_file;   /* --cookies FILE: read first, written back at the end */
    cli_list cookie;           /* --cookie NAME=VALUE, repeatable: to the roots' hosts */
    const char *proxy;         /* --proxy URL: every request through it */
    const char *user;          /* --user USER:PASSWORD: basic/digest auth to the roots' hosts */
    int netrc;                 /* --netrc: the roots' hosts' ~/.netrc logins */
    long long warc_max_size;   /* --warc-max-size BYTES (0: one file): rotate the archive */
    const char *warc_base;     /* --warc as given; with --warc-max-size, warc is the first
                                * file's name (warc_file_name: FILE-00000.warc.gz) */
    const char *recrawl;       /* --recrawl OLD.db: ask for OLD.db's pages only if changed */
    int http1_1;               /* --http1.1: no HTTP/2 (the curl transport offers it over
                                * https by default) */
    int insecure;              /* --insecure: TLS certificates not checked */
    int fail_on_broken;        /* --fail-on-broken: exit 8 or 4 on broken links (broken.h) */

    /* Spider middleware (spidermw/) */
    int depth;        /* records say "depth" (not with --chapter unless --max-depth) */
    int max_depth;    /* --max-depth N (-1: no limit; sets depth) */
    int referrer;     /* records say "referrer", Referer sent (not with --chapter) */
    cli_list include; /* --include REGEX, repeatable: links followed */
    int requisites;   /* --requisites: also fetch what pages need */
    /* Spiders (docs/spiders.md). */
    const char *spider;    /* --spider FILE.lua (loaded by the checks: luaspider.h) */
    const char *items;     /* --items FILE: the scraped items, JSONL */
    double spider_budget;  /* --spider-budget N instructions per callback */
    int spider_memory;     /* --spider-memory MB: the Lua state's cap */
    double spider_timeout; /* --spider-timeout SECS a callback may run */
    cli_list extract;      /* --extract NAME=XPATH, repeatable */
} settings;

/* The settings of a's crawl (app_open was given the assembly's settings_stage). */
static inline const settings *settings_of(const app *a)
{
    return a->settings;
}

#endif
