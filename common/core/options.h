/* options.h — what a crawl is asked to do: the crawl core's settings. The app layer
 * fills them from the command line (cli.c); the core and the stages only read them.
 * Each field names the flag that sets it, for the reader; the layers below the app
 * never word a message with a flag name. */
#ifndef CRAWL_OPTIONS_H
#define CRAWL_OPTIONS_H

#define CRAWL_MAX_HEADERS 64     /* --header given at most this many times */

typedef struct crawl_options {
    char **roots;            /* as given on the command line (not owned) */
    int nroots;
    int max_tasks;           /* --max-tasks N (100) */
    int max_redirect;        /* --max-redirect N (10) */
    int max_tries;           /* --max-tries N (4) */
    const char *exclude;     /* --exclude REGEX */
    int strict;              /* --strict (default) / --lenient */
    const char *selector;    /* --selector epoll|poll|select */
    const char *transport;   /* --transport raw|curl (default per stage) */
    const char *format;      /* --format text|jsonl */
    const char *output;      /* --output FILE (default stdout) */
    double timeout;          /* --timeout SECS per request (30) */
    long max_pages;          /* --max-pages N (0 = no limit) */
    long long max_size;      /* --max-size BYTES per body (16 MiB) */
    const char *cacert;      /* --cacert FILE */
    const char *trace_events;/* --trace-events FILE */
    const char *user_agent;  /* --user-agent NAME (crawl-queue only; NULL: the transports'
                              * default, crawlstages/VERSION) */
    int threads;             /* --threads N (4): the thread pool, crawl-queue only */
    double dns_timeout;      /* --dns-timeout SECS (60): a lookup in the pool, crawl-queue */
    const char *store;       /* --store FILE.db (crawl-queue) */
    const char *state;       /* --state FILE.db: the crawl's frontier (crawl-queue) */
    int resume;              /* --resume: go on with --state's crawl; --output appended */
    const char *warc;        /* --warc FILE (crawl-queue): WARC/1.1, FILE.gz compressed */
    const char *cdx;         /* --cdx FILE (crawl-queue, with --warc): a CDXJ index */
    int ignore_robots;       /* --ignore-robots (crawl-queue only) */
    const char *frontier;    /* --frontier redis://HOST:PORT/NAME (crawl-queue): the Queue
                              * on Redis Streams, shared by every process of the crawl */
    double claim_after;      /* --claim-after SECS (60): take over entries left that long
                              * unacknowledged by another process (a dead one) */
    const char *fetched_by;  /* with --frontier: "HOST:PID", this process's name in Redis
                              * and in each of its records */
    /* Politeness (crawl-queue): any of these flags sets polite, and the Queue becomes
     * the polite one (stage3_queue/frontier/hostqueue.h). */
    int polite;
    int polite_local;        /* one of them holds per process only (not with --frontier) */
    int per_host;            /* --per-host N (0: no cap beyond --max-tasks) */
    int per_ip;              /* --per-ip: the cap and delay per address, not per name */
    double delay;            /* --delay SECS between starts on one host (0) */
    int random_delay;        /* --random-delay: x [0.5, 1.5) */
    double max_crawl_delay;  /* --max-crawl-delay SECS (30): robots.txt's Crawl-delay cap */
    int autothrottle;        /* --autothrottle */
    double target_concurrency; /* --target-concurrency N (1) */
    int sitemaps;            /* --sitemaps: seed from each host's sitemaps */
    /* --header "Name: value" (crawl-queue, repeatable): sent on every request */
    const char *headers[CRAWL_MAX_HEADERS];
    int nheaders;
    int verbose;             /* -v, repeatable */
    int quiet;               /* -q */
} crawl_options;

#endif
