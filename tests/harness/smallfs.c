/* smallfs.c — see smallfs.h. */
#include "smallfs.h"

#include <errno.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/stat.h>

int smallfs_mount(const char *dir, size_t bytes)
{
    if (mkdir(dir, 0755) < 0 && errno != EEXIST)
        return -1;
    char opts[64];
    snprintf(opts, sizeof opts, "size=%zu,mode=0755", bytes);
    return mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV, opts);
}

int smallfs_resize(const char *dir, size_t bytes)
{
    char opts[64];
    snprintf(opts, sizeof opts, "size=%zu", bytes);
    return mount("tmpfs", dir, "tmpfs", MS_REMOUNT | MS_NOSUID | MS_NODEV, opts);
}

void smallfs_unmount(const char *dir)
{
    umount2(dir, MNT_DETACH);
}
