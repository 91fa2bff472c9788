/* options.h — what a crawl is asked to do: the crawl core's settings. The app layer
 * fills them from the command line (cli.c); the core and the stages only read them.
 * Each field of the core's own flags names the flag that sets it, for the reader; the
 * layers below the app never word a message with a flag name. A crawler's own flags
 * live in its own struct (cli.h's table); the last fields here are what such a crawler
 * tells the core and the shared main, in their words. */
#ifndef CRAWL_OPTIONS_H
#define CRAWL_OPTIONS_H

#define CRAWL_MAX_EXCLUDES 64 /* --exclude given at most this many times */

typedef struct crawl_options {
    char **roots; /* as given on the command line (not owned) */
    int nroots;
    int max_tasks;       /* --max-tasks N (100) */
    int max_redirect;    /* --max-redirect N (10) */
    int max_tries;       /* --max-tries N (4) */
    const char *exclude; /* --exclude REGEX: the first one given */
    /* every --exclude, in order (repeatable: a URL matching any is excluded) */
    const char *excludes[CRAWL_MAX_EXCLUDES];
    int nexcludes;
    int strict;               /* --strict (default) / --lenient */
    const char *selector;     /* --selector epoll|poll|select */
    const char *transport;    /* --transport raw|curl (default per stage) */
    const char *format;       /* --format text|jsonl */
    const char *output;       /* --output FILE (default stdout) */
    double timeout;           /* --timeout SECS per request (30) */
    long max_pages;           /* --max-pages N (0 = no limit) */
    long long max_size;       /* --max-size BYTES per body (16 MiB) */
    const char *cacert;       /* --cacert FILE */
    const char *trace_events; /* --trace-events FILE */
    int verbose;              /* -v, repeatable */
    int quiet;                /* -q */
    /* Set by a crawler (its table's finish hook, cli.h; trace_pid: app_main), not by a
     * flag of the core: what the core and the shared main must know of its features. */
    const char *user_agent;  /* the User-Agent both transports send (NULL: their default,
                              * crawlstages/VERSION) */
    int threads;             /* the thread pool's threads (0: no pool) */
    double dns_timeout;      /* with a pool: a DNS lookup in it, in seconds */
    int pool_dns;            /* with a pool: its resolver even on the curl transport, for
                              * lookups of the crawler's own */
    int append_output;       /* --output goes on from the end of the file (a crawl resumed) */
    const char *keep_output; /* NULL, or: an --output that holds records is not replaced
                              * (this crawl would go on with it); the words saying how */
    const char *keep_files;  /* the words saying how to go on with a crawler's file that
                              * holds data and is never replaced (cli.h's out_keep) */
    const char *fetched_by;  /* NULL, or this process's name in each record (one crawl
                              * shared by many processes) */
    int host_lanes;          /* --trace-events: a timeline lane per host, not per slot */
    int own_transfers;       /* transfers beyond max_tasks for the crawler's own downloads
                              * (sitemaps), so that they never take the pages' (curl) */
    int trace_pid;           /* --trace-events: this process's pid in the timeline (0: 1) */
    int http2;               /* the curl transport offers HTTP/2 over https (ALPN), one
                              * connection per host; records say "http_version" */
    int insecure;            /* the curl transport checks no TLS certificate */
    int record_http_version; /* each jsonl record says "http_version" (report.h) */
    int record_times;        /* each jsonl record says "fetched_at" and "elapsed" */
    int normalize_urls;      /* seen_urls compares URLs in RFC 3986's normal form
                              * (url_normalize), and a record whose URL differs from its
                              * normal form says "url_normalized" */
    int count_skips;         /* URLs not scheduled are counted by reason (crawl_skip), and
                              * the summary says "skipped" */
} crawl_options;

#endif
