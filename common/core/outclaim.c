/* outclaim.c — see outclaim.h. */
#include "outclaim.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "outfile.h"

typedef struct claimed {
    int fd; /* -1: nothing held (a character device) */
    char *path;
    bool created; /* made by the claim: removed if refused and still empty */
} claimed;

struct outclaim {
    claimed *files;
    size_t n, cap;
    bool keep;
};

outclaim *outclaim_new(void)
{
    return xcalloc(1, sizeof(outclaim));
}

static void push(outclaim *c, int fd, const char *path, bool created)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 8;
        c->files = xreallocarray(c->files, c->cap, sizeof *c->files);
    }
    c->files[c->n++] = (claimed){fd, xstrdup(path), created};
}

int outclaim_add(outclaim *c, const char *what, const char *path, long long *size, char *err,
                 size_t errlen)
{
    struct stat st;
    if (size)
        *size = 0;
    bool exists = stat(path, &st) == 0;
    if (exists && S_ISCHR(st.st_mode)) { /* /dev/null, a terminal: no lock */
        push(c, -1, path, false);
        return 0;
    }
    /* A new file: made here (O_EXCL says it was this claim), else opened as it is. */
    bool created = false;
    int fd = -1;
    if (!exists) {
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        created = fd >= 0;
    }
    if (fd < 0)
        fd = outfile_open_fd(path, O_WRONLY | O_CREAT, what, err, errlen);
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) < 0) {
        snprintf(err, errlen, "cannot open %s '%s': %s", what, path, strerror(errno));
        close(fd);
        return -1;
    }
    if (S_ISREG(st.st_mode) && flock(fd, LOCK_EX | LOCK_NB) < 0) {
        if (errno == EWOULDBLOCK)
            snprintf(err, errlen,
                     "%s '%s' is in use by another crawl (it holds the file's "
                     "lock): wait for it to end, or name another file",
                     what, path);
        else
            snprintf(err, errlen, "cannot lock %s '%s': %s", what, path, strerror(errno));
        close(fd); /* nothing was written; a file made here is still ours to remove */
        if (created)
            unlink(path);
        return -1;
    }
    if (size && S_ISREG(st.st_mode))
        *size = (long long)st.st_size;
    push(c, fd, path, created);
    return 0;
}

void outclaim_keep(outclaim *c)
{
    c->keep = true;
}

void outclaim_free(outclaim *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++) {
        claimed *f = &c->files[i];
        struct stat st;
        /* still the file made here (same inode), and still empty: as it was, absent */
        if (!c->keep && f->created && fstat(f->fd, &st) == 0 && st.st_size == 0) {
            struct stat now;
            if (stat(f->path, &now) == 0 && now.st_dev == st.st_dev && now.st_ino == st.st_ino)
                unlink(f->path);
        }
        if (f->fd >= 0)
            close(f->fd); /* and with it the lock */
        free(f->path);
    }
    free(c->files);
    free(c);
}
