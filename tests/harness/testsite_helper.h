/* testsite_helper.h — start and stop the testsite server from a cmocka test, and talk
 * to it with small blocking, time-bounded HTTP requests.
 *
 *   testsite ts;
 *   const char *const args[] = {"--generate", "pages=50", NULL};
 *   assert_int_equal(testsite_start(&ts, args), 0);   // ts.url is "http://127.0.0.1:P/"
 *   int status; size_t len;
 *   char *body = testsite_fetch(&ts, "/", &status, &len);
 *   ...
 *   free(body);
 *   testsite_stop(&ts);
 */
#ifndef CRAWL_TESTSITE_HELPER_H
#define CRAWL_TESTSITE_HELPER_H

#include <stddef.h>
#include <sys/types.h>

typedef struct testsite {
    pid_t pid;     /* 0 when not running */
    int out_fd;    /* the server's stdout (read end), -1 when not running */
    char url[128]; /* base URL with a trailing slash, "http://127.0.0.1:PORT/" */
} testsite;

/* GET /__stats. A struct tag only: the function below has the plain name, so write
 *   struct testsite_stats st;  testsite_stats(ts, &st);                              */
struct testsite_stats {
    long served, dropped, in_progress, peak_in_progress, connections, peak_connections;
    long robots_txt;      /* requests for /robots.txt (counted in served too) */
    char user_agent[256]; /* the last request's User-Agent; "" when it sent none */
};

/* Run TESTSITE_BIN with extra_args (NULL-terminated, after the program name) and wait
 * (10 s at most) for the base URL it prints. Returns 0, or -1 (the child is killed). */
int testsite_start(testsite *ts, const char *const extra_args[]);
/* Write text (a site file) to DIR/NAME.site, then testsite_start with extra_args (NULL:
 * none) and that file. 0, or -1. */
int testsite_start_text(testsite *ts, const char *dir, const char *name, const char *text,
                        const char *const extra_args[]);
/* SIGTERM, wait up to 5 s, then SIGKILL. Idempotent. */
void testsite_stop(testsite *ts);
/* The same, returning the child's wait status (as waitpid gives it), or -1 when it was
 * not running. */
int testsite_stop_status(testsite *ts);

/* The server's port, from ts->url. */
int testsite_port(const testsite *ts);
/* A port on 127.0.0.1 nobody listens on now (the kernel's choice for a socket bound to
 * port 0, released at once), for a server started with --port; -1 on failure. */
int testsite_free_port(void);

/* The path of an absolute URL: "http://h:1/a?q" -> "/a?q" ("/" when it has none). */
const char *testsite_path_of(const char *url);
/* A blocking socket connected to the server (5 s at most), or -1. */
int testsite_connect(const testsite *ts);

/* GET path over HTTP/1.0 (5 s timeout). Returns the malloc'd body (NUL-terminated;
 * length in *len) and the status in *status; NULL with *status -1 on a failure (no
 * connection, timeout, no response head). */
char *testsite_fetch(const testsite *ts, const char *path, int *status, size_t *len);
/* Send `request` verbatim and read until the server closes or timeout_ms passes.
 * Returns every byte received (malloc'd, NUL-terminated, length in *len; possibly
 * empty), or NULL when the connection could not be made. */
char *testsite_request(const testsite *ts, const char *request, size_t *len, int timeout_ms);
/* GET /__stats (5 s timeout). Returns 0, or -1. */
int testsite_stats(const testsite *ts, struct testsite_stats *out);

/* Remove dir and everything below it (a test's temporary directory; links are not
 * followed). 0, or -1 when something could not be removed. */
int test_remove_tree(const char *dir);

/* The value of header `name` (case-insensitive) in a raw response head, copied into
 * out. Returns 0, or -1 when absent. */
int testsite_header(const char *response, const char *name, char *out, size_t outlen);

#endif
