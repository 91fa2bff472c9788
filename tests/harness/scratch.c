/* scratch.c — a test program's scratch directory (scratch.h). */
#include "scratch.h"

#include <stdio.h>
#include <stdlib.h>

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

int scratch_teardown(void **state)
{
    (void)state;
    return test_remove_tree(scratch_dir);
}
