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
 *   - --skipped is taken as --output and --items are (one rule): a plain crawl replaces
 *     a file that holds data; a crawl that goes on (--state) refuses it (exit 1, "add
 *     --resume to go on with it, or name a new file") and leaves it as it was;
 *   - --resume lists each URL once across the runs: a crawl stopped, its file holding
 *     the lines a killed run would have left (every skip but one, listed before the
 *     state committed its pages, and a torn line), goes on to list only the torn one;
 *   - stages 1 and 2 refuse the flag (exit 2).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
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

    /* as --output: a plain crawl replaces the list (the same URLs, each once) */
    assert_int_equal(run_crawler(&r, argv, 60), 0);
    if (r.exit_code != 0)
        fail_msg("%s", crawl_run_describe(&r));
    crawl_run_free(&r);
    long long again[NREASONS] = {0};
    assert_int_equal(read_skipped(list, again, ts.url), (size_t)total);

    /* a crawl that goes on (--state) refuses it, before touching anything */
    char db[600], out[600];
    snprintf(db, sizeof db, "%s/refused.db", scratch_dir);
    snprintf(out, sizeof out, "%s/refused.jsonl", scratch_dir);
    char *with_state[] = {QUEUE, "--format", "jsonl", "--skipped", list, "--state",
                          db,    "--output", out,     ts.url,      NULL};
    size_t before, after;
    char *was = read_file(list, &before);
    assert_int_equal(run_crawler(&r, with_state, 60), 0);
    char want_line[800];
    snprintf(want_line, sizeof want_line,
             "crawl-queue: --skipped '%s' holds a crawl already (%zu bytes): add --resume to "
             "go on with it, or name a new file",
             list, before);
    if (!crawl_run_one_line(&r, 1, want_line))
        fail_msg("want the one line \"%s\"\n%s", want_line, crawl_run_describe(&r));
    char *is = read_file(list, &after);
    assert_int_equal(before, after);
    assert_memory_equal(was, is, before);
    free(was);
    free(is);
    crawl_run_free(&r);
}

static void kill_9(pid_t pid, void *ctx)
{
    (void)ctx;
    kill(pid, SIGKILL);
}

static testsite slow;

static int start_slow(void **state)
{
    (void)state;
    const char *const args[] = {"--delay", "300", SITES_DIR "/skips.site", NULL};
    return testsite_start(&slow, args) == 0 ? 0 : -1;
}

static int stop_slow(void **state)
{
    (void)state;
    testsite_stop(&slow);
    return 0;
}

/* The crawl's flags with --state db --skipped list --output out (and --resume); killed
 * with SIGKILL at kill_at seconds when that is > 0. */
static void run_stateful(crawl_run *r, const char *db, const char *list, const char *out,
                         bool resume, double kill_at)
{
    char *argv[] = {QUEUE,         "--format",   "jsonl",          "-q",
                    "--skipped",   (char *)list, "--exclude",      "/private/",
                    "--max-depth", "1",          "--max-redirect", "0",
                    "--max-pages", "10",         "--state",        (char *)db,
                    "--output",    (char *)out,  slow.url,         resume ? "--resume" : NULL,
                    NULL};
    assert_int_equal(kill_at > 0 ? run_crawler_at(r, argv, 60, kill_at, kill_9, NULL)
                                 : run_crawler(r, argv, 60),
                     0);
    if (r->exit_code != 0 && r->term_signal != SIGKILL)
        fail_msg("%s", crawl_run_describe(r));
}

/* The skip counts of the list at path equal the whole crawl's at ref (read_skipped
 * fails on a URL listed twice). */
static void assert_same_list(const char *path, const char *ref)
{
    long long n[NREASONS] = {0}, want[NREASONS] = {0};
    size_t lines = read_skipped(path, n, slow.url);
    assert_int_equal(lines, read_skipped(ref, want, slow.url));
    for (int k = 0; k < NREASONS; k++)
        if (n[k] != want[k])
            fail_msg("%s: %lld URLs listed, the whole crawl %lld", reasons[k], n[k], want[k]);
}

/* --resume after kill -9: each skipped URL once across the runs. The first run, on a
 * slow site, is killed before it lists anything; then its list is given the lines a
 * kill -9 leaves when the skips were listed and the page that made them was not yet
 * committed to the state (so it is fetched again): every URL of a whole crawl's list
 * but one, and that one torn. The run that goes on cuts the torn line, lists that one
 * URL and no other again. */
