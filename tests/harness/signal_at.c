/* signal_at.c — see signal_at.h. */
#include "signal_at.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Read whole at each look: a resumed crawl may cut the file first, and the files
 * watched are a few MB at most. */
long long signal_at_lines(const char *path)
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

/* run_crawler_watch's look: done once the signal is sent */
static bool look(pid_t pid, void *ctx)
{
    signal_at *a = ctx;
    a->seen = a->lines > 0 ? signal_at_lines(a->path) : bytes_in(a->path);
    a->waited = now_s() - a->start;
    a->late = a->waited > SIGNAL_AT_MAX_SECS;
    if (a->seen < (a->lines > 0 ? a->lines : a->bytes) && !a->late)
        return false;
    kill(pid, a->sig);
    a->sent = true;
    return true;
}

int run_crawler_signal_at(crawl_run *r, char *const argv[], double limit_secs, signal_at *a)
{
    a->sent = a->late = false;
    a->seen = 0;
    a->waited = 0;
    a->start = now_s();
    return run_crawler_watch(r, argv, limit_secs, 0, look, a);
}

const char *signal_at_describe(const signal_at *a)
{
    static char text[600];
    if (!a->sent)
        snprintf(text, sizeof text,
                 "signal %d not sent: the crawler exited after %.2f s, %lld %s of %.400s", a->sig,
                 a->waited, a->seen, a->lines > 0 ? "lines" : "bytes", a->path);
    else
        snprintf(text, sizeof text, "signal %d at %lld %s of %.400s after %.2f s%s", a->sig,
                 a->seen, a->lines > 0 ? "lines" : "bytes", a->path, a->waited,
                 a->late ? " (late: the bound passed, sent anyway)" : "");
    return text;
}
