/* scratch.h — a test program's scratch directory: made by its cmocka group setup,
 * removed with everything in it by the group teardown.
 *
 *   static char *const dir = scratch_dir;           ... files in dir ...
 *   return cmocka_run_group_tests(tests, scratch_setup, scratch_teardown);
 */
#ifndef CRAWL_TEST_SCRATCH_H
#define CRAWL_TEST_SCRATCH_H

#include <stddef.h>

/* "/tmp/crawltest.XXXXXX", the X's filled by scratch_setup. */
extern char scratch_dir[];

int scratch_setup(void **state);
int scratch_teardown(void **state);

/* dir/name (into path, len bytes at most) holding text, replaced if it was there.
 * Returns path, or NULL when it could not be written. */
const char *scratch_write(char *path, size_t len, const char *name, const char *text);

/* $HOME becomes dir/home, made with a .netrc holding text (libcurl reads it for
 * --netrc). Returns what $HOME was (malloc'd; NULL: unset) for scratch_home_restore,
 * which frees it; exits the test program (1) when the file cannot be written. */
char *scratch_netrc_home(const char *text);
void scratch_home_restore(char *was);

#endif
