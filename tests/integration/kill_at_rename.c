/* kill_at_rename.c — an LD_PRELOAD shim for test_mirror: the process kills itself with
 * SIGKILL at its Nth renameat() or renameat2() of a --mirror temporary file (".crawlstages-tmp.*"),
 * from the environment: KILL_AT_RENAME=N right after the rename, =bN just before it;
 * =mN and =bmN count instead the renames of a file aside for a name that differs only
 * in case (renameat2 with RENAME_NOREPLACE: mirror_rename).
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
int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned flags);

static long seen;

/* Whether this rename is the one to kill at, and when: 'b' before, 'a' after; 0.
 * move: a rename aside (RENAME_NOREPLACE). */
static char moment(const char *oldpath, bool move)
{
    const char *at = getenv("KILL_AT_RENAME");
    if (!at)
        return 0;
    bool before = at[0] == 'b', moves = at[before] == 'm';
    if (moves ? !move : strncmp(oldpath, ".crawlstages-tmp.", 17) != 0)
        return 0;
    return ++seen == atol(at + before + moves) ? (before ? 'b' : 'a') : 0;
}

int renameat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath)
{
    static int (*real)(int, const char *, int, const char *);
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "renameat");
    if (!real)
        abort();
    char m = moment(oldpath, false);
    if (m == 'b')
        raise(SIGKILL);
    int rc = real(olddirfd, oldpath, newdirfd, newpath);
    if (m == 'a')
        raise(SIGKILL);
    return rc;
}

int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned flags)
{
    static int (*real)(int, const char *, int, const char *, unsigned);
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "renameat2");
    if (!real)
        abort();
    char m = moment(oldpath, flags == RENAME_NOREPLACE);
    if (m == 'b')
        raise(SIGKILL);
    int rc = real(olddirfd, oldpath, newdirfd, newpath, flags);
    if (m == 'a')
        raise(SIGKILL);
    return rc;
}
