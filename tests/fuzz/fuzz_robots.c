/* fuzz_robots.c — libFuzzer target for the robots.txt parser and matcher
 * (common/web/robots_parser.h).
 *
 * Input: a mode byte (bits 0-1 choose our agent: "foobot", "FooBot/2.0",
 * "crawlstages/0.1", "a"), then "PATH\nPATH...\0ROBOTS.TXT" — up to 8 paths asked
 * about, then the file. Without a NUL, everything after the mode byte is the file and
 * a fixed list of paths is asked about.
 *
 * Invariants:
 *   - /robots.txt is always allowed; a Crawl-delay is -1 or finite and >= 0; every
 *     Sitemap value is non-empty and holds no line end, '#', or edge whitespace;
 *   - a path spelt with its unreserved characters percent-encoded (either hex case)
 *     gets the same answer (RFC 9309's percent-encoding equivalence);
 *   - the file with CRLF line ends instead of LF, or with a UTF-8 BOM in front, gives
 *     the same answers, rules, delay and sitemaps;
 *   - the matcher agrees with a plain dynamic-programming matcher written here, on a
 *     one-rule file whose pattern and path are drawn from the input over a small
 *     alphabet (a, b, slash, star, dollar), where no percent-encoding is involved.
 */
#include "fuzz_common.h"

#include "robots_parser.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#define MAX_PATHS 8

static const char *const AGENTS[4] = {"foobot", "FooBot/2.0", "crawlstages/0.1", "a"};
static const char *const DEFAULT_PATHS[] = {
    "/", "/a", "/example/page.html", "/x.gif", "/~joe/%7e?q=1", "/a%2Fb/*$"};

typedef struct answers {
    bool allowed[MAX_PATHS];
    size_t rules, sitemaps;
    double delay;
} answers;

static void ask(const robots *r, char *const *paths, size_t npaths, answers *a)
{
    for (size_t i = 0; i < npaths; i++)
        a->allowed[i] = robots_allowed(r, paths[i]);
    a->rules = robots_rule_count(r);
    a->sitemaps = robots_sitemap_count(r);
    a->delay = robots_crawl_delay(r);
}

static void check_same(const answers *a, const answers *b, size_t npaths)
{
    for (size_t i = 0; i < npaths; i++)
        FUZZ_CHECK(a->allowed[i] == b->allowed[i]);
    FUZZ_CHECK(a->rules == b->rules && a->sitemaps == b->sitemaps);
    FUZZ_CHECK(a->delay == b->delay);
}

static bool is_unreserved(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-'
        || c == '.' || c == '_' || c == '~';
}

/* path with every unreserved character as %XX, upper and lower hex by turns. */
static char *encode_unreserved(const char *path)
{
    size_t n = strlen(path);
    char *out = malloc(3 * n + 1), *o = out;
    FUZZ_CHECK(out != NULL);
    size_t after_pct = 0; /* the two octets after a '%' stay: they may be its hex */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)path[i];
        if (c == '%')
            after_pct = 3;
        if (after_pct) {
            after_pct--;
            *o++ = (char)c;
        } else if (is_unreserved(c)) {
            o += sprintf(o, i % 2 ? "%%%02X" : "%%%02x", c);
        } else {
            *o++ = (char)c;
        }
    }
    *o = '\0';
    return out;
}

static void check_object(const robots *r, char *const *paths, size_t npaths)
{
    FUZZ_CHECK(robots_allowed(r, "/robots.txt"));
    double d = robots_crawl_delay(r);
    FUZZ_CHECK(d == -1 || (isfinite(d) && d >= 0));
    for (size_t i = 0; i < robots_sitemap_count(r); i++) {
        const char *s = robots_sitemap(r, i);
        size_t n = strlen(s);
        FUZZ_CHECK(n > 0 && !strpbrk(s, "\r\n#"));
        FUZZ_CHECK(s[0] != ' ' && s[0] != '\t' && s[n - 1] != ' ' && s[n - 1] != '\t');
    }
    FUZZ_CHECK(robots_sitemap(r, robots_sitemap_count(r)) == NULL);
    for (size_t i = 0; i < npaths; i++) {
        char *enc = encode_unreserved(paths[i]);
        FUZZ_CHECK(robots_allowed(r, enc) == robots_allowed(r, paths[i]));
        free(enc);
    }
}

/* The reference: does pattern p ('*' any run, a final '$' the end) match path s from
 * its start? match[i][j]: p[i..] matches s[j..] (to the end, or any suffix when the
 * pattern is not anchored). */
