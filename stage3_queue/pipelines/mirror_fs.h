/* mirror_fs.h — the mirror's files, never outside its directory: the directory is opened
 * once, and every path below it (mirror_name's: no "..", no '/' inside a component) is
 * walked one component at a time with openat under its descriptor, O_NOFOLLOW and
 * O_DIRECTORY, so that a symbolic link planted in the mirror is never followed, and a
 * file is written to a temporary name in the mirror's top directory, then renamed into
 * place (a reader never sees half a file; a full disk leaves every file whole).
 *
 * A file that replaces one (the link conversion rewrites every page) is exchanged with
 * it (renameat2's RENAME_EXCHANGE), and the old file, now under the temporary name, is
 * truncated and written into the next time: no inode is made or freed per rewrite. (On
 * ext4 each freed inode stays unusable for some seconds and every later allocation
 * walks past it: a conversion that freed an inode per page cost time quadratic in the
 * pages, most of the mirror's CPU.) A spare with another link (a hard link the user
 * made) is not truncated: it is unlinked, and a new temporary made.
 */
#ifndef CRAWL_MIRROR_FS_H
#define CRAWL_MIRROR_FS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct mirror_dir {
    int fd; /* the mirror's directory */
    char *path;
    unsigned long seq; /* of temporary names */
    int last_fd;       /* the last directory walked, kept open (-1: none) */
    char *last_dir;    /* its name under the mirror */
    char spare[64];    /* a temporary file to write the next file into, or "" */
} mirror_dir;

/* The outcome of a write or a read. */
enum { MIRROR_OK = 0, MIRROR_REFUSED = -1, MIRROR_FAILED = -2, MIRROR_MISSING = -3 };

/* Open (make, when missing) the directory path. 0, or -1 with one line in err. */
int mirror_dir_open(mirror_dir *d, const char *path, char *err, size_t errlen);
void mirror_dir_close(mirror_dir *d);

/* Write len bytes as the file rel (a relative path), making the directories it needs.
 * An existing entry is replaced only when replace is set and it is a regular file.
 * MIRROR_OK; MIRROR_REFUSED with why (a component exists and is not a directory, a
 * symbolic link, a file not to replace); MIRROR_FAILED with why (the disk: ENOSPC, EIO,
 * ...; nothing is left half written). */
int mirror_write(mirror_dir *d, const char *rel, const void *data, size_t len, bool replace,
                 char *why, size_t whylen);
/* The same, and placing(ctx) is called once the bytes are in the temporary file and just
 * before it is renamed to rel (the manifest's line goes there: a kill -9 then leaves a
 * line without its file, never a file without its line). placing returning -1 stops
 * the write: MIRROR_FAILED, the temporary removed. */
typedef int (*mirror_placing_fn)(void *ctx);
int mirror_write_then(mirror_dir *d, const char *rel, const void *data, size_t len, bool replace,
                      mirror_placing_fn placing, void *ctx, char *why, size_t whylen);
/* Remove the temporary files a killed run left in the mirror's top directory (their
 * names are the mirror's own: ".crawlstages-tmp.*"). The number removed. */
int mirror_clean_temporaries(mirror_dir *d);
/* Rename the file from to to, a name in the same directory; an entry at to is never
 * replaced. MIRROR_OK, or MIRROR_REFUSED with why. */
int mirror_rename(mirror_dir *d, const char *from, const char *to, char *why, size_t whylen);
/* Whether rel exists (as anything: a link is not followed). */
bool mirror_exists(mirror_dir *d, const char *rel);
/* Read the regular file rel (malloc'd, NUL-terminated, *len bytes). MIRROR_OK, or
 * MIRROR_MISSING (no such file) or MIRROR_REFUSED with why. */
int mirror_read(mirror_dir *d, const char *rel, char **data, size_t *len, char *why, size_t whylen);

#endif
