/* mirror_fs.c — the mirror's files under its directory's descriptor (mirror_fs.h). */
#include "mirror_fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "recstream.h"

int mirror_dir_open(mirror_dir *d, const char *path, char *err, size_t errlen)
{
    if (mkdir(path, 0777) < 0 && errno != EEXIST) {
        snprintf(err, errlen, "--mirror '%s': %s", path, strerror(errno));
        return -1;
    }
    d->fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d->fd < 0) {
        snprintf(err, errlen, "--mirror '%s': %s", path, strerror(errno));
        return -1;
    }
    d->path = xstrdup(path);
    d->seq = 0;
    d->last_fd = -1;
    d->last_dir = NULL;
    d->spare[0] = '\0';
    return 0;
}

void mirror_dir_close(mirror_dir *d)
{
    if (d->fd >= 0 && d->spare[0])
        unlinkat(d->fd, d->spare, 0);
    d->spare[0] = '\0';
    if (d->fd >= 0)
        close(d->fd);
    if (d->last_fd >= 0)
        close(d->last_fd);
    d->fd = d->last_fd = -1;
    free(d->last_dir);
    d->last_dir = NULL;
    free(d->path);
    d->path = NULL;
}

/* The directory comp under fd, opened without following a link; made first when make
 * and it is missing. A descriptor, or -1 with errno. */
static int open_dir(int fd, const char *comp, bool make)
{
    int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    int next = openat(fd, comp, flags);
    if (next >= 0 || errno != ENOENT || !make)
        return next;
    if (mkdirat(fd, comp, 0777) < 0 && errno != EEXIST)
        return -1;
    return openat(fd, comp, flags);
}

/* The directory that holds rel's last component, walked (and made, when make) one
 * component at a time; *leaf points into rel. A descriptor to close, or -1 with why
 * and errno. */
static int walk_parent(mirror_dir *d, const char *rel, bool make, const char **leaf, char *why,
                       size_t whylen)
{
    int fd = dup(d->fd), e = 0;
    const char *p = rel;
    for (const char *slash; fd >= 0 && (slash = strchr(p, '/')); p = slash + 1) {
        char *comp = xstrndup(p, (size_t)(slash - p));
        int next = -1;
        if (!comp[0] || strcmp(comp, ".") == 0 || strcmp(comp, "..") == 0) {
            snprintf(why, whylen, "'%s': not a name under the mirror", rel);
            e = EINVAL;
        } else if ((next = open_dir(fd, comp, make)) < 0) {
            e = errno;
            snprintf(why, whylen, "'%s/%.*s' %s", d->path, (int)(slash - rel), rel,
                     e == ELOOP || e == ENOTDIR
                         ? "is in the mirror already and is not a directory (a file or a "
                           "symbolic link): not followed"
                         : strerror(e));
        }
        close(fd);
        fd = next;
        free(comp);
    }
    *leaf = p;
    errno = e;
    return fd;
}

/* walk_parent through a cache of one: the last directory walked stays open (most files
 * of a mirror sit beside the one before). The descriptor is the cache's: not closed by
 * the caller. */
static int open_parent(mirror_dir *d, const char *rel, bool make, const char **leaf, char *why,
                       size_t whylen)
{
    const char *slash = strrchr(rel, '/');
    size_t n = slash ? (size_t)(slash - rel) : 0;
    if (d->last_fd >= 0 && d->last_dir && strlen(d->last_dir) == n
        && strncmp(d->last_dir, rel, n) == 0) {
        *leaf = slash ? slash + 1 : rel;
        return d->last_fd;
    }
    int fd = walk_parent(d, rel, make, leaf, why, whylen);
    if (fd < 0)
        return -1;
    if (d->last_fd >= 0)
        close(d->last_fd);
    free(d->last_dir);
    d->last_fd = fd;
    d->last_dir = xstrndup(rel, n);
    return fd;
}

static bool disk_error(int e)
{
    return e == ENOSPC || e == EDQUOT || e == EIO || e == EROFS || e == EFBIG;
}

int mirror_write(mirror_dir *d, const char *rel, const void *data, size_t len, bool replace,
                 char *why, size_t whylen)
{
    return mirror_write_then(d, rel, data, len, replace, NULL, NULL, why, whylen);
}

#define TMP_PREFIX ".crawlstages-tmp."

int mirror_clean_temporaries(mirror_dir *d)
{
    int fd = dup(d->fd), n = 0;
    DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
    if (!dir) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    for (struct dirent *e; (e = readdir(dir));) {
        struct stat st;
        if (strncmp(e->d_name, TMP_PREFIX, strlen(TMP_PREFIX)) == 0
            && fstatat(d->fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode)
            && unlinkat(d->fd, e->d_name, 0) == 0)
            n++;
    }
    closedir(dir);
    return n;
}

/* The spare temporary (the file a replacement pushed out), opened to be written over
 * from its start (and cut to the new length after: truncating to 0 first would make
 * ext4 flush the file on close, its auto_da_alloc): a descriptor, its name in tmp; or
 * -1 (none, or not one to write over — another link to it, a hard link the user made:
 * then it is unlinked). */
static int open_spare(mirror_dir *d, char *tmp, size_t tmplen, off_t *size)
{
    if (!d->spare[0])
        return -1;
    snprintf(tmp, tmplen, "%s", d->spare);
    d->spare[0] = '\0';
    int fd = openat(d->fd, tmp, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1) {
        *size = st.st_size;
        return fd;
    }
    if (fd >= 0)
        close(fd);
    unlinkat(d->fd, tmp, 0);
    return -1;
}

