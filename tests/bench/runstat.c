/* runstat.c — run a command and print what it cost: wall seconds, CPU seconds (user +
 * system) and peak RSS, read from wait4()'s rusage. Used by the demo and benchmarks.
 *
 *   runstat [-o FILE] COMMAND [ARG...]
 *
 * Prints one line "wall=W cpu=C maxrss_kb=R status=S" on stderr, or into FILE.
 * Exits with the command's exit status.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    const char *out = NULL;
    int i = 1;
    if (i + 1 < argc && strcmp(argv[i], "-o") == 0) {
        out = argv[i + 1];
        i += 2;
    }
    if (i >= argc) {
        fprintf(stderr, "usage: runstat [-o FILE] COMMAND [ARG...]\n");
        return 2;
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
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) {
        perror("runstat: wait4");
        return 1;
    }
    double wall = now() - t0;
    double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
                 (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
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
