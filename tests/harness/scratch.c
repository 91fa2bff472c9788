/* scratch.c — a test program's scratch directory (scratch.h). */
#include "scratch.h"

#include <stdlib.h>

#include "testsite_helper.h"

char scratch_dir[] = "/tmp/crawltest.XXXXXX";

int scratch_setup(void **state)
{
    (void)state;
    return mkdtemp(scratch_dir) ? 0 : -1;
}

int scratch_teardown(void **state)
{
    (void)state;
    return test_remove_tree(scratch_dir);
}
