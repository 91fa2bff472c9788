/* test_alloc.c — the one out-of-memory policy: an allocation that cannot be had never
 * returns; the default handler says so in one line and aborts; a program's handler
 * runs instead when set. Each failing case runs in a child process. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "alloc.h"

static void test_copies(void **state)
{
    (void)state;
    char *s = xstrdup("seen_urls");
    assert_string_equal(s, "seen_urls");
    char *t = xstrndup("seen_urls", 4);
    assert_string_equal(t, "seen");
    int *v = xcalloc(4, sizeof *v);
    assert_int_equal(v[3], 0);
    v = xreallocarray(v, 1000, sizeof *v);
    v[999] = 7;
    assert_int_equal(v[999], 7);
    char *f = xasprintf("%s %d", "max_tasks", 100);
    assert_string_equal(f, "max_tasks 100");
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (int i = 0; i < 1000; i++)
        xappend(&buf, &len, &cap, "seen", 4);
    xappend(&buf, &len, &cap, "", 1);
    assert_int_equal(len, 4001);
    assert_true(cap >= len);
    assert_int_equal(strlen(buf), 4000);
    assert_memory_equal(buf + 3996, "seen", 4);
    free(buf);
    free(s);
    free(t);
    free(v);
    free(f);
}

static void exit_42(size_t size)
{
    _exit(size == (size_t)1 << 32 ? 42 : 43);
}

/* AddressSanitizer reserves its own memory and reports a failed allocation itself, so
 * the death tests run in plain builds only. */
#if defined(__SANITIZE_ADDRESS__)
#define SKIP_UNDER_ASAN() skip()
#else
#define SKIP_UNDER_ASAN() ((void)0)
#endif

enum oom_case { OOM_DEFAULT, OOM_CUSTOM, OOM_LIBRARY };

/* Fork; in the child, cap the address space and allocate more than the cap (or, for
 * OOM_LIBRARY, say a library ran out). Returns the wait status; stderr of the child
 * goes to errbuf. */
static int run_oom_child(enum oom_case how, char *errbuf, size_t len)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(p[1], STDERR_FILENO);
        close(p[0]);
        alloc_set_progname("test_alloc");
        if (how == OOM_LIBRARY)
            alloc_oom(0);
        struct rlimit rl = {512UL << 20, 512UL << 20};
        setrlimit(RLIMIT_AS, &rl);
        if (how == OOM_CUSTOM)
            alloc_set_oom_handler(exit_42);
        void *x = xmalloc((size_t)1 << 32); /* 4 GiB under a 512 MiB cap */
        printf("%p\n", x);                  /* not reached */
        _exit(0);
    }
    close(p[1]);
    size_t got = 0;
    ssize_t r;
    while (got + 1 < len && (r = read(p[0], errbuf + got, len - 1 - got)) > 0)
        got += (size_t)r;
    errbuf[got] = '\0';
    close(p[0]);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    return st;
}

static void test_default_handler_aborts(void **state)
{
    (void)state;
    SKIP_UNDER_ASAN();
    char err[256];
    int st = run_oom_child(OOM_DEFAULT, err, sizeof err);
    assert_true(WIFSIGNALED(st));
    assert_int_equal(WTERMSIG(st), SIGABRT);
    assert_string_equal(err, "test_alloc: out of memory (4294967296 bytes)\n");
}

/* A program's handler runs instead, given the size that failed. */
static void test_custom_handler(void **state)
{
    (void)state;
    SKIP_UNDER_ASAN();
    char err[256];
    int st = run_oom_child(OOM_CUSTOM, err, sizeof err);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 42);
    assert_string_equal(err, "");
}

/* Memory a library could not get (size unknown): the same line without a size. */
static void test_library_oom(void **state)
{
    (void)state;
    char err[256];
    int st = run_oom_child(OOM_LIBRARY, err, sizeof err);
    assert_true(WIFSIGNALED(st));
    assert_int_equal(WTERMSIG(st), SIGABRT);
    assert_string_equal(err, "test_alloc: out of memory\n");
}

/* n * size overflowing is out of memory, not a small allocation. */
static void test_overflow(void **state)
{
    (void)state;
    SKIP_UNDER_ASAN();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0)
            dup2(fd, STDERR_FILENO);
        void *x = xreallocarray(NULL, SIZE_MAX / 2, 4);
        _exit(x ? 3 : 4);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFSIGNALED(st));
    assert_int_equal(WTERMSIG(st), SIGABRT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copies),         cmocka_unit_test(test_default_handler_aborts),
        cmocka_unit_test(test_custom_handler), cmocka_unit_test(test_library_oom),
        cmocka_unit_test(test_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
