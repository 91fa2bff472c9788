/* app.h — the main() every crawler shares: parse the command line, make the selector,
 * the crawl core and the transport (and a thread pool when the crawler's flags ask for
 * one), handle SIGINT/SIGTERM (and SIGUSR1: a dump of the work in flight), run the
 * stage's crawl, write the report. A stage supplies its description (app_stage: its
 * name, its own flags) and its crawl function — the part the chapter teaches. */
#ifndef CRAWL_APP_H
#define CRAWL_APP_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "cli.h"
#include "crawl.h"
#include "curlglue.h"
#include "dns.h"
#include "net.h"
#include "outclaim.h"
#include "selector.h"
#include "threadpool.h"

/* A stage, as its main() describes it. */
typedef struct app_stage {
    cli_command cli;        /* its program name, default transport, own flags (cli.h) */
    bool open_outputs_late; /* --output and --trace-events are opened by the crawler, once
                             * its own checks have passed (app_open_outputs) */
    const char *name;       /* the report's "stage" */
    int number;             /* its pid in --trace-events' timeline */
} app_stage;

typedef struct app {
    crawl_options opt;
    const char *prog; /* the program's name, for messages */
    selector *loop;
    crawl *crawl;
    curl_glue *curl;    /* --transport curl */
    resolver *resolver; /* --transport raw without the pool: the chapter's */
    app_stage stage;    /* what app_open was given */
    void *settings;     /* the stage's own flags, as its table filled them */
    threadpool *pool;   /* opt.threads > 0: the thread pool */
    dns_resolver *dns;  /* with the pool, --transport raw (or opt.pool_dns): lookups
                             * in the pool */
    bool raw;           /* which of the two */
    outclaim *claim;    /* every file the crawl writes, locked (outclaim.h) */
    int argc;           /* the command line, as given to app_open (its options are */
    char **argv;        /* argv[1] to the first root, opt.roots) */
    size_t todo;        /* set by the stage: URLs still waiting when it returned */
    /* Set by the stage: print its work in flight (the task tree, as gdb's `info
     * tasks`, or the live Fetchers). `kill -USR1 PID` runs it at the
     * loop's next turn (the handler only notifies the loop: selector_notify). */
    void (*dump)(FILE *out);
    /* Set by the stage: what it tells a person on stderr once the report is written (a
     * summary), unless -q or the crawl failed. */
    void (*summary)(const struct app *a);
    /* Set by the stage: the exit status of a crawl that completed and wrote its report
     * (0: the default, 0). A crawler's own verdict on what it found, as wget's 4 and 8. */
    int exit_status;
} app;

/* Set when SIGINT or SIGTERM arrived (the loop is stopped at the same moment, for
 * good: selector_interrupt). The fetches in flight are abandoned and the report is
 * written with "interrupted": true and the URLs left to do; exit status 0. A second
 * SIGINT or SIGTERM kills the process at once (the default action). */
extern volatile sig_atomic_t app_interrupted;

/* Run the stage. crawl_fn runs the crawl to the end (or until interrupted) and
 * returns 0, or -1 on a fatal error (after printing one line), or APP_NOT_STARTED when
 * it failed (after printing one line) before fetching anything: then no report is
 * written. Returns the exit code: 0 done, 1 fatal, 2 usage. */
#define APP_NOT_STARTED (-2)
int app_main(int argc, char **argv, const app_stage *stage, int (*crawl_fn)(app *a));

/* app_main's first half, for tests and tools: parse argv, claim the files the crawl
 * writes (outclaim.h: a file another crawl holds is refused), make the loop, the crawl
 * core and the transport. A crawler that opens --output and --trace-events itself,
 * once its own checks have passed, says so in its app_stage (open_outputs_late) and
 * calls app_open_outputs; the others have them opened here. Returns 0; -1 when --help
 * or --version was printed; or the exit code (1, 2) after one line on stderr.
 * app_close frees what app_open made. */
int app_open(app *a, int argc, char **argv, const app_stage *stage);
void app_close(app *a);

/* A crawler that opens its outputs late (app_stage's open_outputs_late), once its own
 * checks have passed: open --output and --trace-events. Every check comes before: a
 * refused crawl leaves every file as it was. 0, or -1 after one line on stderr. */
int app_open_outputs(app *a);

/* The --timeout in milliseconds, at least 1. */
long app_timeout_ms(const app *a);

#endif
