/* gen.c — generated pages and synthetic bodies (see gen.h).
 *
 * A generated page is a pure function of (seed, page number): a small PRNG seeded
 * from both picks the extra link targets, the form of each href (absolute, root-
 * relative, relative, with dot segments, with a fragment), the tag spelling, and the
 * filler words. Page i always links to 2i+1 and 2i+2 (when they exist), so the pages
 * form a binary tree rooted at "/" and every page is reachable. */
#include "gen.h"

#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t splitmix(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static int parse_num(const char *s, size_t n, long long lo, long long hi, long long *out)
{
    char tmp[32];
    if (n == 0 || n >= sizeof tmp)
        return -1;
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    for (size_t i = 0; i < n; i++)
        if (tmp[i] < '0' || tmp[i] > '9')
            return -1;
    errno = 0;
    unsigned long long v = strtoull(tmp, NULL, 10);
    if (errno || v < (unsigned long long)lo || v > (unsigned long long)hi)
        return -1;
    *out = (long long)v;
    return 0;
}

int gen_parse_spec(const char *spec, gen_spec *out, char *err, size_t errlen)
{
    gen_spec g = {.pages = 100, .links = 10, .size = 2000, .seed = 1};
    const char *p = spec;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', n);
        if (!eq) {
            snprintf(err, errlen, "bad --generate item '%.*s' (want key=value)", (int)n, p);
            return -1;
        }
        size_t klen = (size_t)(eq - p), vlen = n - klen - 1;
        long long v;
        int bad = 0;
        if (klen == 5 && !memcmp(p, "pages", 5))
            bad = parse_num(eq + 1, vlen, 1, GEN_MAX_PAGES, &v) || ((g.pages = (long)v), 0);
        else if (klen == 5 && !memcmp(p, "links", 5))
            bad = parse_num(eq + 1, vlen, 0, GEN_MAX_LINKS, &v) || ((g.links = (long)v), 0);
        else if (klen == 4 && !memcmp(p, "size", 4))
            bad = parse_num(eq + 1, vlen, 0, GEN_MAX_SIZE, &v) || ((g.size = (long)v), 0);
        else if (klen == 4 && !memcmp(p, "seed", 4))
            bad =
                parse_num(eq + 1, vlen, 0, INT64_MAX, &v) || ((g.seed = (unsigned long long)v), 0);
        else if (klen == 10 && !memcmp(p, "validators", 10))
            bad = parse_num(eq + 1, vlen, 0, 1, &v) || ((g.validators = (long)v), 0);
        else if (klen == 8 && !memcmp(p, "csschain", 8))
            bad = parse_num(eq + 1, vlen, 0, 1, &v) || ((g.csschain = (long)v), 0);
        else {
            snprintf(err, errlen,
                     "unknown --generate key '%.*s' (pages, links, size, seed, "
                     "validators, csschain)",
                     (int)klen, p);
            return -1;
        }
        if (bad) {
            snprintf(err, errlen, "bad --generate value '%.*s'", (int)n, p);
            return -1;
        }
        p = end ? end + 1 : p + n;
    }
    *out = g;
    return 0;
}

long gen_page_index(const gen_spec *g, const char *path)
{
    if (strcmp(path, "/") == 0)
        return 0;
    if (strncmp(path, "/p/", 3) != 0)
        return -1;
    const char *d = path + 3;
    if (*d < '1' || *d > '9' || strlen(d) > 18) /* no leading zero, no "0" */
        return -1;
    long long v = 0;
    for (; *d; d++) {
        if (*d < '0' || *d > '9')
            return -1;
        v = v * 10 + (*d - '0');
    }
    return v < g->pages ? (long)v : -1;
}

long gen_css_index(const gen_spec *g, const char *path)
{
    if (!g->csschain || strncmp(path, "/css/", 5) != 0)
        return -1;
    const char *d = path + 5;
    size_t n = strspn(d, "0123456789");
    if (n == 0 || n > 18 || (n > 1 && *d == '0') || strcmp(d + n, ".css") != 0)
        return -1;
    return strtol(d, NULL, 10);
}

char *gen_render_css(long k, size_t *len)
{
    sbuf b = {0};
    sbuf_printf(&b, "@import url(\"/css/%ld.css\");\nbody { margin: %ldpx; }\n", k + 1, k % 100);
    return sbuf_take(&b, len);
}

/* The href for a link from page `from` to page `to`, in the form chosen by `form`. */
static void add_href(sbuf *b, const char *base, long from, long to, unsigned form)
{
    if (to == 0) {
        switch (form % 3) {
        case 0: sbuf_printf(b, "%s/", base); break;
        case 1: sbuf_adds(b, "/"); break;
        default: sbuf_adds(b, from == 0 ? "./" : "../"); break;
        }
        return;
    }
    switch (form % 5) {
    case 0: sbuf_printf(b, "%s/p/%ld", base, to); break;
    case 1: sbuf_printf(b, "/p/%ld", to); break;
    case 2: sbuf_printf(b, from == 0 ? "p/%ld" : "%ld", to); break;
    case 3: sbuf_printf(b, from == 0 ? "./p/%ld" : "./%ld", to); break;
    default: sbuf_printf(b, "../p/%ld", to); break;
    }
}

