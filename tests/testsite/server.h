/* server.h — the testsite server: listening socket, accept loop, statistics, and the
 * content it serves (a site file or a generated site). Connections are in conn.h. */
#ifndef TESTSITE_SERVER_H
#define TESTSITE_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gen.h"
#include "list.h"
#include "selector.h"
#include "site.h"

typedef struct server_stats {
    long served;      /* finished site requests (not /__stats) */
    long dropped;     /* site requests answered by closing (drop=, reset=) */
    long in_progress; /* heads received, responses not finished */
    long peak_in_progress;
    long connections; /* open client connections */
    long peak_connections;
    long robots_txt; /* site requests for /robots.txt (any query), any answer */
} server_stats;

struct conn;

#define SERVER_MAX_LOG_HEADERS 8

typedef struct server {
    selector *sel;
    int listen_fd;
    sel_timer *accept_timer; /* pending retry after EMFILE, or NULL */
    site *site;              /* a site file, or NULL */
    const gen_spec *gen;     /* a generated site, or NULL */
    char base[128];          /* "http://127.0.0.1:PORT", no trailing slash */
    uint64_t delay_ms;       /* --delay: for every page without its own delay= */
    server_stats stats;
    char *user_agent; /* the last site request's User-Agent (malloc'd), or NULL */
    FILE *log;        /* --log FILE: a line per counted request, or NULL */
    const char *log_headers[SERVER_MAX_LOG_HEADERS]; /* --log-header NAME, in order */
    size_t nlog_headers;
    bool log_sent;   /* --log-sent: each line ends in STATUS BYTES */
    list_node conns; /* every open connection (conn.c) */
    bool warned_emfile;
    bool warned_register;
} server;

/* Bind and listen on addr:port (port 0: any free port) and set srv->base; call it
 * first (server_shutdown may follow either way). Returns 0, or -1 with a message in
 * err. */
int server_listen(server *srv, const char *addr, int port, char *err, size_t errlen);
/* Start accepting connections on srv->sel. Returns 0 or -1. */
int server_start(server *srv);
/* Close every connection and the listening socket. */
void server_shutdown(server *srv);

/* Statistics hooks, called by the connections. */
enum request_end { END_SERVED, END_DROPPED, END_ABORTED };
void server_request_begin(server *srv);
void server_request_end(server *srv, enum request_end how);

/* --log FILE: one line per counted request when it ends, written at once:
 *   BEGIN_MS END_MS HOST PATH HOW [FIELD...]
 * BEGIN_MS: its head was read; END_MS: its answer ended (CLOCK_MONOTONIC, ms, as
 * decimals with microseconds); HOST: the Host header ("-" without one); PATH: as
 * requested; HOW: served | dropped | aborted. So a test checks at the server how many
 * requests a crawler had in flight to one host, and how far apart it started them.
 * FIELD: one per --log-header NAME, in order — "-" when the request had no such
 * field, else "=" and its values (server_log_fields). fields: those FIELDs, each after
 * a space, or NULL. With --log-sent, the line ends in STATUS BYTES: the status sent
 * (0 for a raw response or none: "-") and the bytes of the response written (head and
 * body), so that a test sees what a conditional request saved. */
void server_log_request(server *srv, double begin_ms, const char *host, const char *path,
                        const char *fields, enum request_end how, int status, uint64_t sent);
/* The FIELDs of the request whose head is buf[0..len) (malloc'd), or NULL without
 * --log-header: each value as request_field_values gives it, a byte that is a space,
 * a control, '%' or not ASCII percent-encoded, so that a line splits at its spaces. */
char *server_log_fields(const server *srv, const char *buf, size_t len);
double server_now_ms(void);

#endif
