/* test_spider_exercise.c — the grader of the stage3-spider exercise
 * (docs/exercises/stage3-spider/): crawl-queue runs the spider of env
 * CRAWL_TEST_SPIDER (ours, stage3_queue/spiders/course/bookshop.lua, by default) on a
 * bookshop from its first shelf, and each case checks part of the items it wrote
 * (--items), order-free: the first shelf's books, the other shelves' (pagination), the
 * ratings from the JSON API and from the pages, and nothing else. test_shop_* crawl
 * tests/sites/bookshop.site (grade.conf); the hidden cases, when the build has
 * tests/hidden/ (the teacher's, never a handout's), a shop the student never sees
 * (bookshop_hidden.h there). Env CRAWL_QUEUE_BIN: the crawler to run;
 * CRAWL_TEST_FILTER: only the cases it matches (a cmocka glob). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "jsonl.h"
#include "scratch.h"
#include "testsite_helper.h"

#define CRAWL_LIMIT_SECS 30 /* a spider that never ends is killed, and its cases fail */

/* One book of a shop: the item the spider must make of its page. */
typedef struct book {
    const char *path;
    const char *title;
    const char *author;
    double price;
    int rating;
    int shelf;      /* the listing page it is on */
    int rating_api; /* its rating is only in the JSON API */
} book;

/* The books of tests/sites/bookshop.site. */
static const book shop_books[] = {
    {"/book/ember-road", "Ember Road", "Ada Quill", 8.40, 4, 1, 0},
    {"/book/glass-harbour", "Glass Harbour", "Bo Lind", 12.00, 5, 1, 1},
    {"/book/iron-orchard", "Iron Orchard", "Cy Marsh", 6.75, 3, 1, 0},
    {"/book/lantern-hours", "Lantern Hours", "Di Vale", 9.10, 2, 2, 1},
    {"/book/mossy-stair", "Mossy Stair", "Ed Roan", 4.25, 5, 2, 0},
    {"/book/north-of-salt", "North of Salt", "Fay Orme", 15.50, 1, 2, 1},
    {"/book/paper-moons", "Paper Moons", "Gil Pike", 7.00, 2, 3, 0},
    {"/book/quiet-engine", "Quiet Engine", "Hal Teague", 11.30, 4, 3, 1},
};

/* A shop, and the one crawl of it the cases share (run by the first case). */
typedef struct shop {
    const char *site;
    const char *label; /* its items file's name */
    const book *books;
    size_t nbooks;
    int crawled;
    crawl_run run;
    char origin[128]; /* "http://127.0.0.1:P" */
    jobj **items;
    size_t nitems;
    char items_error[300]; /* why the items file could not be read, or "" */
} shop;

static shop public_shop = {.site = SITES_DIR "/bookshop.site",
                           .label = "shop",
                           .books = shop_books,
                           .nbooks = sizeof shop_books / sizeof *shop_books};

#ifdef CRAWL_HIDDEN_DIR
#include "bookshop_hidden.h"
#endif

static const char *env_or(const char *name, const char *dflt)
{
    const char *v = getenv(name);
    return v && *v ? v : dflt;
}

/* The items file's lines, parsed, into s->items (an unparsable line: items_error). */
static void load_items(shop *s, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return; /* no item was emitted: no file, or an empty one */
    char *line = NULL, err[200];
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) > 0 && !s->items_error[0]) {
        size_t n = (size_t)len - (line[len - 1] == '\n');
        jobj *o = jobj_parse(line, n, err, sizeof err);
        if (!o) {
            snprintf(s->items_error, sizeof s->items_error, "an item is not JSON: %s", err);
            break;
        }
        jobj **v = realloc(s->items, (s->nitems + 1) * sizeof *v);
        assert_non_null(v);
        s->items = v;
        s->items[s->nitems++] = o;
    }
    free(line);
    fclose(f);
}

