/* mirrorfloor.c — what the file system alone costs a mirror (docs/mirror.md, "Cost"):
 * N files of SIZE bytes written into one directory, DIR/h/p/, the way --mirror's calls
 * write them, and the CPU seconds (user + system, getrusage) of each way:
 *
 *   direct    each file created in place and written (wget's way: no temporary)
 *   renamed   each written to a temporary in DIR, its name looked up (fstatat), then
 *             renamed into place (the mirror's save: mirror_fs.c)
 *   rewrite   each read back and written again over a spare, then exchanged with it
 *             (renameat2 RENAME_EXCHANGE; the mirror's conversion), after "renamed"
 *
 *   mirrorfloor DIR [N [SIZE]]      (3000 files of 2000 bytes by default)
 *
 * Prints "direct=S renamed=S rewrite=S" on stdout. DIR must not exist (two directories
 * are made, DIR.direct and DIR.renamed); the caller removes them. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static double cpu(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec)
        + (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

static void die(const char *what)
{
    perror(what);
    exit(1);
}

/* DIR, and its h/p/ (the directory the files go to): their descriptors. */
static void make_dirs(const char *dir, int *top, int *leaf)
{
    if (mkdir(dir, 0777) < 0 || (*top = open(dir, O_RDONLY | O_DIRECTORY)) < 0)
        die(dir);
    int h;
    if (mkdirat(*top, "h", 0777) < 0 || (h = openat(*top, "h", O_RDONLY | O_DIRECTORY)) < 0
        || mkdirat(h, "p", 0777) < 0 || (*leaf = openat(h, "p", O_RDONLY | O_DIRECTORY)) < 0)
        die("h/p");
    close(h);
}

static void put(int fd, const char *buf, size_t len)
{
    if (fd < 0 || write(fd, buf, len) != (ssize_t)len || close(fd) < 0)
        die("write");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: mirrorfloor DIR [N [SIZE]]\n");
        return 2;
    }
    int n = argc > 2 ? atoi(argv[2]) : 3000;
    size_t size = argc > 3 ? (size_t)atol(argv[3]) : 2000;
    if (n <= 0 || size == 0 || size > 1 << 20) {
        fprintf(stderr, "mirrorfloor: N and SIZE must be positive (SIZE at most 1 MiB)\n");
        return 2;
    }
    char *buf = malloc(size + 64), name[64], tmp[64], path[4096];
    if (!buf)
        die("malloc");
    memset(buf, 'x', size + 64);
    int top, leaf;

    snprintf(path, sizeof path, "%s.direct", argv[1]);
    make_dirs(path, &top, &leaf);
    double t = cpu();
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "%d.html", i);
        put(openat(leaf, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666), buf, size);
    }
    double direct = cpu() - t;
    close(leaf), close(top);

    snprintf(path, sizeof path, "%s.renamed", argv[1]);
    make_dirs(path, &top, &leaf);
    t = cpu();
    for (int i = 0; i < n; i++) {
        struct stat st;
        snprintf(name, sizeof name, "%d.html", i);
        snprintf(tmp, sizeof tmp, ".tmp.%d", i);
        put(openat(top, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666), buf, size);
        if (fstatat(leaf, name, &st, AT_SYMLINK_NOFOLLOW) == 0
            || renameat(top, tmp, leaf, name) < 0)
            die("rename");
    }
    double renamed = cpu() - t;

    t = cpu();
    char spare[64] = "";
    for (int i = 0; i < n; i++) {
        struct stat st;
        char back[1 << 16];
        snprintf(name, sizeof name, "%d.html", i);
        int fd = openat(leaf, name, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0 || read(fd, back, sizeof back) < 0 || close(fd) < 0)
            die("read back");
        size_t len = size - 8 + (size_t)(i % 16); /* a conversion changes the length */
        if (spare[0]) {
            snprintf(tmp, sizeof tmp, "%s", spare);
            fd = openat(top, tmp, O_WRONLY | O_CLOEXEC);
            if (fd < 0 || fstat(fd, &st) < 0 || (write(fd, buf, len) != (ssize_t)len)
                || ((size_t)st.st_size > len && ftruncate(fd, (off_t)len) < 0) || close(fd) < 0)
                die("spare");
        } else {
            snprintf(tmp, sizeof tmp, ".spare");
            put(openat(top, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666), buf, len);
        }
        if (fstatat(leaf, name, &st, AT_SYMLINK_NOFOLLOW) < 0
            || renameat2(top, tmp, leaf, name, RENAME_EXCHANGE) < 0)
            die("exchange");
        snprintf(spare, sizeof spare, "%s", tmp);
    }
    double rewrite = cpu() - t;
    close(leaf), close(top);
    free(buf);
    printf("direct=%.3f renamed=%.3f rewrite=%.3f\n", direct, renamed, rewrite);
    return 0;
}
