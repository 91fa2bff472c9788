/* scenarios_hidden.h — stage 1's hidden cases (docs/exercises/stage1-read_response/
 * hidden.conf), for tests/scenarios/scenarios.c, which includes it when the build has
 * tests/hidden/ (CRAWL_HIDDEN_DIR). Each reads a response the public cases do not
 * show; like every scenario they run against every stage, transport and selector.
 * Not in a handout. */
#ifndef CRAWL_SCENARIOS_HIDDEN_H
#define CRAWL_SCENARIOS_HIDDEN_H

#define HIDDEN_SITE(name) CRAWL_HIDDEN_DIR "/sites/" name

/* A response, head and body, arriving 5 bytes at a time: many reads, each partial. */
static void test_hidden_dribble(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, HIDDEN_SITE("dribble.site"), NULL);
    const crawl_run *r = crawl(c, "--max-tries", "1", U(b, "/"), NULL);
    EXPECT(r, b, PAGE("/", 1, 1), {"/dribble", 200, NUL_, 59, "text/html", "utf-8", 1, 1, false},
           PAGE("/after-dribble", 0, 0));
}

/* A 300 KB page whose one link is in its last bytes: every read counts. */
static void test_hidden_tail_link(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, HIDDEN_SITE("tail.site"), NULL);
    const crawl_run *r = crawl(c, "--max-tries", "1", U(b, "/"), NULL);
    EXPECT(r, b, PAGE("/", 1, 1), {"/tail", 200, NUL_, 300071, "text/html", "utf-8", 1, 1, false},
           PAGE("/found-at-the-end", 0, 0));
}

/* A body that ends when the server closes (no Content-Length), a chunked body
 * dripping, and a chunked body cut short: the close is the end of the first, of none
 * of the others, and the last is a failure. */
static void test_hidden_close_and_chunks(void **state)
{
    case_ctx *c = *state;
    const char *b = start_site(c, HIDDEN_SITE("close.site"), NULL);
    const crawl_run *r = crawl(c, "--max-tries", "1", U(b, "/"), NULL);
    EXPECT(r, b, PAGE("/", 3, 3), {"/close", 200, NUL_, 57, "text/html", "utf-8", 1, 1, false},
           PAGE("/after-close", 0, 0),
           {"/chunks", 200, NUL_, 42, "text/html", "utf-8", 1, 1, false},
           PAGE("/after-chunks", 0, 0), FAILED("/chunks-cut"));
    expect_exception_has(r, b, "/chunks-cut", is_raw() ? "inside a chunked body" : "partial");
}

static const struct CMUnitTest hidden_cases[] = {
    CASE(test_hidden_dribble),
    CASE(test_hidden_tail_link),
    CASE(test_hidden_close_and_chunks),
};
#define NHIDDEN_CASES (sizeof hidden_cases / sizeof hidden_cases[0])

#endif
