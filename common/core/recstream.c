/* recstream.c — see recstream.h. */
#include "recstream.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "alloc.h"

struct recstream {
    int fd;
    char *what, *path;
    char *fetched_by; /* NULL, or the "fetched_by" of every record */
    char *buf;        /* the line being written: open_memstream's buffer */
    size_t size;
    FILE *line;
    size_t count;
    long long end; /* the file offset after the last line, or -1 */
    int error;     /* errno of the first failed write, or 0 */
};

recstream *recstream_new(int fd, const char *what, const char *path)
{
    recstream *s = xcalloc(1, sizeof *s);
    s->fd = fd;
    s->what = xstrdup(what);
    s->path = xstrdup(path);
    s->line = open_memstream(&s->buf, &s->size);
    if (!s->line)
        alloc_oom(0);
    off_t at = lseek(fd, 0, SEEK_CUR);
    s->end = at < 0 ? -1 : (long long)at;
    return s;
}

void recstream_free(recstream *s)
{
    if (!s)
        return;
    fclose(s->line);
    free(s->buf);
    free(s->what);
    free(s->path);
    free(s->fetched_by);
    free(s);
}

int write_all(int fd, const void *p, size_t len)
{
    const char *b = p;
    while (len > 0) {
        ssize_t n = write(fd, b, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0) { /* cannot happen on a file or pipe; never spin on it */
            errno = EIO;
            return -1;
        }
        b += n;
        len -= (size_t)n;
    }
    return 0;
}

/* The line formatted in s->line since the rewind, written at once. */
static void put_line(recstream *s)
{
    if (fflush(s->line) != 0)
        alloc_oom(0); /* a memory stream fails only for want of memory */
    off_t len = ftello(s->line);
    if (len < 0)
        alloc_oom(0);
    rewind(s->line);
    if (s->error)
        return;
    if (write_all(s->fd, s->buf, (size_t)len) < 0)
        s->error = errno ? errno : EIO;
    else if (s->end >= 0)
        s->end += (long long)len;
}

void recstream_record(recstream *s, const fetch_stat *st)
{
    report_write_jsonl_record_by(st, s->fetched_by, s->line);
    put_line(s);
    if (!s->error)
        s->count++;
}

size_t recstream_count(const recstream *s)
{
    return s->count;
}

long long recstream_end(const recstream *s)
{
    return s->end;
}

bool recstream_failed(const recstream *s, char *err, size_t errlen)
{
    if (s->error)
        snprintf(err, errlen, "writing %s '%s' failed: %s", s->what, s->path, strerror(s->error));
    return s->error != 0;
}

void recstream_set_fetched_by(recstream *s, const char *name)
{
    free(s->fetched_by);
    s->fetched_by = name ? xstrdup(name) : NULL;
}

int recstream_summary(recstream *s, size_t done, const report_summary *sum, char *err,
                      size_t errlen)
{
    report_write_jsonl_summary(done, sum, s->line);
    put_line(s);
    return recstream_failed(s, err, errlen) ? -1 : 0;
}
