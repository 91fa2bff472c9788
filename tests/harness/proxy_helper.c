/* proxy_helper.c — the tests' forward HTTP proxy (proxy_helper.h). */
#include "proxy_helper.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define HEAD_MAX 65536

static void set_timeouts(int fd)
{
    struct timeval tv = {.tv_sec = 5};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

static int send_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
        if (w <= 0)
            return -1;
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

/* The request head (through its empty line) into buf; its length, or -1. */
static long read_head(int fd, char *buf, size_t cap)
{
    size_t n = 0;
    while (n + 1 < cap) {
        ssize_t r = recv(fd, buf + n, cap - 1 - n, 0);
        if (r <= 0)
            return -1;
        n += (size_t)r;
        buf[n] = '\0';
        char *end = strstr(buf, "\r\n\r\n");
        if (end)
            return (long)(end + 4 - buf);
    }
    return -1;
}

static void answer(int fd, const char *status)
{
    char msg[128];
    int n = snprintf(msg, sizeof msg,
                     "HTTP/1.1 %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", status);
    send_all(fd, msg, (size_t)n);
}

/* host (an address on 127.0.0.0/8, or "hostK.test") and port as an address; -1 when
 * it is neither. */
static int resolve(const char *host, int port, struct sockaddr_in *sa)
{
    int k, used = 0;
    char ip[32];
    if (sscanf(host, "host%d.test%n", &k, &used) == 1 && host[used] == '\0' && k > 0 && k < 255) {
        snprintf(ip, sizeof ip, "127.0.0.%d", k);
        host = ip;
    }
    memset(sa, 0, sizeof *sa);
    sa->sin_family = AF_INET;
    sa->sin_port = htons((unsigned short)port);
    if (inet_pton(AF_INET, host, &sa->sin_addr) != 1 || (ntohl(sa->sin_addr.s_addr) >> 24) != 127
        || port <= 0 || port > 65535)
        return -1;
    return 0;
}

/* "http://HOST[:P]/path": the address and the path; -1 when it is not one. */
static int parse_target(const char *t, struct sockaddr_in *sa, const char **path)
{
    char host[64];
    int port = 80, used = 0;
    if (strncasecmp(t, "http://", 7) != 0 || sscanf(t + 7, "%63[a-z0-9.]%n", host, &used) != 1)
        return -1;
    const char *p = t + 7 + used;
    if (*p == ':')
        port = (int)strtol(p + 1, (char **)&p, 10);
    *path = *p == '/' ? p : "/";
    return resolve(host, port, sa);
}

static void log_line(test_proxy *px, const char *a, const char *b)
{
    pthread_mutex_lock(&px->lock);
    if (px->nlog < TEST_PROXY_MAX_LOG) {
        char *line = malloc(strlen(a) + strlen(b) + 2);
        if (line) {
            sprintf(line, "%s %s", a, b);
            px->log[px->nlog++] = line;
        }
    }
    pthread_mutex_unlock(&px->lock);
}

static int recv_all(int fd, unsigned char *buf, size_t n)
{
    while (n > 0) {
        ssize_t r = recv(fd, buf, n, 0);
        if (r <= 0)
            return -1;
        buf += r;
        n -= (size_t)r;
    }
    return 0;
}

/* Bytes both ways until either side closes, 5 s pass without one, or the proxy
 * stops. */
static void relay(test_proxy *px, int a, int b)
{
    char buf[16384];
    for (int idle = 0; idle < 50 && !px->stop;) {
        struct pollfd p[2] = {{.fd = a, .events = POLLIN}, {.fd = b, .events = POLLIN}};
        int n = poll(p, 2, 100);
        if (n < 0)
            return;
        idle = n == 0 ? idle + 1 : 0;
        for (int i = 0; i < 2; i++) {
            if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            ssize_t r = recv(p[i].fd, buf, sizeof buf, 0);
            if (r <= 0 || send_all(p[1 - i].fd, buf, (size_t)r) < 0)
                return;
        }
    }
}

/* RFC 1928: the greeting (no authentication), one CONNECT, the reply, then relay. */
static void serve_socks5(test_proxy *px, int fd)
{
    unsigned char b[300], pb[2];
    char host[256] = "", where[300];
    if (recv_all(fd, b, 2) < 0 || recv_all(fd, b + 2, b[1]) < 0 || send_all(fd, "\x05\x00", 2) < 0
        || recv_all(fd, b, 4) < 0 || b[1] != 1)
        return;
    if (b[3] == 1 && recv_all(fd, b + 4, 4) == 0)
        inet_ntop(AF_INET, b + 4, host, sizeof host);
    else if (b[3] == 3 && recv_all(fd, b + 4, 1) == 0 && recv_all(fd, b + 5, b[4]) == 0)
        snprintf(host, sizeof host, "%.*s", b[4], (const char *)b + 5);
    if (!host[0] || recv_all(fd, pb, 2) < 0)
        return;
    int port = pb[0] << 8 | pb[1];
    snprintf(where, sizeof where, "%s:%d", host, port);
    log_line(px, "SOCKS5", where);
    struct sockaddr_in sa;
    int up = resolve(host, port, &sa) < 0 ? -1 : socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (up >= 0)
        set_timeouts(up);
    bool ok = up >= 0 && connect(up, (struct sockaddr *)&sa, sizeof sa) == 0;
    static const char yes[10] = {5, 0, 0, 1}, no[10] = {5, 4, 0, 1};
    send_all(fd, ok ? yes : no, 10);
    if (ok)
        relay(px, fd, up);
    if (up >= 0)
        close(up);
}

static void serve(test_proxy *px, int fd)
{
    char head[HEAD_MAX];
    char method[16], target[2048];
    unsigned char first;
    if (recv(fd, &first, 1, MSG_PEEK) == 1 && first == 5) {
        serve_socks5(px, fd);
        return;
    }
    long len = read_head(fd, head, sizeof head);
    struct sockaddr_in sa;
    const char *path;
    if (len < 0 || sscanf(head, "%15s %2047s", method, target) != 2)
        return;
    log_line(px, method, target);
    if (parse_target(target, &sa, &path) < 0) {
        answer(fd, "502 Bad Gateway");
        return;
    }
    int up = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    set_timeouts(up);
    if (up < 0 || connect(up, (struct sockaddr *)&sa, sizeof sa) < 0) {
        answer(fd, "502 Bad Gateway");
        if (up >= 0)
            close(up);
        return;
    }
    /* The request line in origin form, the fields but Connection and
     * Proxy-Connection, then ours. */
    char *fields = strstr(head, "\r\n") + 2, *end = head + len - 2;
    char line[2200];
    int n = snprintf(line, sizeof line, "%s %s HTTP/1.1\r\n", method, path);
    int ok = send_all(up, line, (size_t)n) == 0;
    for (char *f = fields; ok && f < end;) {
        char *eol = strstr(f, "\r\n");
        if (strncasecmp(f, "Connection:", 11) != 0 && strncasecmp(f, "Proxy-Connection:", 17) != 0)
            ok = send_all(up, f, (size_t)(eol + 2 - f)) == 0;
        f = eol + 2;
    }
    ok = ok && send_all(up, "Connection: close\r\n\r\n", 21) == 0;
    char buf[16384];
    ssize_t r;
    while (ok && (r = recv(up, buf, sizeof buf, 0)) > 0)
        ok = send_all(fd, buf, (size_t)r) == 0;
    close(up);
}

typedef struct {
    test_proxy *px;
    int fd;
} conn_arg;

/* One connection, in a thread of its own (a SOCKS tunnel lasts as long as its
 * client keeps it). */
static void *conn_thread(void *arg)
{
    conn_arg c = *(conn_arg *)arg;
    free(arg);
    set_timeouts(c.fd);
    serve(c.px, c.fd);
    shutdown(c.fd, SHUT_WR);
    close(c.fd);
    pthread_mutex_lock(&c.px->lock);
    c.px->threads--;
    pthread_mutex_unlock(&c.px->lock);
    return NULL;
}

static void *run(void *arg)
{
    test_proxy *px = arg;
    while (!px->stop) {
        struct pollfd pfd = {.fd = px->listen_fd, .events = POLLIN};
        if (poll(&pfd, 1, 100) <= 0)
            continue;
        int fd = accept4(px->listen_fd, NULL, NULL, SOCK_CLOEXEC);
        conn_arg *c = fd < 0 ? NULL : malloc(sizeof *c);
        pthread_t t;
        if (!c) {
            if (fd >= 0)
                close(fd);
            continue;
        }
        *c = (conn_arg){px, fd};
        pthread_mutex_lock(&px->lock);
        px->threads++;
        pthread_mutex_unlock(&px->lock);
        if (pthread_create(&t, NULL, conn_thread, c) == 0) {
            pthread_detach(t);
        } else {
            conn_thread(c);
        }
    }
    return NULL;
}

int test_proxy_start(test_proxy *p)
{
    memset(p, 0, sizeof *p);
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t sl = sizeof sa;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    p->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (p->listen_fd < 0 || bind(p->listen_fd, (struct sockaddr *)&sa, sizeof sa) < 0
        || listen(p->listen_fd, 128) < 0
        || getsockname(p->listen_fd, (struct sockaddr *)&sa, &sl) < 0) {
        if (p->listen_fd >= 0)
            close(p->listen_fd);
        return -1;
    }
    snprintf(p->url, sizeof p->url, "http://127.0.0.1:%d", ntohs(sa.sin_port));
    pthread_mutex_init(&p->lock, NULL);
    if (pthread_create(&p->thread, NULL, run, p) != 0) {
        close(p->listen_fd);
        return -1;
    }
    return 0;
}

void test_proxy_stop(test_proxy *p)
{
    if (p->listen_fd <= 0)
        return;
    p->stop = 1;
    pthread_join(p->thread, NULL);
    for (int i = 0; i < 1000; i++) { /* each connection ends within 100 ms of stop */
        pthread_mutex_lock(&p->lock);
        int left = p->threads;
        pthread_mutex_unlock(&p->lock);
        if (!left)
            break;
        usleep(10 * 1000);
    }
    close(p->listen_fd);
    p->listen_fd = -1;
    for (size_t i = 0; i < p->nlog; i++)
        free(p->log[i]);
    p->nlog = 0;
    pthread_mutex_destroy(&p->lock);
}

size_t test_proxy_count(test_proxy *p, const char *prefix)
{
    size_t n = 0;
    pthread_mutex_lock(&p->lock);
    for (size_t i = 0; i < p->nlog; i++) {
        const char *t = strchr(p->log[i], ' ') + 1;
        n += !prefix || strncmp(t, prefix, strlen(prefix)) == 0;
    }
    pthread_mutex_unlock(&p->lock);
    return n;
}
