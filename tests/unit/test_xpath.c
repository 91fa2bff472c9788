/* test_xpath.c — xpath_eval (stage3_queue/spiders/xpath.h): its comparison rewrite
 * gives what libxml2 alone gives, and a comparison of two node-sets is bounded by its
 * pairs, which libxml2 does not count (issue #33). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include <libxml/HTMLparser.h>
#include <libxml/xpath.h>

#include "xpath.h"

static const char page[] =
    "<html><head><title>T</title></head><body><a href='1'>one</a><a href='2'>2</a>"
    "<p class='x'>3</p><p>4</p><i>2</i><div id='d'><b>5</b><b>2</b></div></body></html>";

typedef struct joined {
    char s[1024];
} joined;

static int join(void *ctx, const char *s, size_t len)
{
    joined *j = ctx;
    size_t n = strlen(j->s);
    snprintf(j->s + n, sizeof j->s - n, "[%.*s]", (int)len, s);
    return 0;
}

/* expr on page by libxml2 alone, as xpath_eval gives its strings. */
static void plain(const char *expr, joined *j)
{
    htmlDocPtr d = htmlReadMemory(page, (int)strlen(page), "http://h/", NULL,
                                  HTML_PARSE_RECOVER | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING
                                      | HTML_PARSE_NONET | HTML_PARSE_COMPACT);
    assert_non_null(d);
    xmlXPathContextPtr c = xmlXPathNewContext(d);
    xmlXPathObjectPtr r = xmlXPathEvalExpression((const xmlChar *)expr, c);
    if (!r)
        fail_msg("libxml2 alone: %s fails", expr);
    if (r->type == XPATH_NODESET) {
        for (int i = 0; r->nodesetval && i < r->nodesetval->nodeNr; i++) {
            xmlChar *s = xmlXPathCastNodeToString(r->nodesetval->nodeTab[i]);
            join(j, (const char *)s, strlen((const char *)s));
            xmlFree(s);
        }
    } else {
        xmlChar *s = xmlXPathCastToString(r);
        join(j, (const char *)s, strlen((const char *)s));
        xmlFree(s);
    }
    xmlXPathFreeObject(r);
    xmlXPathFreeContext(c);
    xmlFreeDoc(d);
}

/* Comparisons of every kind and place: node-sets on both sides (rewritten), a literal or
 * a core call on one (left as written), chains, inside predicates, function arguments,
 * parentheses and and/or; each must give what libxml2 alone gives. */
static void test_same_results(void **state)
{
    (void)state;
    static const char *const exprs[] = {
        "//a = //p",
        "//a[@href = //i]",
        "count(//b[. = //a]) > 0 and //a != //b",
        "//p[position() = 1]",
        "//b = 2",
        "//a < //b",
        "//a >= //b",
        "//a > //i",
        "//a <= //b = true()",
        "1 < 2 = //a",
        "//a = //b = //p",
        "concat(//a, \"=\", //b)",
        "//a[. = \"one\" or (//b = //i)]",
        "count(//a[@href=//b]|//p)",
        "//a = id(\"d\")",
        "(//a)[1] != (//b)[2]",
        "//a[@href > //i]/text()",
        "//p[@class='x'] = //p",
        "-//a = -//b",
        "//b[.=//a]",
        "string(//a = //i)",
        "//a=//i and//b=//i or //p=//i",
        "//b[not(. != //i)]",
        "//*[name()=\"b\" and . > //a]",
        "//a[@href][. != //p][1]",
        "//b[. > 3 = (//a < //b)]",
        "sum(//b[. >= //i]) div 2 > 1",
        "//a[1 = 1][//b = //b and //i != //p]",
        "//b[(. = //i) = (//a != //p)]",
        "//div[@id = 'd']//b[. != //i][last()]",
    };
    xpath_doc *d = xpath_parse(page, strlen(page), NULL, "http://h/");
    for (size_t i = 0; i < sizeof exprs / sizeof *exprs; i++) {
        joined ours = {""}, theirs = {""};
        char err[512];
        if (xpath_eval(d, exprs[i], join, &ours, err, sizeof err) < 0)
            fail_msg("%s: %s", exprs[i], err);
        plain(exprs[i], &theirs);
        if (strcmp(ours.s, theirs.s) != 0)
            fail_msg("%s: '%s', libxml2 alone '%s'", exprs[i], ours.s, theirs.s);
    }
    /* the functions the rewrite calls are not the spider's to call */
    char err[512];
    assert_int_equal(xpath_eval(d, "//b[crawl-eq(., .)]", join, &(joined){""}, err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "crawl-eq() is not a function of XPath 1.0's core library"));
    xpath_doc_free(d);
}

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* 20,000 spans: two node-sets compared are charged their pairs (400 million here, over
 * the limit at once, where libxml2 took 2 s for each "!=" and counted 80,000 operations),
 * wherever the comparison is (100 of them in a predicate; 100 joined by "or"). */
static void test_pairs_bounded(void **state)
{
    (void)state;
    size_t cap = 64 + 14 * 20000, n;
    char *body = malloc(cap);
    assert_non_null(body);
    n = (size_t)snprintf(body, cap, "<html><body>");
    for (int i = 0; i < 20000; i++)
        n += (size_t)snprintf(body + n, cap - n, "<span>x</span>");
    n += (size_t)snprintf(body + n, cap - n, "</body></html>");
    xpath_doc *d = xpath_parse(body, n, NULL, "http://h/");
    char ors[2048] = "";
    for (int i = 0; i < 100; i++)
        strcat(ors, i ? " or //span = //span" : "//span = //span");
    const char *const exprs[] = {"//span != //span", "//span < //span",
                                 "count(//span[position() <= 100][//span != //span])", ors};
    for (size_t i = 0; i < sizeof exprs / sizeof *exprs; i++) {
        char err[4096];
        double t0 = cpu_now();
        assert_int_equal(xpath_eval(d, exprs[i], join, &(joined){""}, err, sizeof err), -1);
        double took = cpu_now() - t0;
        if (!strstr(err, "over its limit of 10000000 operations"))
            fail_msg("%.60s: '%s'", exprs[i], err);
        assert_int_equal(xpath_ops(d), XPATH_OP_LIMIT);
        /* (about 10 ms; 4 s is slack for a sanitizer on a loaded machine) */
        if (took > 4.0)
            fail_msg("%.60s: %.2f s of CPU", exprs[i], took);
    }
    /* one side a node-set, the other a string: linear, and fine */
    joined j = {""};
    char err[512];
    assert_int_equal(xpath_eval(d, "count(//span[. = 'x'])", join, &j, err, sizeof err), 0);
    assert_string_equal(j.s, "[20000]");
    xpath_doc_free(d);
    free(body);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_results),
        cmocka_unit_test(test_pairs_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
