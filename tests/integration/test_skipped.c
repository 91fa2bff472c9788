/* test_skipped.c — every skip has a reason: crawl-queue's summary counts the URLs it
 * found and did not schedule by reason ("skipped"), --skipped FILE lists each as a JSON
 * line {url, reason, referrer}, -v prints each, and the summary on stderr says when
 * --max-pages cut the crawl short. On tests/sites/skips.site, whose every skip is
 * decided by one page (the counts do not depend on which fetch ends first).
 *
 *   - --exclude /private/ --max-depth 1 --max-redirect 0 --max-pages 10: offsite 2,
 *     excluded 1, depth 1, redirects 1, robots 1, max_pages 25; --skipped says the same,
 *     each URL once with the page that linked to it;
 *   - --include '/d1|/l/1$': not_included 34;
 *   - a --skipped file that holds data is refused (exit 1) and left as it was; stages 1
 *     and 2 refuse the flag (exit 2).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "jsonl.h"
#include "scratch.h"
#include "testsite_helper.h"

#define QUEUE     BIN_DIR "/crawl-queue"
#define CALLBACKS BIN_DIR "/crawl-callbacks"

static testsite ts;

static int start(void **state)
{
    (void)state;
    const char *const args[] = {SITES_DIR "/skips.site", NULL};
    return testsite_start(&ts, args) == 0 ? 0 : -1;
}

static int stop(void **state)
{
    (void)state;
    testsite_stop(&ts);
    return 0;
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = calloc(1, 1 << 20);
    assert_non_null(buf);
    *len = fread(buf, 1, (1 << 20) - 1, f);
    fclose(f);
    return buf;
}

/* The summary's skipped count for reason. */
static long long skipped_of(const crawl_run *r, const char *reason)
{
    const jobj *s = r->summary ? jobj_obj(r->summary, "skipped") : NULL;
    if (!s)
        fail_msg("no \"skipped\" in the summary\n%s", crawl_run_describe(r));
    return jobj_int(s, reason, -1);
}

static const char *const reasons[] = {"offsite", "excluded",  "not_included", "scheme",
                                      "depth",   "max_pages", "robots",       "redirects"};
enum { NREASONS = sizeof reasons / sizeof reasons[0] };

/* Each line of the --skipped file at path: {url, reason, referrer}, each URL once;
 * counted by reason into n. Returns the lines. */
static size_t read_skipped(const char *path, long long n[NREASONS], const char *site)
{
    size_t len;
    char *text = read_file(path, &len);
    assert_non_null(text);
    size_t lines = 0;
    char seen[64][128];
    for (char *line = text, *nl; *line; line = nl + 1) {
        nl = strchr(line, '\n');
        assert_non_null(nl); /* every line whole */
        char err[128];
        jobj *o = jobj_parse(line, (size_t)(nl - line), err, sizeof err);
        if (!o)
            fail_msg("--skipped line %zu: %s", lines + 1, err);
        assert_int_equal(o->n, 3);
        const char *url = jobj_str(o, "url"), *reason = jobj_str(o, "reason");
        assert_non_null(url);
        assert_non_null(reason);
        assert_non_null(jobj_get(o, "referrer"));
        int k = 0;
        while (k < NREASONS && strcmp(reasons[k], reason) != 0)
            k++;
        if (k == NREASONS)
            fail_msg("%s: reason %s", url, reason);
        n[k]++;
        for (size_t i = 0; i < lines && i < 64; i++)
            if (strcmp(seen[i], url) == 0)
                fail_msg("%s listed twice", url);
        if (lines < 64)
            snprintf(seen[lines], sizeof seen[lines], "%s", url);
        /* who linked to it: a page of the site (robots: /secret, linked from /) */
        const char *from = jobj_str(o, "referrer");
        if (!from || strncmp(from, site, strlen(site)) != 0)
            fail_msg("%s (%s): referrer %s", url, reason, from ? from : "null");
        if (strcmp(url, "http://elsewhere2.example/") == 0)
            assert_true(strcmp(reason, "offsite") == 0 && strstr(from, "/r/off"));
        if (strstr(url, "/d2"))
            assert_true(strcmp(reason, "depth") == 0 && strstr(from, "/d1"));
        jobj_free(o);
        lines++;
    }
    free(text);
    return lines;
}

