/* redis_helper.c — see redis_helper.h. Every wait is bounded (poll with a deadline). */
#include "redis_helper.h"

#include "alloc.h"
#include "testsite_helper.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef REDIS_SERVER_BIN
#define REDIS_SERVER_BIN "redis-server"
#endif
#ifndef BUILD_DIR
#define BUILD_DIR "."
#endif

#define START_TIMEOUT_MS 10000
#define STOP_TIMEOUT_MS  5000
#define CMD_TIMEOUT_MS   5000

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void nap_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

static int connect_to(int port, long long deadline)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        int err = 0;
        socklen_t el = sizeof err;
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        long long left = deadline - now_ms();
        if (errno != EINPROGRESS || left <= 0 || poll(&p, 1, (int)left) != 1
            || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0 || err != 0) {
            close(fd);
            return -1;
        }
    }
    return fd;
}

/* Send line + CRLF (after "AUTH password" when the server has one), read the reply's
 * first line (a bulk reply: its content's). */
static int command(int port, const char *password, const char *line, char *out, size_t outlen,
                   long long deadline)
{
    int fd = connect_to(port, deadline);
    if (fd < 0)
        return -1;
    char req[1024];
    int n = password && password[0] ? snprintf(req, sizeof req, "AUTH %s\r\n%s\r\n", password, line)
                                    : snprintf(req, sizeof req, "%s\r\n", line);
    size_t skip = password && password[0] ? 1 : 0; /* AUTH's "+OK" */
    if (n < 0 || (size_t)n >= sizeof req || send(fd, req, (size_t)n, MSG_NOSIGNAL) != n) {
        close(fd);
        return -1;
    }
    char buf[4096];
    size_t got = 0;
    int r = -1;
    while (got + 1 < sizeof buf) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        long long left = deadline - now_ms();
        if (left <= 0 || poll(&p, 1, (int)left) != 1)
            break;
        ssize_t k = recv(fd, buf + got, sizeof buf - 1 - got, MSG_DONTWAIT);
        if (k < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (k <= 0)
            break;
        got += (size_t)k;
        buf[got] = '\0';
        char *eol = strstr(buf, "\r\n");
        if (!eol)
            continue;
        if (skip > 0) {
            if (strncmp(buf, "+OK\r\n", 5) != 0)
                break; /* AUTH refused */
            skip--;
            got -= 5;
            memmove(buf, buf + 5, got + 1);
            if (!(eol = strstr(buf, "\r\n")))
                continue;
        }
        if (buf[0] == '$' && atol(buf + 1) >= 0) { /* a bulk string: its content */
            char *eol2 = strstr(eol + 2, "\r\n");
            if (!eol2)
                continue;
            *eol2 = '\0';
            snprintf(out, outlen, "%s", eol + 2);
        } else {
            *eol = '\0';
            snprintf(out, outlen, "%s", buf);
        }
        r = 0;
        break;
    }
    close(fd);
    return r;
}

static int spawn(redis_server *rs)
{
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlives the test */
        if (getppid() != parent)
            _exit(127);
        int devnull = open("/dev/null", O_RDWR);
        if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(devnull, 1) < 0)
            _exit(127);
        execv(REDIS_SERVER_BIN, rs->args);
        fprintf(stderr, "redis_server_start: cannot run %s: %s\n", REDIS_SERVER_BIN,
                strerror(errno));
        _exit(127);
    }
    if (pid < 0)
        return -1;
    rs->pid = pid;
    /* Ready when it answers PING; gone when it exits (the port was taken, say). */
    long long deadline = now_ms() + START_TIMEOUT_MS;
    while (now_ms() < deadline) {
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            rs->pid = 0;
            return -1;
        }
        char reply[64];
        if (command(rs->port, rs->password, "PING", reply, sizeof reply, now_ms() + 500) == 0
            && strcmp(reply, "+PONG") == 0)
            return 0;
        nap_ms(10);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    rs->pid = 0;
    return -1;
}

