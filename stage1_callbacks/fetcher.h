/* fetcher.h — the chapter's stage 1, "Programming With Callbacks": the Fetcher object
 * that holds one URL's fetch while it waits, and its chain of callbacks
 * fetch -> connected -> read_response (fetcher.c), or, with --transport curl,
 * fetch -> response_done (fetcher_curl.c).
 *
 * The blocking version of fetch keeps the socket, the request and the response in
 * local variables, and remembers where it was by the thread's instruction pointer.
 * A callback returns to the event loop after every step, losing its stack frame, so
 * each of those locals becomes a field below, saved by hand ("stack ripping"); the
 * continuation becomes the callback registered with the selector.
 */
#ifndef CRAWL_FETCHER_H
#define CRAWL_FETCHER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "app.h"
#include "list.h"

typedef struct Fetcher Fetcher;

/* Called once the Fetcher's URL is recorded (a response, or the last failure). The
 * Fetcher has finished; the callee frees it with fetcher_free. */
typedef void (*fetcher_done_fn)(Fetcher *f, void *ctx);

struct Fetcher {
    /* What crawling.py's fetch gets as arguments. */
    app *a;
    crawl_request *job; /* the URL and what travels with it (crawl_request.h) */
    const char *url;    /* job's */
    /* The retry loop's locals: which try this is, and why the last one failed. */
    int tries;
    char *exception;
    /* One attempt's locals, alive between callbacks. */
    crawl_fetch *response; /* the chapter's self.response, parsed for links as it comes */
    int sock;              /* the chapter's self.sock; -1 when none */
    char *request;         /* the GET, and how much of it the socket has taken */
    size_t request_len, sent;
    bool connected;      /* net_connect_result already said yes */
    http_parser *parser; /* where the recv'd bytes go */
    sel_timer *timer;    /* this attempt's --timeout */
    curl_req *req;       /* --transport curl: the transfer instead of the socket */
    /* No descriptor was free (EMFILE): the timer that calls fetch again, and the last
     * wait in ms (doubled each time, 0 after a socket was had). A thread would simply
     * sleep in its loop; a callback has to save even the waiting in the object. */
    sel_timer *fd_wait;
    unsigned fd_backoff;
    /* Where to go when the chain ends: the crawler's add_url and its bookkeeping. */
    crawl_add_fn add_url;
    fetcher_done_fn done;
    void *ctx;
    list_node link; /* in the list of live Fetchers (fetcher.c) */
};

/* The chapter's Fetcher(url): nothing starts until fetch. */
Fetcher *fetcher_new(app *a, const crawl_request *r, crawl_add_fn add_url, fetcher_done_fn done,
                     void *ctx);
/* Begin (or, after a failed try, begin again). Returns as soon as the first I/O is
 * waiting; done may already have been called if every try failed right away. */
void fetch(Fetcher *f);
/* Free a finished Fetcher, or abandon one in flight: close its socket or cancel its
 * transfer, cancel its timer, forget its attempt. Nothing is recorded. */
void fetcher_free(Fetcher *f);
/* Abandon every live Fetcher (after an interruption), as fetcher_free does. */
void fetcher_free_all(void);
/* Print every live Fetcher: its URL, what it waits for, the body bytes received so far,
 * its try ("N live Fetcher(s):" first). What `kill -USR1` shows of crawl-callbacks
 * (app.dump); gdb's `info fetchers` (docs/gdb/crawlstages.py) prints the same from
 * memory. All a callback leaves behind is these objects. */
void fetcher_dump_all(FILE *out);

/* ---- between fetcher.c and the curl variant, fetcher_curl.c ---- */

/* Start one try over libcurl: 0 when the transfer runs, -1 when the try failed at
 * once (fetcher_fail_now). */
int fetcher_start_curl(Fetcher *f);
/* How a try ends (fetcher.c). The whole response arrived (truncated: cut at
 * --max-size): record it and finish. */
void fetcher_succeeded(Fetcher *f, bool truncated);
/* It failed in a callback: keep the error and begin the next try (fetch). */
void fetcher_fail(Fetcher *f, const char *error);
/* It failed before it could wait for anything: keep the error; returns -1, for
 * fetch's loop to go on. */
int fetcher_fail_now(Fetcher *f, const char *error);

#endif
