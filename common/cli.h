/* cli.h — the command line shared by crawl-callbacks, crawl-generators and crawl-queue.
 *
 *   PROG [options] ROOT...
 * Exit codes: 0 the crawl completed (failed fetches are records in the report),
 * 1 a fatal error, 2 bad usage (one line on stderr naming the bad argument).
 */
#ifndef CRAWL_CLI_H
#define CRAWL_CLI_H

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
    int verbose;             /* -v, repeatable */
    int quiet;               /* -q */
} crawl_options;

enum { CLI_OK = 0, CLI_EXIT_OK = -1, CLI_USAGE = 2 };

/* Parse argv. prog names the program in messages; default_transport is the stage's.
 * Returns CLI_OK, CLI_EXIT_OK (help or version was printed: exit 0) or CLI_USAGE
 * (one line was printed on stderr: exit 2). Roots are checked here: each must be
 * accepted by url_fix. */
int cli_parse(crawl_options *o, int argc, char **argv, const char *prog,
              const char *default_transport);

#endif
