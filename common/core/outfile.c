/* outfile.c — see outfile.h. */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

int outfile_open_fd(const char *path, int flags, const char *what, char *err, size_t errlen)
{
    int fd = open(path, flags | O_NONBLOCK | O_CLOEXEC, 0666);
    if (fd < 0) {
        if (errno == ENXIO) /* O_NONBLOCK on a FIFO that no process reads */
            snprintf(err, errlen,
                     "cannot open %s '%s': a FIFO with no reader (start its "
                     "reader first)",
                     what, path);
        else
            snprintf(err, errlen, "cannot open %s '%s': %s", what, path, strerror(errno));
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
        snprintf(err, errlen, "cannot open %s '%s': %s", what, path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

FILE *outfile_open(const char *path, const char *what, char *err, size_t errlen)
{
    int fd = outfile_open_fd(path, O_WRONLY | O_CREAT | O_TRUNC, what, err, errlen);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        snprintf(err, errlen, "cannot open %s '%s': %s", what, path, strerror(errno));
        close(fd);
    }
    return f;
}

/* The length the file should have: up to its last newline, less a last summary line. */
static off_t whole_records(int fd, off_t size)
{
    enum { TAIL = 4096 };
    char buf[TAIL + 1];
    off_t end = size;
    /* the last newline */
    while (end > 0) {
        off_t from = end > TAIL ? end - TAIL : 0;
        ssize_t n = pread(fd, buf, (size_t)(end - from), from);
        if (n <= 0)
            return -1;
        char *nl = memrchr(buf, '\n', (size_t)n);
        if (nl) {
            end = from + (nl - buf) + 1;
            break;
        }
        end = from;
    }
    /* the line before it, if it is a summary */
    off_t start = end > 1 ? end - 1 : 0, from = start > TAIL ? start - TAIL : 0;
    ssize_t n = pread(fd, buf, (size_t)(start - from), from);
    if (n < 0)
        return -1;
    char *nl = memrchr(buf, '\n', (size_t)n);
    if (!nl && from > 0)
        return end; /* a line longer than TAIL: a record, not a summary */
    off_t line = nl ? from + (nl - buf) + 1 : from;
    static const char summary[] = "{\"summary\":";
    char head[sizeof summary - 1];
    if (end - line >= (off_t)sizeof head
        && pread(fd, head, sizeof head, line) == (ssize_t)sizeof head
        && memcmp(head, summary, sizeof head) == 0)
        end = line;
    return end;
}

FILE *outfile_open_append(const char *path, const char *what, char *err, size_t errlen)
{
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    struct stat st;
    off_t keep;
    if (fd < 0 || fstat(fd, &st) < 0 || (keep = whole_records(fd, st.st_size)) < 0
        || ftruncate(fd, keep) < 0 || lseek(fd, 0, SEEK_END) < 0) {
        snprintf(err, errlen, "cannot open %s '%s' to resume: %s", what, path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    FILE *f = fdopen(fd, "a");
    if (!f) {
        snprintf(err, errlen, "cannot open %s '%s': %s", what, path, strerror(errno));
        close(fd);
    }
    return f;
}

int outfile_flush(FILE *f, const char *what, const char *path, char *err, size_t errlen)
{
    errno = 0;
    int failed = fflush(f) != 0;
    int e = errno;
    if (!failed && !ferror(f))
        return 0;
    snprintf(err, errlen, "writing %s '%s' failed: %s", what, path,
             failed && e ? strerror(e) : "write error");
    return -1;
}

int outfile_close(FILE *f, const char *what, const char *path, char *err, size_t errlen)
{
    int r = outfile_flush(f, what, path, err, errlen);
    errno = 0;
    if (fclose(f) != 0 && r == 0) {
        snprintf(err, errlen, "writing %s '%s' failed: %s", what, path,
                 errno ? strerror(errno) : "write error");
        r = -1;
    }
    return r;
}

int outfile_cut_torn_line(int fd, long long *size, const char *what, const char *path, char *err,
                          size_t errlen)
{
    long long n = *size, at = n;
    char buf[4096];
    while (at > 0) {
        size_t len = at > (long long)sizeof buf ? sizeof buf : (size_t)at;
        ssize_t got = pread(fd, buf, len, (off_t)(at - (long long)len));
        if (got != (ssize_t)len) {
            snprintf(err, errlen, "reading %s '%s': %s", what, path,
                     got < 0 ? strerror(errno) : "short read");
            return -1;
        }
        size_t i = len;
        while (i > 0 && buf[i - 1] != '\n')
            i--;
        if (i > 0) {
            at = at - (long long)len + (long long)i;
            break;
        }
        at -= (long long)len;
    }
    if (at < n) {
        log_warn("%s '%s': a torn last line (%lld bytes) cut", what, path, n - at);
        if (ftruncate(fd, (off_t)at) < 0) {
            snprintf(err, errlen, "cutting %s '%s': %s", what, path, strerror(errno));
            return -1;
        }
    }
    *size = at;
    return 0;
}