/* Crawl shop s with the spider, from its first shelf, once. */
static shop *crawled(shop *s)
{
    if (s->crawled)
        return s;
    s->crawled = 1;
    testsite ts;
    const char *const args[] = {s->site, NULL};
    assert_int_equal(testsite_start(&ts, args), 0);
    snprintf(s->origin, sizeof s->origin, "%.*s", (int)strlen(ts.url) - 1, ts.url);
    char root[200], items[600];
    snprintf(root, sizeof root, "%sshelf/1", ts.url);
    snprintf(items, sizeof items, "%s/items-%s.jsonl", scratch_dir, s->label);
    unlink(items);
    char *argv[] = {
        (char *)env_or("CRAWL_QUEUE_BIN", BIN_DIR "/crawl-queue"),
        "--spider",
        (char *)env_or("CRAWL_TEST_SPIDER", SOURCE_DIR "/stage3_queue/spiders/course/bookshop.lua"),
        "--items",
        items,
        "--format",
        "jsonl",
        "-q",
        root,
        NULL};
    int rc = run_crawler(&s->run, argv, CRAWL_LIMIT_SECS);
    testsite_stop(&ts);
    assert_int_equal(rc, 0);
    load_items(s, items);
    return s;
}

/* The item whose url is the book's, or NULL. */
static const jobj *item_of(const shop *s, const book *b)
{
    char url[300];
    snprintf(url, sizeof url, "%s%s", s->origin, b->path);
    for (size_t i = 0; i < s->nitems; i++) {
        const char *u = jobj_str(s->items[i], "url");
        if (u && strcmp(u, url) == 0)
            return s->items[i];
    }
    return NULL;
}

/* Fail unless the crawl ended by itself, each item being JSON. */
static void check_ran(const shop *s)
{
    if (s->run.timed_out || s->run.exit_code != 0)
        fail_msg("the crawl did not end well: %s", crawl_run_describe(&s->run));
    if (s->items_error[0])
        fail_msg("%s", s->items_error);
}

/* Fail unless the book's item is there with its url, title, author and price. */
static void check_fields(const shop *s, const book *b)
{
    const jobj *it = item_of(s, b);
    if (!it)
        fail_msg("no item has \"url\": \"%s%s\" (the spider emitted %zu item(s))", s->origin,
                 b->path, s->nitems);
    const char *t = jobj_str(it, "title"), *a = jobj_str(it, "author");
    if (!t || strcmp(t, b->title) != 0)
        fail_msg("%s: \"title\" should be \"%s\", is %s%s%s", b->path, b->title, t ? "\"" : "",
                 t ? t : "missing or not a string", t ? "\"" : "");
    if (!a || strcmp(a, b->author) != 0)
        fail_msg("%s: \"author\" should be \"%s\", is %s%s%s", b->path, b->author, a ? "\"" : "",
                 a ? a : "missing or not a string", a ? "\"" : "");
    const jv *p = jobj_get(it, "price");
    if (!p || p->type != JV_NUM || fabs(jobj_num(it, "price", 0) - b->price) > 0.004)
        fail_msg("%s: \"price\" should be the number %.2f, is %s", b->path, b->price,
                 !p || p->type == JV_ABSENT ? "missing"
                     : p->type == JV_NUM    ? "another number"
                                            : "not a number");
}

/* Fail unless the books of shelves [from, to] have their items. */
static void check_shelves(shop *s, int from, int to)
{
    check_ran(s);
    for (size_t i = 0; i < s->nbooks; i++)
        if (s->books[i].shelf >= from && s->books[i].shelf <= to)
            check_fields(s, &s->books[i]);
}

/* Fail unless every book whose rating is (api) or is not (!api) only in the API, of
 * those the spider made an item of (one at least), has its rating. */
static void check_ratings(shop *s, int api)
{
    check_ran(s);
    size_t seen = 0;
    for (size_t i = 0; i < s->nbooks; i++) {
        const book *b = &s->books[i];
        const jobj *it = item_of(s, b);
        if (b->rating_api != api || !it)
            continue;
        seen++;
        const jv *r = jobj_get(it, "rating");
        if (!r || r->type != JV_NUM || jobj_int(it, "rating", -1) != b->rating)
            fail_msg("%s: \"rating\" should be the number %d, is %s", b->path, b->rating,
                     !r || r->type == JV_ABSENT ? "missing"
                         : r->type == JV_NUM    ? "another number"
                                                : "not a number");
    }
    if (seen == 0)
        fail_msg("no item for any book whose rating is %s (the spider emitted %zu item(s))",
                 api ? "only in the API" : "on its page", s->nitems);
}