static void test_resume_lists_once(void **state)
{
    (void)state;
    char db[600], list[600], out[600], ref[600], refdb[600], refout[600];
    snprintf(db, sizeof db, "%s/resume.db", scratch_dir);
    snprintf(list, sizeof list, "%s/resume-skipped.jsonl", scratch_dir);
    snprintf(out, sizeof out, "%s/resume-out.jsonl", scratch_dir);
    snprintf(refdb, sizeof refdb, "%s/ref.db", scratch_dir);
    snprintf(ref, sizeof ref, "%s/ref-skipped.jsonl", scratch_dir);
    snprintf(refout, sizeof refout, "%s/ref-out.jsonl", scratch_dir);
    crawl_run r;
    run_stateful(&r, refdb, ref, refout, false, 0); /* the whole list */
    assert_int_equal(r.exit_code, 0);
    crawl_run_free(&r);

    run_stateful(&r, db, list, out, false, 0.1);
    if (r.term_signal != SIGKILL)
        fail_msg("the first run was not killed\n%s", crawl_run_describe(&r));
    crawl_run_free(&r);

    /* what a kill -9 leaves: the whole list's lines not there yet, the last torn */
    size_t len, have_len;
    char *whole = read_file(ref, &len), *have = read_file(list, &have_len);
    assert_non_null(whole);
    assert_non_null(have);
    FILE *f = fopen(list, "a");
    assert_non_null(f);
    char *last = NULL;
    size_t planted = 0;
    for (char *line = whole, *nl; *line; line = nl + 1) {
        nl = strchr(line, '\n');
        assert_non_null(nl);
        *nl = '\0';
        char url_field[600];
        const char *end = strstr(line, "\", \"reason\"");
        assert_non_null(end);
        snprintf(url_field, sizeof url_field, "%.*s\"", (int)(end - line), line);
        if (strstr(have, url_field))
            continue; /* listed by the first run */
        if (last) {
            fprintf(f, "%s\n", last);
            planted++;
        }
        last = line;
    }
    assert_non_null(last);                             /* some URL was left to list */
    fprintf(f, "%.*s", (int)(strlen(last) / 2), last); /* torn */
    fclose(f);
    free(have);
    assert_true(planted > 0);

    run_stateful(&r, db, list, out, true, 0);
    assert_int_equal(r.exit_code, 0);
    crawl_run_free(&r);
    assert_same_list(list, ref);
    free(whole);
}

/* --resume after real kills: killed at five moments (before and after the skips of /
 * are listed, before and after the state commits), resumed each time, then run to its
 * end: the list is the whole crawl's, each URL once. */
static void test_kills_list_once(void **state)
{
    (void)state;
    char db[600], list[600], out[600], ref[600], refdb[600], refout[600];
    snprintf(db, sizeof db, "%s/kills.db", scratch_dir);
    snprintf(list, sizeof list, "%s/kills-skipped.jsonl", scratch_dir);
    snprintf(out, sizeof out, "%s/kills-out.jsonl", scratch_dir);
    snprintf(refdb, sizeof refdb, "%s/kref.db", scratch_dir);
    snprintf(ref, sizeof ref, "%s/kref-skipped.jsonl", scratch_dir);
    snprintf(refout, sizeof refout, "%s/kref-out.jsonl", scratch_dir);
    crawl_run r;
    run_stateful(&r, refdb, ref, refout, false, 0);
    assert_int_equal(r.exit_code, 0);
    crawl_run_free(&r);
    static const double at[] = {0.45, 0.62, 0.7, 0.8, 0.95};
    int kills = 0;
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        run_stateful(&r, db, list, out, i > 0, at[i]);
        kills += r.term_signal == SIGKILL;
        crawl_run_free(&r);
    }
    run_stateful(&r, db, list, out, true, 0);
    assert_int_equal(r.exit_code, 0);
    crawl_run_free(&r);
    print_message("%d of 5 runs killed with SIGKILL, then one to the end\n", kills);
    assert_true(kills >= 3);
    assert_same_list(list, ref);
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
        cmocka_unit_test_setup_teardown(test_resume_lists_once, start_slow, stop_slow),
        cmocka_unit_test_setup_teardown(test_kills_list_once, start_slow, stop_slow),
        cmocka_unit_test_setup_teardown(test_stages_refuse, start, stop),
    };
    return cmocka_run_group_tests(tests, scratch_setup, scratch_teardown);
}
