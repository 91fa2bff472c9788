/* scratch.c — a test program's scratch directory (scratch.h). */
#include "scratch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testsite_helper.h"

char scratch_dir[] = "/tmp/crawltest.XXXXXX";

int scratch_setup(void **state)
{
    (void)state;
    return mkdtemp(scratch_dir) ? 0 : -1;
}

const char *scratch_write(char *path, size_t len, const char *name, const char *text)
{
    snprintf(path, len, "%s/%s", scratch_dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        return NULL;
    int bad = fputs(text, f) < 0;
    return fclose(f) == 0 && !bad ? path : NULL;
}

char *scratch_netrc_home(const char *text)
{
    char home[300], netrc[320];
    snprintf(home, sizeof home, "%s/home", scratch_dir);
    mkdir(home, 0700);
    if (!scratch_write(netrc, sizeof netrc, "home/.netrc", text)) {
        fprintf(stderr, "scratch: cannot write %s\n", netrc);
        exit(1);
    }
    const char *old = getenv("HOME");
    char *was = old ? strdup(old) : NULL;
    setenv("HOME", home, 1);
    return was;
}

void scratch_home_restore(char *was)
{
    if (was)
        setenv("HOME", was, 1);
    else
        unsetenv("HOME");
    free(was);
}

int scratch_teardown(void **state)
{
    (void)state;
    return test_remove_tree(scratch_dir);
}
