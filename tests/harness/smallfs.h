/* smallfs.h — a small file system of a test's own, to fill up: a tmpfs mounted on a
 * directory (tests that check what a crawl does when its disk is full). Mounting needs
 * root (or CAP_SYS_ADMIN): without it a test says so and skips. */
#ifndef CRAWL_TEST_SMALLFS_H
#define CRAWL_TEST_SMALLFS_H

#include <stddef.h>

/* Mount a tmpfs of `bytes` on dir (made if missing). 0, or -1 with errno set (EPERM:
 * not allowed here). */
int smallfs_mount(const char *dir, size_t bytes);
/* Give it a new size (more room after a full disk). 0, or -1 with errno set. */
int smallfs_resize(const char *dir, size_t bytes);
/* Unmount it (everything in it goes). */
void smallfs_unmount(const char *dir);

#endif