static void free_args(redis_server *rs)
{
    for (size_t i = 0; i < sizeof rs->args / sizeof rs->args[0]; i++) {
        free(rs->args[i]);
        rs->args[i] = NULL;
    }
}

int redis_server_start(redis_server *rs, const char *const extra_args[])
{
    memset(rs, 0, sizeof *rs);
    char base[PATH_MAX - 32];
    snprintf(base, sizeof base, "%s/redis-tmp", BUILD_DIR);
    mkdir(base, 0700);
    snprintf(rs->dir, sizeof rs->dir, "%s/redis-XXXXXX", base);
    if (!mkdtemp(rs->dir)) {
        fprintf(stderr, "redis_server_start: cannot make a directory under %s: %s\n", base,
                strerror(errno));
        rs->dir[0] = '\0';
        return -1;
    }
    for (int attempt = 0; attempt < 5; attempt++) {
        rs->port = testsite_free_port();
        if (rs->port < 0)
            break;
        char port[16], log[PATH_MAX + 16];
        snprintf(port, sizeof port, "%d", rs->port);
        snprintf(log, sizeof log, "%s/redis.log", rs->dir);
        const char *ours[] = {REDIS_SERVER_BIN,
                              "--port",
                              port,
                              "--bind",
                              "127.0.0.1",
                              "--save",
                              "",
                              "--appendonly",
                              "no",
                              "--dir",
                              rs->dir,
                              "--logfile",
                              log,
                              "--daemonize",
                              "no",
                              NULL};
        size_t n = 0;
        free_args(rs);
        for (size_t i = 0; ours[i]; i++)
            rs->args[n++] = xstrdup(ours[i]);
        for (size_t i = 0; extra_args && extra_args[i]; i++) {
            if (n + 1 >= sizeof rs->args / sizeof rs->args[0])
                break;
            rs->args[n++] = xstrdup(extra_args[i]);
            if (strcmp(extra_args[i], "--requirepass") == 0 && extra_args[i + 1])
                snprintf(rs->password, sizeof rs->password, "%s", extra_args[i + 1]);
        }
        if (spawn(rs) == 0)
            return 0;
    }
    fprintf(stderr, "redis_server_start: %s did not answer PING (log: %s/redis.log)\n",
            REDIS_SERVER_BIN, rs->dir);
    redis_server_stop(rs);
    return -1;
}

int redis_server_restart(redis_server *rs)
{
    if (rs->pid > 0 || !rs->args[0])
        return -1;
    return spawn(rs);
}

void redis_server_kill(redis_server *rs)
{
    if (rs->pid <= 0)
        return;
    kill(rs->pid, SIGKILL);
    waitpid(rs->pid, NULL, 0);
    rs->pid = 0;
}

void redis_server_stop(redis_server *rs)
{
    if (rs->pid > 0) {
        kill(rs->pid, SIGTERM);
        long long deadline = now_ms() + STOP_TIMEOUT_MS;
        pid_t r;
        while ((r = waitpid(rs->pid, NULL, WNOHANG)) == 0 && now_ms() < deadline)
            nap_ms(10);
        if (r == 0) {
            kill(rs->pid, SIGKILL);
            waitpid(rs->pid, NULL, 0);
        }
        rs->pid = 0;
    }
    if (rs->dir[0])
        test_remove_tree(rs->dir);
    rs->dir[0] = '\0';
    free_args(rs);
}

int redis_server_cmd(const redis_server *rs, const char *line, char *out, size_t outlen)
{
    return command(rs->port, rs->password, line, out, outlen, now_ms() + CMD_TIMEOUT_MS);
}

void redis_server_url(const redis_server *rs, const char *name, char *out, size_t outlen)
{
    if (rs->password[0])
        snprintf(out, outlen, "redis://:%s@127.0.0.1:%d/%s", rs->password, rs->port, name);
    else
        snprintf(out, outlen, "redis://127.0.0.1:%d/%s", rs->port, name);
}
