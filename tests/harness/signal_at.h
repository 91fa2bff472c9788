/* signal_at.h — signal a crawler on its progress, not at a moment: a test that stops a
 * crawl mid-way (SIGINT, SIGKILL) waits until a file the crawler writes (its --output,
 * its --warc) holds so many whole lines or bytes, then sends the signal. A fixed moment
 * comes, on a loaded machine, before the first page or after the last; progress does
 * not. For run_crawler_at (jsonl.h), at 0 s:
 *
 *   signal_at at = {.path = out, .lines = 100, .sig = SIGINT};
 *   run_crawler_at(&r, argv, 60, 0, signal_at_progress, &at);
 *
 * Bounded: after SIGNAL_AT_MAX_SECS it is sent anyway (at.late says so), and the test's
 * own checks that the run was cut short mid-way report it. A crawler that exits first
 * (the file never got there) is sent nothing (at.exited). */
#ifndef CRAWL_TEST_SIGNAL_AT_H
#define CRAWL_TEST_SIGNAL_AT_H

#include <stdbool.h>
#include <sys/types.h>

enum { SIGNAL_AT_MAX_SECS = 30 };

typedef struct signal_at {
    const char *path; /* the file to watch (absent: holds nothing yet) */
    long long lines;  /* send once it holds this many newlines, */
    long long bytes;  /* or this many bytes (one of the two, the other 0) */
    int sig;
    /* what happened, set by signal_at_progress: */
    long long seen; /* the lines (or bytes) the file held when it was sent */
    double waited;  /* seconds from the call to the signal */
    bool late;      /* the bound passed: sent anyway */
    bool exited;    /* the crawler had exited: nothing sent */
} signal_at;

/* A run_crawler_at callback: ctx is a signal_at. */
void signal_at_progress(pid_t pid, void *ctx);
/* "SIGINT at 112 lines of PATH after 0.41 s" (late, exited said), for failure
 * messages: a static buffer, overwritten by the next call. */
const char *signal_at_describe(const signal_at *a);

#endif
