/* signal_at.h — signal a crawler on its progress, not at a moment: a test that stops a
 * crawl mid-way (SIGINT, SIGKILL) waits until a file the crawler writes (its --output,
 * its --warc; or a testsite's --log) holds so many lines or bytes, then sends the
 * signal. A fixed moment comes, on a loaded machine, before the first page or after
 * the last; progress does not.
 *
 *   signal_at at = {.path = out, .lines = 100, .sig = SIGINT};
 *   run_crawler_signal_at(&r, argv, 60, &at);
 *
 * The file is looked at every 10 ms while the crawler's output is read (it never
 * blocks on a full pipe). Bounded: after SIGNAL_AT_MAX_SECS it is sent anyway (at.late
 * says so), and the test's own checks that the run was cut short report it. A crawler
 * that exits first (the file never got there) is sent nothing (at.sent false). */
#ifndef CRAWL_TEST_SIGNAL_AT_H
#define CRAWL_TEST_SIGNAL_AT_H

#include <stdbool.h>

#include "jsonl.h"

enum { SIGNAL_AT_MAX_SECS = 30 };

typedef struct signal_at {
    const char *path; /* the file to watch (absent: holds nothing yet) */
    long long lines;  /* send once it holds this many newlines, */
    long long bytes;  /* or this many bytes (one of the two, the other 0) */
    int sig;
    /* what happened, set by run_crawler_signal_at: */
    bool sent;      /* false: the crawler had exited first */
    bool late;      /* the bound passed: sent anyway */
    long long seen; /* the lines (or bytes) the file held when it was sent */
    double waited;  /* seconds from the start to the signal */
    double start;   /* (its own: when the run started) */
} signal_at;

/* run_crawler (jsonl.h), with the signal sent as a says; 0, or -1 as run_crawler. */
int run_crawler_signal_at(crawl_run *r, char *const argv[], double limit_secs, signal_at *a);
/* The newlines in path (0: no file): where a watch of a file that grows across runs
 * (a testsite's --log) starts from. */
long long signal_at_lines(const char *path);
/* "signal 2 at 112 lines of PATH after 0.41 s" (late, or not sent, said), for failure
 * messages: a static buffer, overwritten by the next call. */
const char *signal_at_describe(const signal_at *a);

#endif
