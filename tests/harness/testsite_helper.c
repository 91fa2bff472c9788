/* testsite_helper.c — the cmocka-side helper for the testsite server (see
 * testsite_helper.h). Every wait is bounded: poll() with a deadline, never a blocking
 * read or connect without one. */
#include "testsite_helper.h"

#include "alloc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef TESTSITE_BIN
#define TESTSITE_BIN "testsite"
#endif

#define START_TIMEOUT_MS 10000
#define STOP_TIMEOUT_MS  5000
#define FETCH_TIMEOUT_MS 5000

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int wait_fd(int fd, short events, long long deadline)
{
    for (;;) {
        long long left = deadline - now_ms();
        if (left < 0)
            left = 0;
        struct pollfd p = {.fd = fd, .events = events};
        int n = poll(&p, 1, (int)left);
        if (n > 0)
            return 0;
        if (n == 0)
            return -1;
        if (errno != EINTR)
            return -1;
    }
}

/* Read the first line the child prints. */
static int read_url(testsite *ts)
{
    long long deadline = now_ms() + START_TIMEOUT_MS;
    size_t n = 0;
    while (n + 1 < sizeof ts->url) {
        if (wait_fd(ts->out_fd, POLLIN, deadline) < 0)
            return -1;
        ssize_t r = read(ts->out_fd, ts->url + n, 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        if (ts->url[n] == '\n') {
            ts->url[n] = '\0';
            return strncmp(ts->url, "http://", 7) == 0 ? 0 : -1;
        }
        n++;
    }
    return -1;
}

int testsite_start(testsite *ts, const char *const extra_args[])
{
    memset(ts, 0, sizeof *ts);
    ts->out_fd = -1;
    size_t nargs = 0;
    while (extra_args && extra_args[nargs])
        nargs++;
    char **argv = xcalloc(nargs + 2, sizeof *argv);
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0) {
        free(argv);
        return -1;
    }
    argv[0] = (char *)TESTSITE_BIN;
    for (size_t i = 0; i < nargs; i++)
        argv[i + 1] = (char *)extra_args[i];
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(fds[1], 1) < 0)
            _exit(127);
        execv(TESTSITE_BIN, argv);
        fprintf(stderr, "testsite_start: cannot run %s: %s\n", TESTSITE_BIN, strerror(errno));
        _exit(127);
    }
    free(argv);
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return -1;
    }
    ts->pid = pid;
    ts->out_fd = fds[0];
    if (read_url(ts) < 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        close(ts->out_fd);
        memset(ts, 0, sizeof *ts);
        ts->out_fd = -1;
        return -1;
    }
    return 0;
}

int testsite_stop_status(testsite *ts)
{
    if (ts->pid <= 0)
        return -1;
    int status = -1;
    kill(ts->pid, SIGTERM);
    long long deadline = now_ms() + STOP_TIMEOUT_MS;
    pid_t r;
    while ((r = waitpid(ts->pid, &status, WNOHANG)) == 0 && now_ms() < deadline) {
        struct timespec nap = {0, 10 * 1000000};
        nanosleep(&nap, NULL);
    }
    if (r == 0) {
        kill(ts->pid, SIGKILL);
        waitpid(ts->pid, &status, 0);
    } else if (r < 0) {
        status = -1;
    }
    if (ts->out_fd >= 0)
        close(ts->out_fd);
    ts->pid = 0;
    ts->out_fd = -1;
    return status;
}

void testsite_stop(testsite *ts)
{
    (void)testsite_stop_status(ts);
}

int testsite_port(const testsite *ts)
{
    const char *colon = strrchr(ts->url, ':');
    return colon ? atoi(colon + 1) : -1;
}

int testsite_connect(const testsite *ts)
{
    const char *host = ts->url + 7; /* after "http://" */
    const char *colon = strrchr(host, ':');
    if (strncmp(ts->url, "http://", 7) || !colon)
        return -1;
    char name[64];
    bool v6 = host[0] == '[';
    size_t n = (size_t)(colon - host) - (v6 ? 2 : 0);
    if (n >= sizeof name)
        return -1;
    memcpy(name, host + (v6 ? 1 : 0), n);
    name[n] = '\0';
    struct sockaddr_storage ss = {0};
    socklen_t sl;
    int port = testsite_port(ts);
    if (v6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons((uint16_t)port);
        if (inet_pton(AF_INET6, name, &a->sin6_addr) != 1)
            return -1;
        sl = sizeof *a;
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET;
        a->sin_port = htons((uint16_t)port);
        if (inet_pton(AF_INET, name, &a->sin_addr) != 1)
            return -1;
        sl = sizeof *a;
    }
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, (struct sockaddr *)&ss, sl) < 0) {
        int err = 0;
        socklen_t el = sizeof err;
        if (errno != EINPROGRESS || wait_fd(fd, POLLOUT, now_ms() + FETCH_TIMEOUT_MS) < 0
            || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0 || err != 0) {
            close(fd);
            return -1;
        }
    }
    int fl = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