int mirror_write_then(mirror_dir *d, const char *rel, const void *data, size_t len, bool replace,
                      mirror_placing_fn placing, void *ctx, char *why, size_t whylen)
{
    const char *leaf;
    int dir = open_parent(d, rel, true, &leaf, why, whylen);
    if (dir < 0)
        return disk_error(errno) ? MIRROR_FAILED : MIRROR_REFUSED;
    struct stat st;
    int rc = MIRROR_OK;
    bool there = fstatat(dir, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0;
    if (there && (!replace || !S_ISREG(st.st_mode))) {
        snprintf(why, whylen, "'%s' is in the mirror already and %s: not replaced", rel,
                 S_ISLNK(st.st_mode)       ? "is a symbolic link"
                     : S_ISDIR(st.st_mode) ? "is a directory"
                                           : "this mirror did not write it");
        return MIRROR_REFUSED;
    }
    char tmp[64];
    off_t old = 0; /* the bytes to cut after the write: a spare's */
    int fd = open_spare(d, tmp, sizeof tmp, &old);
    if (fd < 0) {
        snprintf(tmp, sizeof tmp, TMP_PREFIX "%ld.%lu", (long)getpid(), d->seq++);
        fd = openat(d->fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    }
    if (fd < 0 || write_all(fd, data, len) < 0
        || (old > (off_t)len && ftruncate(fd, (off_t)len) < 0) || close(fd) < 0) {
        int e = errno;
        snprintf(why, whylen, "writing '%s/%s': %s", d->path, rel, strerror(e));
        if (fd >= 0)
            unlinkat(d->fd, tmp, 0);
        rc = disk_error(e) ? MIRROR_FAILED : MIRROR_REFUSED;
    } else if (placing && placing(ctx) < 0) {
        snprintf(why, whylen, "'%s' not put in place: its manifest line failed", rel);
        unlinkat(d->fd, tmp, 0);
        rc = MIRROR_FAILED;
    } else if (there && renameat2(d->fd, tmp, dir, leaf, RENAME_EXCHANGE) == 0) {
        snprintf(d->spare, sizeof d->spare, "%s", tmp); /* the old file, written next */
    } else if (renameat(d->fd, tmp, dir, leaf) < 0) {
        snprintf(why, whylen, "renaming to '%s/%s': %s", d->path, rel, strerror(errno));
        rc = disk_error(errno) ? MIRROR_FAILED : MIRROR_REFUSED;
        unlinkat(d->fd, tmp, 0);
    }
    return rc;
}

int mirror_rename(mirror_dir *d, const char *from, const char *to, char *why, size_t whylen)
{
    const char *leaf, *to_leaf = strrchr(to, '/');
    to_leaf = to_leaf ? to_leaf + 1 : to;
    if ((size_t)(to_leaf - to) != (size_t)(strrchr(from, '/') ? strrchr(from, '/') + 1 - from : 0)
        || strncmp(from, to, (size_t)(to_leaf - to)) != 0) {
        snprintf(why, whylen, "'%s' and '%s' are not in one directory", from, to);
        return MIRROR_REFUSED;
    }
    int dir = open_parent(d, from, false, &leaf, why, whylen);
    if (dir < 0)
        return MIRROR_REFUSED;
    struct stat st;
    bool there = fstatat(dir, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0;
    if (!there || !S_ISREG(st.st_mode)) {
        snprintf(why, whylen, "'%s/%s' %s", d->path, from,
                 there ? "is not a regular file" : strerror(errno));
        return MIRROR_REFUSED;
    }
    /* renameat2's RENAME_NOREPLACE: never over an entry at to */
    if (renameat2(dir, leaf, dir, to_leaf, RENAME_NOREPLACE) < 0) {
        snprintf(why, whylen, "renaming '%s/%s' to '%s': %s", d->path, from, to_leaf,
                 strerror(errno));
        return MIRROR_REFUSED;
    }
    return MIRROR_OK;
}

bool mirror_exists(mirror_dir *d, const char *rel)
{
    const char *leaf;
    char why[256];
    int dir = open_parent(d, rel, false, &leaf, why, sizeof why);
    if (dir < 0)
        return false;
    struct stat st;
    bool there = fstatat(dir, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0;
    return there;
}

int mirror_read(mirror_dir *d, const char *rel, char **data, size_t *len, char *why, size_t whylen)
{
    const char *leaf;
    int dir = open_parent(d, rel, false, &leaf, why, whylen);
    if (dir < 0)
        return errno == ENOENT ? MIRROR_MISSING : MIRROR_REFUSED;
    int fd = openat(dir, leaf, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
        snprintf(why, whylen, "reading '%s/%s': %s", d->path, rel, strerror(errno));
        return MIRROR_MISSING;
    }
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, whylen, "reading '%s/%s': %s", d->path, rel,
                 fd < 0 ? strerror(errno) : "not a regular file");
        if (fd >= 0)
            close(fd);
        return MIRROR_REFUSED;
    }
    size_t n = (size_t)st.st_size, got = 0;
    char *buf = xmalloc(n + 1);
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r <= 0) {
            if (r < 0 && errno == EINTR)
                continue;
            break;
        }
        got += (size_t)r;
    }
    close(fd);
    buf[got] = '\0';
    *data = buf;
    *len = got;
    return MIRROR_OK;
}
