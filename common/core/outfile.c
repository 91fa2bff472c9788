/* outfile.c — see outfile.h. */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

FILE *outfile_open(const char *path, const char *what, char *err, size_t errlen)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK | O_CLOEXEC, 0666);
    if (fd < 0) {
        if (errno == ENXIO)     /* O_NONBLOCK on a FIFO that no process reads */
            snprintf(err, errlen, "cannot open %s '%s': a FIFO with no reader (start its "
                     "reader first)", what, path);
        else
            snprintf(err, errlen, "cannot open %s '%s': %s", what, path, strerror(errno));
        return NULL;
    }
    int flags = fcntl(fd, F_GETFL);
    FILE *f = NULL;
    if (flags >= 0 && fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0)
        f = fdopen(fd, "w");
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
