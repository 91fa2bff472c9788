/* scratch.c — a test program's scratch directory (scratch.h). */
#include "scratch.h"

#include <stdio.h>
#include <stdlib.h>

char scratch_dir[] = "/tmp/crawltest.XXXXXX";

int scratch_setup(void **state)
{
    (void)state;
    return mkdtemp(scratch_dir) ? 0 : -1;
}

int scratch_teardown(void **state)
{
    (void)state;
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch_dir);
    return system(cmd) == 0 ? 0 : -1;
}
