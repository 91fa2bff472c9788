/* kill_at_rename.c — an LD_PRELOAD shim for test_mirror: the process kills itself with
 * SIGKILL at its Nth renameat() of a --mirror temporary file (".crawlstages-tmp.*"),
 * from the environment: KILL_AT_RENAME=N right after the rename, =bN just before it.
 * A kill -9 at the moments a timer hardly ever hits: a file just put in place, or one
 * written and not yet in place. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int renameat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath);

int renameat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath)
{
    static int (*real)(int, const char *, int, const char *);
    static long seen;
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "renameat");
    if (!real)
        abort();
    const char *at = getenv("KILL_AT_RENAME");
    bool ours = at && strncmp(oldpath, ".crawlstages-tmp.", 17) == 0;
    bool before = ours && at[0] == 'b';
    if (ours && ++seen == atol(at + before) && before)
        raise(SIGKILL);
    int rc = real(olddirfd, oldpath, newdirfd, newpath);
    if (ours && seen == atol(at) && !before)
        raise(SIGKILL);
    return rc;
}
