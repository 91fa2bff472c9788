/* signal_at.c — see signal_at.h. */
#include "signal_at.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Newlines in path (0: no file yet). Read whole at each look: a resumed crawl may cut
 * the file first, and the files watched are a few MB at most. */
static long long lines_in(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    long long n = 0;
    char buf[65536];
    for (ssize_t got; (got = read(fd, buf, sizeof buf)) > 0;)
        for (const char *p = buf; (p = memchr(p, '\n', (size_t)(buf + got - p))) != NULL; p++)
            n++;
    close(fd);
    return n;
}

static long long bytes_in(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : 0;
}

/* Whether pid has exited (left to be reaped by its parent's wait). */
static bool has_exited(pid_t pid)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid;
}

void signal_at_progress(pid_t pid, void *ctx)
{
    signal_at *a = ctx;
    long long want = a->lines > 0 ? a->lines : a->bytes;
    double t0 = now_s();
    a->late = a->exited = false;
    /* bounded in time and in looks (100 a second): the sleeps stretch under load */
    for (int i = 0; i < SIGNAL_AT_MAX_SECS * 100; i++) {
        a->seen = a->lines > 0 ? lines_in(a->path) : bytes_in(a->path);
        if (a->seen >= want)
            break;
        if (has_exited(pid)) {
            a->exited = true;
            a->waited = now_s() - t0;
            return;
        }
        if (now_s() - t0 > SIGNAL_AT_MAX_SECS) {
            a->late = true;
            break;
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    a->late = a->late || a->seen < want;
    a->waited = now_s() - t0;
    kill(pid, a->sig);
}

const char *signal_at_describe(const signal_at *a)
{
    static char text[600];
    snprintf(text, sizeof text, "signal %d at %lld %s of %.400s after %.2f s%s%s", a->sig, a->seen,
             a->lines > 0 ? "lines" : "bytes", a->path, a->waited,
             a->late ? " (late: the bound passed, sent anyway)" : "",
             a->exited ? " (not sent: the crawler had exited)" : "");
    return text;
}