/* Fail unless the items are the books', each once, and nothing else. */
static void check_exact(shop *s)
{
    check_ran(s);
    for (size_t i = 0; i < s->nitems; i++) {
        const char *u = jobj_str(s->items[i], "url");
        size_t k = 0, same = 0;
        while (k < s->nbooks
               && !(u && strcmp(u + strlen(s->origin), s->books[k].path) == 0
                    && strncmp(u, s->origin, strlen(s->origin)) == 0))
            k++;
        if (k == s->nbooks)
            fail_msg("item %zu is no book's: \"url\" is %s", i + 1, u ? u : "missing");
        for (size_t j = 0; j < s->nitems; j++) {
            const char *v = jobj_str(s->items[j], "url");
            same += v && strcmp(u, v) == 0;
        }
        if (same > 1)
            fail_msg("%zu items have \"url\": \"%s\": one a book", same, u);
    }
    if (s->nitems != s->nbooks)
        fail_msg("%zu item(s), the shop has %zu books", s->nitems, s->nbooks);
}

static void check_no_spider_error(shop *s)
{
    check_ran(s);
    for (size_t i = 0; i < s->run.nrecords; i++) {
        const char *e = jobj_str(s->run.records[i], "exception");
        if (e && strstr(e, "spider error"))
            fail_msg("%s: %s", jobj_str(s->run.records[i], "url"), e);
    }
}

/* The cases: a name (grade.conf's globs pick them), the shop, what is checked. */
typedef enum check_kind { RUNS, SHELVES, API_RATINGS, PAGE_RATINGS, ALL_RATINGS, EXACT } check_kind;
typedef struct grade_case {
    const char *name;
    shop *s;
    check_kind kind;
    int from, to; /* SHELVES: the shelves */
} grade_case;

static grade_case cases[] = {{"test_shop_runs", &public_shop, RUNS, 0, 0},
                             {"test_shop_first_shelf", &public_shop, SHELVES, 1, 1},
                             {"test_shop_pagination", &public_shop, SHELVES, 2, 99},
                             {"test_shop_api_ratings", &public_shop, API_RATINGS, 0, 0},
                             {"test_shop_page_ratings", &public_shop, PAGE_RATINGS, 0, 0},
                             {"test_shop_exact_items", &public_shop, EXACT, 0, 0},
#ifdef CRAWL_HIDDEN_DIR
                             HIDDEN_CASES
#endif
};
#define NCASES (sizeof cases / sizeof *cases)

static void run_case(void **state)
{
    const grade_case *c = *state;
    shop *s = crawled(c->s);
    switch (c->kind) {
    case RUNS: check_no_spider_error(s); break;
    case SHELVES: check_shelves(s, c->from, c->to); break;
    case API_RATINGS: check_ratings(s, 1); break;
    case PAGE_RATINGS: check_ratings(s, 0); break;
    case ALL_RATINGS:
        check_ratings(s, 1);
        check_ratings(s, 0);
        break;
    case EXACT: check_exact(s); break;
    }
}

static void free_shop(shop *s)
{
    for (size_t i = 0; i < s->nitems; i++)
        jobj_free(s->items[i]);
    free(s->items);
    if (s->crawled)
        crawl_run_free(&s->run);
}

static int teardown(void **state)
{
    free_shop(&public_shop);
#ifdef CRAWL_HIDDEN_DIR
    free_shop(&hidden_shop);
#endif
    return scratch_teardown(state);
}

int main(void)
{
    struct CMUnitTest tests[NCASES];
    for (size_t i = 0; i < NCASES; i++)
        tests[i] = (struct CMUnitTest){
            .name = cases[i].name, .test_func = run_case, .initial_state = &cases[i]};
    const char *only = getenv("CRAWL_TEST_FILTER");
    if (only && *only)
        cmocka_set_test_filter(only);
    return cmocka_run_group_tests(tests, scratch_setup, teardown);
}