static void test_reasons(void **state)
{
    (void)state;
    char list[512];
    snprintf(list, sizeof list, "%s/skipped.jsonl", scratch_dir);
    char *argv[] = {QUEUE,         "--format",  "jsonl",       "-v", "--skipped",      list,
                    "--exclude",   "/private/", "--max-depth", "1",  "--max-redirect", "0",
                    "--max-pages", "10",        ts.url,        NULL};
    crawl_run r;
    assert_int_equal(run_crawler(&r, argv, 60), 0);
    if (r.exit_code != 0 || r.nrecords != 10)
        fail_msg("%s", crawl_run_describe(&r));
    const long long want[NREASONS] = {2, 1, 0, 0, 1, 25, 1, 1};
    long long total = 0;
    for (int k = 0; k < NREASONS; k++) {
        if (skipped_of(&r, reasons[k]) != want[k])
            fail_msg("skipped %s: %lld, want %lld\n%s", reasons[k], skipped_of(&r, reasons[k]),
                     want[k], crawl_run_describe(&r));
        total += want[k];
    }
    assert_int_equal(skipped_of(&r, "total"), total);
    /* --skipped: the same URLs, each once */
    long long n[NREASONS] = {0};
    assert_int_equal(read_skipped(list, n, ts.url), (size_t)total);
    for (int k = 0; k < NREASONS; k++)
        assert_int_equal(n[k], want[k]);
    /* -v: a line each; the summary on stderr says the crawl was cut short */
    if (!strstr(r.err, "skipped http://elsewhere.example/ (offsite), linked from "))
        fail_msg("no -v line for the offsite link\n%s", r.err);
    if (!strstr(r.err, "--max-pages 10 reached: the crawl is not complete"))
        fail_msg("the summary does not say --max-pages cut the crawl\n%s", r.err);
    crawl_run_free(&r);

    /* the list is never replaced: a second crawl naming it is refused */
    size_t before, after;
    char *was = read_file(list, &before);
    assert_int_equal(run_crawler(&r, argv, 60), 0);
    assert_int_equal(r.exit_code, 1);
    assert_non_null(strstr(r.err, "holds a list already"));
    char *is = read_file(list, &after);
    assert_int_equal(before, after);
    assert_memory_equal(was, is, before);
    free(was);
    free(is);
    crawl_run_free(&r);
}

static void test_not_included(void **state)
{
    (void)state;
    char *argv[] = {QUEUE, "--format", "jsonl", "-q", "--include", "/d1|/l/1$", ts.url, NULL};
    crawl_run r;
    assert_int_equal(run_crawler(&r, argv, 60), 0);
    if (r.exit_code != 0)
        fail_msg("%s", crawl_run_describe(&r));
    assert_int_equal(skipped_of(&r, "not_included"), 34);
    assert_int_equal(skipped_of(&r, "offsite"), 1);
    assert_int_equal(skipped_of(&r, "max_pages"), 0);
    crawl_run_free(&r);
}

/* The chapter's crawlers have no such flag. */
static void test_stages_refuse(void **state)
{
    (void)state;
    char list[512];
    snprintf(list, sizeof list, "%s/chapter.jsonl", scratch_dir);
    char *argv[] = {CALLBACKS, "--skipped", list, ts.url, NULL};
    crawl_run r;
    assert_int_equal(run_crawler(&r, argv, 60), 0);
    assert_int_equal(r.exit_code, 2);
    crawl_run_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_reasons, start, stop),
        cmocka_unit_test_setup_teardown(test_not_included, start, stop),
        cmocka_unit_test_setup_teardown(test_stages_refuse, start, stop),
    };
    return cmocka_run_group_tests(tests, scratch_setup, scratch_teardown);
}