char *testsite_request(const testsite *ts, const char *request, size_t *len, int timeout_ms)
{
    int fd = testsite_connect(ts);
    if (fd < 0)
        return NULL;
    long long deadline = now_ms() + timeout_ms;
    size_t reqlen = strlen(request), off = 0;
    while (off < reqlen) {
        if (wait_fd(fd, POLLOUT, deadline) < 0)
            break;
        ssize_t w = send(fd, request + off, reqlen - off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    size_t n = 0, cap = 4096;
    char *buf = xmalloc(cap);
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap *= 2;
            buf = xrealloc(buf, cap);
        }
        if (wait_fd(fd, POLLIN, deadline) < 0)
            break;
        ssize_t r = recv(fd, buf + n, cap - n - 1, MSG_DONTWAIT);
        if (r < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (r <= 0)
            break; /* closed, or reset */
        n += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

char *testsite_fetch(const testsite *ts, const char *path, int *status, size_t *len)
{
    *status = -1;
    if (len)
        *len = 0;
    char req[2048];
    int n = snprintf(req, sizeof req,
                     "GET %s HTTP/1.0\r\nHost: 127.0.0.1:%d\r\n"
                     "Connection: close\r\n\r\n",
                     path, testsite_port(ts));
    if (n < 0 || (size_t)n >= sizeof req)
        return NULL;
    size_t total = 0;
    char *resp = testsite_request(ts, req, &total, FETCH_TIMEOUT_MS);
    if (!resp)
        return NULL;
    char *end = strstr(resp, "\r\n\r\n");
    int code;
    if (!end || sscanf(resp, "HTTP/1.%*d %d", &code) != 1) {
        free(resp);
        return NULL;
    }
    size_t head = (size_t)(end + 4 - resp), body = total - head;
    char cl[32];
    if (testsite_header(resp, "Content-Length", cl, sizeof cl) == 0
        && strtoull(cl, NULL, 10) < body)
        body = (size_t)strtoull(cl, NULL, 10);
    memmove(resp, resp + head, body);
    resp[body] = '\0';
    *status = code;
    if (len)
        *len = body;
    return resp;
}

static long json_long(const char *json, const char *key, int *ok)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(json, pat);
    if (!p) {
        *ok = 0;
        return 0;
    }
    return strtol(p + strlen(pat), NULL, 10);
}

/* A string value (testsite writes \" and \\ escapes only for what a User-Agent
 * holds; \uXXXX is kept as written); null gives "". */
static void json_string(const char *json, const char *key, char *out, size_t outlen, int *ok)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = strstr(json, pat);
    out[0] = '\0';
    if (!p) {
        *ok = 0;
        return;
    }
    p += strlen(pat);
    if (*p++ != '"')
        return; /* null */
    size_t n = 0;
    for (; *p && *p != '"' && n + 1 < outlen; p++) {
        if (*p == '\\' && (p[1] == '"' || p[1] == '\\'))
            p++;
        out[n++] = *p;
    }
    out[n] = '\0';
}

int testsite_stats(const testsite *ts, struct testsite_stats *out)
{
    int status;
    char *body = testsite_fetch(ts, "/__stats", &status, NULL);
    if (!body || status != 200) {
        free(body);
        return -1;
    }
    int ok = 1;
    out->served = json_long(body, "served", &ok);
    out->dropped = json_long(body, "dropped", &ok);
    out->in_progress = json_long(body, "in_progress", &ok);
    out->peak_in_progress = json_long(body, "peak_in_progress", &ok);
    out->connections = json_long(body, "connections", &ok);
    out->peak_connections = json_long(body, "peak_connections", &ok);
    out->robots_txt = json_long(body, "robots_txt", &ok);
    json_string(body, "user_agent", out->user_agent, sizeof out->user_agent, &ok);
    free(body);
    return ok ? 0 : -1;
}

int testsite_header(const char *response, const char *name, char *out, size_t outlen)
{
    size_t nl = strlen(name);
    const char *end = strstr(response, "\r\n\r\n");
    const char *line = strstr(response, "\r\n");
    while (line && (!end || line < end)) {
        line += 2;
        if (strncasecmp(line, name, nl) == 0 && line[nl] == ':') {
            const char *v = line + nl + 1;
            while (*v == ' ' || *v == '\t')
                v++;
            const char *e = strstr(v, "\r\n");
            size_t n = e ? (size_t)(e - v) : strlen(v);
            if (n >= outlen)
                n = outlen ? outlen - 1 : 0;
            if (outlen) {
                memcpy(out, v, n);
                out[n] = '\0';
            }
            return 0;
        }
        line = strstr(line, "\r\n");
    }
    return -1;
}

int testsite_start_text(testsite *ts, const char *dir, const char *name, const char *text,
                        const char *const extra_args[])
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s.site", dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    bool ok = fputs(text, f) >= 0;
    ok &= fclose(f) == 0;
    const char *args[32];
    size_t n = 0;
    while (extra_args && extra_args[n] && n < 30) {
        args[n] = extra_args[n];
        n++;
    }
    args[n++] = path;
    args[n] = NULL;
    return ok ? testsite_start(ts, args) : -1;
}

const char *testsite_path_of(const char *url)
{
    const char *p = strstr(url, "://");
    p = p ? strchr(p + 3, '/') : NULL;
    return p ? p : "/";
}

int testsite_free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t l = sizeof a;
    int port = -1;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0
        && getsockname(fd, (struct sockaddr *)&a, &l) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

int test_remove_tree(const char *dir)
{
    return nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : -1;
}