static void add_link(sbuf *b, const char *base, long from, long to, uint64_t r)
{
    static const char *const open[] = {"<a href=\"", "<A HREF=\"", "<a class=\"nav\" href='",
                                       "<a href="};
    static const char *const close[] = {"\">", "\">", "'>", ">"};
    unsigned style = (unsigned)(r >> 8) % 4;
    sbuf_adds(b, "<li>");
    sbuf_adds(b, open[style]);
    add_href(b, base, from, to, (unsigned)(r & 0xff));
    if ((r >> 16) % 4 == 0)
        sbuf_printf(b, "#s%u", (unsigned)((r >> 20) % 10));
    sbuf_adds(b, close[style]);
    sbuf_printf(b, "page %ld%s</li>\n", to, style == 1 ? "</A>" : "</a>");
}

char *gen_render(const gen_spec *g, const char *base, long i, size_t *len)
{
    static const char *const words[] = {
        "lorem",    "ipsum",     "dolor",    "sit",    "amet",  "crawler", "event",
        "loop",     "socket",    "callback", "future", "task",  "queue",   "worker",
        "selector", "coroutine", "yield",    "fetch",  "parse", "link",    "page",
        "site",     "byte",      "stream",   "timer",  "ready"};
    const size_t nwords = sizeof words / sizeof words[0];
    uint64_t st = g->seed * 0x2545F4914F6CDD1DULL ^ (uint64_t)i;
    sbuf b = {0};
    sbuf_reserve(&b, (size_t)g->size + 256);
    sbuf_printf(&b,
                "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
                "<title>Page %ld</title>%s</head>\n<body>\n<h1>Page %ld</h1>\n<ul>\n",
                i, g->csschain ? "<link rel=\"stylesheet\" href=\"/css/0.css\">" : "", i);
    long count = 0, prev = -1;
    for (long k = 1; k <= 2; k++) { /* the tree links: every page is reachable */
        long t = 2 * i + k;
        if (t < g->pages) {
            add_link(&b, base, i, t, splitmix(&st));
            count++;
            prev = t;
        }
    }
    if (count < g->links && i + 1 < g->pages) {
        add_link(&b, base, i, i + 1, splitmix(&st));
        count++;
        prev = i + 1;
    }
    for (; count < g->links; count++) {
        uint64_t r = splitmix(&st);
        long t = (r % 8 == 0 && prev >= 0) ? prev : (long)((r >> 3) % (uint64_t)g->pages);
        add_link(&b, base, i, t, splitmix(&st));
        prev = t;
    }
    sbuf_adds(&b, "</ul>\n<p>");
    const char *tail = "</p>\n</body></html>\n";
    size_t target = (size_t)g->size > strlen(tail) ? (size_t)g->size - strlen(tail) : 0;
    size_t col = 0;
    while (b.len < target) {
        const char *w = words[splitmix(&st) % nwords];
        sbuf_adds(&b, w);
        col += strlen(w) + 1;
        sbuf_adds(&b, col > 72 ? "\n" : " ");
        if (col > 72)
            col = 0;
    }
    sbuf_adds(&b, tail);
    return sbuf_take(&b, len);
}

void gen_append_links(sbuf *b, const char *prefix, long n)
{
    for (long k = 1; k <= n; k++)
        sbuf_printf(b, "<a href=\"%s%ld\">link %ld</a>\n", prefix, k, k);
}

void gen_append_nest(sbuf *b, long n)
{
    for (long k = 0; k < n; k++)
        sbuf_add(b, "<div>", 5);
    sbuf_adds(b, "deep");
    for (long k = 0; k < n; k++)
        sbuf_add(b, "</div>", 6);
    sbuf_adds(b, "\n");
}

#define FILLER_SPAN 65536

const char *gen_fill(gen_fill_kind kind, uint64_t offset, size_t *avail)
{
    static const char *const lines[] = {
        "<p>filler filler filler filler filler filler filler filler.</p>\n",
        "text without markup: words, words, words and still more words!!\n", NULL, /* NUL bytes */
    };
    static char bufs[3][FILLER_SPAN + GEN_FILL_PERIOD];
    static bool ready[3];
    _Static_assert(sizeof "text without markup: words, words, words and still more words!!\n"
                       == GEN_FILL_PERIOD + 1,
                   "one period");
    if (!ready[kind]) {
        for (size_t k = 0; lines[kind] && k < sizeof bufs[kind]; k++)
            bufs[kind][k] = lines[kind][k % GEN_FILL_PERIOD];
        ready[kind] = true;
    }
    *avail = FILLER_SPAN;
    return bufs[kind] + offset % GEN_FILL_PERIOD;
}

const char *gen_filler(uint64_t offset, size_t *avail)
{
    return gen_fill(FILL_HTML, offset, avail);
}
