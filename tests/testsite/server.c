/* server.c — the listening socket and the accept loop (see server.h). When the process
 * runs out of descriptors, accepting pauses for 100 ms on a timer, then resumes. */
#include "server.h"

#include "conn.h"
#include "log.h"
#include "request.h"
#include "sbuf.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define ACCEPT_PAUSE_MS 100
#define LISTEN_BACKLOG  (SOMAXCONN > 4096 ? SOMAXCONN : 4096)

int server_listen(server *srv, const char *addr, int port, char *err, size_t errlen)
{
    list_init(&srv->conns);
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV};
    struct addrinfo *ai = NULL;
    char portstr[16];
    snprintf(portstr, sizeof portstr, "%d", port);
    int rc = getaddrinfo(addr, portstr, &hints, &ai);
    if (rc != 0) {
        snprintf(err, errlen, "bad --bind address '%s': %s", addr, gai_strerror(rc));
        return -1;
    }
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0
        || bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, LISTEN_BACKLOG) < 0) {
        snprintf(err, errlen, "cannot listen on %s port %d: %s", addr, port, strerror(errno));
        if (fd >= 0)
            close(fd);
        freeaddrinfo(ai);
        return -1;
    }
    int family = ai->ai_family;
    freeaddrinfo(ai);
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0) {
        snprintf(err, errlen, "getsockname: %s", strerror(errno));
        close(fd);
        return -1;
    }
    int bound = ntohs(family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                         : ((struct sockaddr_in *)&ss)->sin_port);
    /* the wildcard addresses are reached through the loopback */
    const char *host = addr;
    if (!strcmp(addr, "0.0.0.0"))
        host = "127.0.0.1";
    else if (!strcmp(addr, "::"))
        host = "::1";
    if (family == AF_INET6)
        snprintf(srv->base, sizeof srv->base, "http://[%s]:%d", host, bound);
    else
        snprintf(srv->base, sizeof srv->base, "http://%s:%d", host, bound);
    srv->listen_fd = fd;
    return 0;
}

static void on_accept(selector *s, int fd, int events, void *data);

static void resume_accept(selector *s, void *data)
{
    server *srv = data;
    srv->accept_timer = NULL;
    if (selector_register(s, srv->listen_fd, SEL_READ, on_accept, srv) < 0)
        log_error("testsite: cannot watch the listening socket: %s", strerror(errno));
}

static void pause_accept(server *srv, int err)
{
    if (!srv->warned_emfile) {
        log_warn("testsite: accept: %s; pausing accepts for %d ms (warned once)", strerror(err),
                 ACCEPT_PAUSE_MS);
        srv->warned_emfile = true;
    }
    selector_unregister(srv->sel, srv->listen_fd);
    srv->accept_timer = selector_call_later(srv->sel, ACCEPT_PAUSE_MS, resume_accept, srv);
}

static void on_accept(selector *s, int fd, int events, void *data)
{
    (void)s;
    (void)events;
    server *srv = data;
    for (;;) {
        int c = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (c >= 0) {
            conn_accepted(srv, c);
            continue;
        }
        if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            pause_accept(srv, errno); /* EMFILE, ENFILE, ENOBUFS, ENOMEM, ... */
        return;
    }
}

int server_start(server *srv)
{
    return selector_register(srv->sel, srv->listen_fd, SEL_READ, on_accept, srv);
}

void server_shutdown(server *srv)
{
    free(srv->user_agent);
    srv->user_agent = NULL;
    conn_close_all(srv);
    if (srv->accept_timer) {
        selector_cancel(srv->sel, srv->accept_timer);
        srv->accept_timer = NULL;
    }
    if (srv->listen_fd >= 0) {
        selector_unregister(srv->sel, srv->listen_fd);
        close(srv->listen_fd);
        srv->listen_fd = -1;
    }
}

void server_request_begin(server *srv)
{
    server_stats *st = &srv->stats;
    if (++st->in_progress > st->peak_in_progress)
        st->peak_in_progress = st->in_progress;
}

double server_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

void server_log_request(server *srv, double begin_ms, const char *host, const char *path,
                        const char *fields, enum request_end how, int status, uint64_t sent)
{
    if (!srv->log)
        return;
    static const char *const hows[] = {"served", "dropped", "aborted"};
    fprintf(srv->log, "%.3f %.3f %s %s %s%s", begin_ms, server_now_ms(), host && *host ? host : "-",
            path ? path : "-", hows[how], fields ? fields : "");
    if (srv->log_sent) {
        if (status > 0)
            fprintf(srv->log, " %d %llu", status, (unsigned long long)sent);
        else
            fprintf(srv->log, " - %llu", (unsigned long long)sent);
    }
    fputc('\n', srv->log);
    fflush(srv->log);
}

char *server_log_fields(const server *srv, const char *buf, size_t len)
{
    if (!srv->nlog_headers)
        return NULL;
    sbuf b = {0};
    for (size_t i = 0; i < srv->nlog_headers; i++) {
        char *v = request_field_values(buf, len, srv->log_headers[i]);
        sbuf_adds(&b, v ? " =" : " -");
        for (const unsigned char *p = (const unsigned char *)v; p && *p; p++) {
            if (*p <= ' ' || *p == '%' || *p >= 0x7f)
                sbuf_printf(&b, "%%%02X", *p);
            else
                sbuf_add(&b, p, 1);
        }
        free(v);
    }
    return sbuf_take(&b, NULL);
}

void server_request_end(server *srv, enum request_end how)
{
    srv->stats.in_progress--;
    if (how == END_SERVED)
        srv->stats.served++;
    else if (how == END_DROPPED)
        srv->stats.dropped++;
}
