/* runstat.c — run a command and print what it cost: wall seconds, CPU seconds (user +
 * system) and peak RSS, read from wait4()'s rusage. Used by the demo and benchmarks.
 *
 *   runstat [-o FILE] [-s FILE [-i MS]] COMMAND [ARG...]
 *
 * Prints one line "wall=W cpu=C maxrss_kb=R status=S" on stderr, or into FILE.
 * Exits with the command's exit status.
 *
 * -s FILE also samples the command every MS milliseconds (default 50) while it runs,
 * from /proc/PID/status: one line "t_ms rss_kb threads kstack_kb" per sample, t_ms on
 * the monotonic clock (the same clock as statsampler's -a), so that the two can be
 * lined up; kstack_kb is the whole system's KernelStack from /proc/meminfo (each
 * thread has a kernel stack, which no RSS shows). The wait for the
 * command's end is a poll on a pidfd, so sampling does not delay
 * it.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* VmRSS and Threads of pid, from /proc; 0 when gone. */
static void proc_status(pid_t pid, long *rss_kb, long *threads)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    *rss_kb = *threads = 0;
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "VmRSS:", 6) == 0)
            *rss_kb = strtol(line + 6, NULL, 10);
        else if (strncmp(line, "Threads:", 8) == 0)
            *threads = strtol(line + 8, NULL, 10);
    }
    fclose(f);
}

/* The system's KernelStack in KB (/proc/meminfo), or -1. */
static long kernel_stack_kb(void)
{
    char line[256];
    long v = -1;
    FILE *f = fopen("/proc/meminfo", "re");
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "KernelStack:", 12) == 0) {
            v = strtol(line + 12, NULL, 10);
            break;
        }
    fclose(f);
    return v;
}

/* Sample pid every interval_ms into samples until it exits (it is then reaped by the
 * caller's wait4). */
static void sample_until_exit(pid_t pid, FILE *samples, long interval_ms)
{
    int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
    for (;;) {
        long rss, threads;
        proc_status(pid, &rss, &threads);
        if (rss > 0)
            fprintf(samples, "%.0f %ld %ld %ld\n", now() * 1e3, rss, threads, kernel_stack_kb());
        if (pfd >= 0) {
            struct pollfd p = {.fd = pfd, .events = POLLIN};
            if (poll(&p, 1, (int)interval_ms) != 0)
                break; /* exited (or poll failed): stop sampling */
        } else {
            struct timespec ts = {interval_ms / 1000, (interval_ms % 1000) * 1000000L};
            nanosleep(&ts, NULL);
            if (waitid(P_PID, (id_t)pid, &(siginfo_t){0}, WEXITED | WNOHANG | WNOWAIT) == 0
                && rss == 0)
                break;
        }
    }
    if (pfd >= 0)
        close(pfd);
    fflush(samples);
}

int main(int argc, char **argv)
{
    const char *out = NULL, *sample_path = NULL;
    long interval_ms = 50;
    int i = 1;
    while (i + 1 < argc && argv[i][0] == '-' && argv[i][1] && !argv[i][2]
           && strchr("osi", argv[i][1])) {
        if (argv[i][1] == 'o')
            out = argv[i + 1];
        else if (argv[i][1] == 's')
            sample_path = argv[i + 1];
        else
            interval_ms = strtol(argv[i + 1], NULL, 10);
        i += 2;
    }
    if (i >= argc || interval_ms <= 0) {
        fprintf(stderr, "usage: runstat [-o FILE] [-s FILE [-i MS]] COMMAND [ARG...]\n");
        return 2;
    }
    FILE *samples = NULL;
    if (sample_path && !(samples = fopen(sample_path, "w"))) {
        perror("runstat: -s");
        return 1;
    }
    double t0 = now();
    pid_t pid = fork();
    if (pid < 0) {
        perror("runstat: fork");
        return 1;
    }
    if (pid == 0) {
        execvp(argv[i], argv + i);
        fprintf(stderr, "runstat: cannot run '%s'\n", argv[i]);
        _exit(127);
    }
    if (samples) {
        sample_until_exit(pid, samples, interval_ms);
        fclose(samples);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) {
        perror("runstat: wait4");
        return 1;
    }
    double wall = now() - t0;
    double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6
        + (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    FILE *f = out ? fopen(out, "w") : stderr;
    if (!f) {
        perror("runstat: output");
        return 1;
    }
    fprintf(f, "wall=%.3f cpu=%.3f maxrss_kb=%ld status=%d\n", wall, cpu, ru.ru_maxrss, code);
    if (out)
        fclose(f);
    return code;
}