static bool reference_match(const char *p, const char *s)
{
    size_t pn = strlen(p), sn = strlen(s);
    bool anchored = pn > 0 && p[pn - 1] == '$';
    if (anchored)
        pn--;
    bool *m = calloc((pn + 1) * (sn + 1), sizeof *m);
    FUZZ_CHECK(m != NULL);
#define M(i, j) m[(i) * (sn + 1) + (j)]
    for (size_t j = 0; j <= sn; j++)
        M(pn, j) = anchored ? j == sn : true;
    for (size_t i = pn; i-- > 0;)
        for (size_t j = sn + 1; j-- > 0;) {
            if (p[i] == '*')
                M(i, j) = M(i + 1, j) || (j < sn && M(i, j + 1));
            else
                M(i, j) = j < sn && p[i] == s[j] && M(i + 1, j + 1);
        }
    bool ok = M(0, 0);
#undef M
    free(m);
    return ok;
}

static void check_matcher(const uint8_t *data, size_t size)
{
    char pattern[40], path[40];
    size_t half = size / 2, np = 1, ns = 1;
    pattern[0] = path[0] = '/';
    for (size_t i = 0; i < half && np < sizeof pattern - 1; i++)
        pattern[np++] = "ab/*$"[data[i] % 5];
    for (size_t i = half; i < size && ns < sizeof path - 1; i++)
        path[ns++] = "ab/"[data[i] % 3];
    pattern[np] = path[ns] = '\0';
    char text[80];
    int n = snprintf(text, sizeof text, "User-agent: *\nDisallow: %s\n", pattern);
    robots *r = robots_parse(text, (size_t)n, "x");
    FUZZ_CHECK(robots_allowed(r, path) == !reference_match(pattern, path));
    robots_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    const char *agent = AGENTS[data[0] & 3];
    data++, size--;

    char *paths[MAX_PATHS];
    size_t npaths = 0;
    const uint8_t *nul = memchr(data, '\0', size);
    const char *body = (const char *)data;
    size_t blen = size;
    if (nul) {
        const char *p = (const char *)data, *end = (const char *)nul;
        while (p <= end && npaths < MAX_PATHS) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
            char *s = malloc(len + 2);
            FUZZ_CHECK(s != NULL);
            s[0] = '/'; /* a path and query always starts with '/' */
            memcpy(s + 1, p, len);
            s[len + 1] = '\0';
            paths[npaths++] = s;
            p += len + 1;
        }
        body = (const char *)nul + 1;
        blen = size - (size_t)(nul - data) - 1;
    } else {
        for (; npaths < sizeof DEFAULT_PATHS / sizeof DEFAULT_PATHS[0]; npaths++) {
            paths[npaths] = strdup(DEFAULT_PATHS[npaths]);
            FUZZ_CHECK(paths[npaths] != NULL);
        }
    }

    robots *r = robots_parse(body, blen, agent);
    check_object(r, paths, npaths);
    answers a;
    ask(r, paths, npaths, &a);
    robots_free(r);

    /* CRLF for LF (when the file has no CR of its own and stays under the limit). */
    if (!memchr(body, '\r', blen) && 2 * blen < ROBOTS_MAX_BYTES) {
        char *crlf = malloc(2 * blen + 1);
        FUZZ_CHECK(crlf != NULL);
        size_t n = 0;
        for (size_t i = 0; i < blen; i++) {
            if (body[i] == '\n')
                crlf[n++] = '\r';
            crlf[n++] = body[i];
        }
        robots *r2 = robots_parse(crlf, n, agent);
        answers b;
        ask(r2, paths, npaths, &b);
        check_same(&a, &b, npaths);
        robots_free(r2);
        free(crlf);
    }
    /* A BOM in front (unless the file starts with one already). */
    if (blen + 3 <= ROBOTS_MAX_BYTES && !(blen >= 3 && memcmp(body, "\xEF\xBB\xBF", 3) == 0)) {
        char *bom = malloc(blen + 3);
        FUZZ_CHECK(bom != NULL);
        memcpy(bom, "\xEF\xBB\xBF", 3);
        if (blen)
            memcpy(bom + 3, body, blen);
        robots *r3 = robots_parse(bom, blen + 3, agent);
        answers b;
        ask(r3, paths, npaths, &b);
        check_same(&a, &b, npaths);
        robots_free(r3);
        free(bom);
    }

    check_matcher((const uint8_t *)body, blen);
    for (size_t i = 0; i < npaths; i++)
        free(paths[i]);
    return 0;
}
