/* robots.c — robots.txt per RFC 9309 (see robots.h for what is parsed and how URLs
 * match).
 *
 * Parsing keeps only what can apply to us: the rules of the groups naming our product
 * token and those of the `*` groups, in two lists; at the end one list is chosen.
 * Every pattern is stored in a canonical percent-encoding (canonical() below), and so
 * is the path asked about, so that equivalent spellings compare equal octet by octet.
 * The chosen rules are sorted longest first, allow before disallow on equal length:
 * the first rule that matches is then the RFC's answer.
 *
 * Matching a pattern is linear in the path: the pieces between `*`s are found left to
 * right with memmem (glibc's is the two-way algorithm), the first piece anchored at
 * the start and, with `$`, the last at the end. Taking the leftmost place for each
 * piece never loses a match, so no backtracking is needed — a hostile file full of
 * stars cannot make one question cost path x pattern.
 */
#include "robots.h"

#include "alloc.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct rule {
    char *pattern;   /* canonical; a '*' in it is the wildcard; '$' is not kept */
    size_t len;      /* strlen(pattern) */
    size_t priority; /* its length as written canonically, with the '$' */
    bool anchored;   /* ended with '$': must match to the end of the path */
    bool allow;
} rule;

typedef struct rule_list {
    rule *v;
    size_t n, cap;
    double delay; /* Crawl-delay, -1 when none */
} rule_list;

struct robots {
    rule_list rules; /* the rules for us, sorted: longest first, allow first */
    bool disallow_all;
    char **sitemaps;
    size_t nsitemaps, capsitemaps;
};

static const char ROBOTS_PATH[] = "/robots.txt";

/* ---- canonical percent-encoding ------------------------------------------------ */

static int hexval(unsigned char c)
{
    if (!isxdigit(c))
        return -1;
    return isdigit(c) ? c - '0' : (c | 0x20) - 'a' + 10;
}

static bool is_alpha(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* RFC 3986's unreserved characters: their escapes are the characters themselves. */
static bool is_unreserved(unsigned char c)
{
    return is_alpha(c) || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
}

static char *put_escape(char *o, unsigned char b)
{
    static const char hex[] = "0123456789ABCDEF";
    *o++ = '%';
    *o++ = hex[b >> 4];
    *o++ = hex[b & 15];
    return o;
}

/* Writes the canonical form of the n octets at s to out (room for 3n octets) and
 * returns its length:
 *   - %XX (either case of hex) of an unreserved character: the character;
 *   - %XX of anything else: %XX in upper case;
 *   - a '%' not followed by two hex digits: %25;
 *   - octets outside 0x21..0x7E: their escape;
 *   - '*' and '$': in a path, their escapes %2A and %24 (the literal characters); in a
 *     pattern, '*' stays (the wildcard), a '$' at the very end is dropped and sets
 *     *anchored, a '$' anywhere else is %24;
 *   - anything else as it is. */
static size_t canonical(const char *s, size_t n, bool pattern, char *out, bool *anchored)
{
    char *o = out;
    if (anchored)
        *anchored = false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '%') {
            int hi = i + 2 < n ? hexval((unsigned char)s[i + 1]) : -1;
            int lo = i + 2 < n ? hexval((unsigned char)s[i + 2]) : -1;
            if (hi < 0 || lo < 0) {
                o = put_escape(o, '%');
                continue;
            }
            unsigned char b = (unsigned char)(hi << 4 | lo);
            i += 2;
            if (is_unreserved(b))
                *o++ = (char)b;
            else
                o = put_escape(o, b);
        } else if (c == '*' && pattern) {
            *o++ = '*';
        } else if (c == '$' && pattern && i == n - 1) {
            *anchored = true;
        } else if (c <= 0x20 || c >= 0x7F || c == '*' || c == '$') {
            o = put_escape(o, c);
        } else {
            *o++ = (char)c;
        }
    }
    *o = '\0';
    return (size_t)(o - out);
}

/* ---- matching ------------------------------------------------------------------ */

/* Does the canonical pattern p (plen octets, '*' wildcards) match the canonical path
 * (n octets) from its start — to its end when anchored? */
static bool pattern_match(const char *p, size_t plen, bool anchored, const char *path, size_t n)
{
    const char *star = memchr(p, '*', plen);
    if (!star) {
        if (anchored)
            return n == plen && memcmp(path, p, plen) == 0;
        return n >= plen && memcmp(path, p, plen) == 0;
    }
    size_t seg = (size_t)(star - p);
    if (n < seg || memcmp(path, p, seg) != 0)
        return false;
    size_t pos = seg;
    p = star + 1;
    plen -= seg + 1;
    /* The pieces between stars, each at its leftmost place after the one before. */
    while ((star = memchr(p, '*', plen)) != NULL) {
        seg = (size_t)(star - p);
        if (seg) {
            const char *at = memmem(path + pos, n - pos, p, seg);
            if (!at)
                return false;
            pos = (size_t)(at - path) + seg;
        }
        p = star + 1;
        plen -= seg + 1;
    }
    /* The last piece: at the end when anchored, anywhere after pos otherwise. */
    if (anchored)
        return n - pos >= plen && memcmp(path + n - plen, p, plen) == 0;
    return plen == 0 || memmem(path + pos, n - pos, p, plen) != NULL;
}

bool robots_allowed(const robots *r, const char *path_and_query)
{
    if (!path_and_query || !path_and_query[0])
        path_and_query = "/";
    size_t n = strlen(path_and_query);
    char stackbuf[1024];
    char *path = 3 * n + 1 <= sizeof stackbuf ? stackbuf : xmalloc(3 * n + 1);
    size_t len = canonical(path_and_query, n, false, path, NULL);

    bool allowed = true;
    if (len == sizeof ROBOTS_PATH - 1 && memcmp(path, ROBOTS_PATH, len) == 0)
        allowed = true;
    else if (r->disallow_all)
        allowed = false;
    else
        for (size_t i = 0; i < r->rules.n; i++) {
            const rule *ru = &r->rules.v[i];
            if (pattern_match(ru->pattern, ru->len, ru->anchored, path, len)) {
                allowed = ru->allow;
                break;
            }
        }
    if (path != stackbuf)
        free(path);
    return allowed;
}

/* ---- the object ---------------------------------------------------------------- */

static robots *robots_new(void)
{
    robots *r = xcalloc(1, sizeof *r);
    r->rules.delay = -1;
    return r;
}

robots *robots_allow_all(void)
{
    return robots_new();
}

robots *robots_disallow_all(void)
{
    robots *r = robots_new();
    r->disallow_all = true;
    return r;
}

static void rules_free(rule_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i].pattern);
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

void robots_free(robots *r)
{
    if (!r)
        return;
    rules_free(&r->rules);
    for (size_t i = 0; i < r->nsitemaps; i++)
        free(r->sitemaps[i]);
    free(r->sitemaps);
    free(r);
}

double robots_crawl_delay(const robots *r)
{
    return r->rules.delay;
}

size_t robots_sitemap_count(const robots *r)
{
    return r->nsitemaps;
}

const char *robots_sitemap(const robots *r, size_t i)
{
    return i < r->nsitemaps ? r->sitemaps[i] : NULL;
}

size_t robots_rule_count(const robots *r)
{
    return r->rules.n;
}

/* ---- parsing ------------------------------------------------------------------- */

typedef struct parser {
    const char *token; /* our product token (not NUL-terminated) */
    size_t token_len;
    bool in_agents;          /* user-agent lines seen and no rule since: one group */
    bool cur_ours, cur_star; /* the current group names us / names '*' */
    bool any_ours, any_star; /* some group did */
    rule_list ours, star;
    robots *r;
} parser;

static void rule_add(rule_list *l, const rule *ru)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->v = xreallocarray(l->v, l->cap, sizeof *l->v);
    }
    l->v[l->n] = *ru;
    l->v[l->n].pattern = xmemdup(ru->pattern, ru->len + 1);
    l->n++;
}

/* The length of the leading run of product-token characters: letters, '_', '-'. */
static size_t token_span(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && (is_alpha((unsigned char)s[i]) || s[i] == '_' || s[i] == '-'))
        i++;
    return i;
}

static bool key_is(const char *key, size_t n, const char *name)
{
    return strlen(name) == n && strncasecmp(key, name, n) == 0;
}

static void on_user_agent(parser *p, const char *v, size_t n)
{
    if (!p->in_agents) { /* the first user-agent line of a new group */
        p->cur_ours = p->cur_star = false;
        p->in_agents = true;
    }
    size_t t = token_span(v, n);
    if (t == 0 && n > 0 && v[0] == '*') {
        p->cur_star = p->any_star = true;
    } else if (t > 0 && t == p->token_len && strncasecmp(v, p->token, t) == 0) {
        p->cur_ours = p->any_ours = true;
    }
}

static void on_rule(parser *p, bool allow, const char *v, size_t n)
{
    p->in_agents = false;
    if (n == 0 || !(p->cur_ours || p->cur_star)) /* an empty pattern matches nothing */
        return;
    char stackbuf[1024];
    char *buf = 3 * n + 1 <= sizeof stackbuf ? stackbuf : xmalloc(3 * n + 1);
    rule ru = {.pattern = buf, .allow = allow};
    ru.len = canonical(v, n, true, buf, &ru.anchored);
    ru.priority = ru.len + ru.anchored;
    if (p->cur_ours)
        rule_add(&p->ours, &ru);
    if (p->cur_star)
        rule_add(&p->star, &ru);
    if (buf != stackbuf)
        free(buf);
}

/* A Crawl-delay value: digits, optionally a '.' and more digits; -1 if not that, or
 * too big for a double. */
static double parse_delay(const char *v, size_t n)
{
    double mant = 0, div = 1;
    bool digits = false, point = false;
    for (size_t i = 0; i < n; i++) {
        if (v[i] >= '0' && v[i] <= '9') {
            digits = true;
            mant = mant * 10 + (v[i] - '0');
            if (point)
                div *= 10;
        } else if (v[i] == '.' && !point) {
            point = true;
        } else {
            return -1;
        }
    }
    double d = digits ? mant / div : -1;
    return isfinite(d) ? d : -1; /* hundreds of digits: inf, or inf / inf */
}

static void on_crawl_delay(parser *p, const char *v, size_t n)
{
    double d = parse_delay(v, n);
    if (d < 0)
        return;
    if (p->cur_ours && p->ours.delay < 0)
        p->ours.delay = d;
    if (p->cur_star && p->star.delay < 0)
        p->star.delay = d;
}

static bool is_ws(char c)
{
    return c == ' ' || c == '\t';
}

static void on_sitemap(parser *p, const char *v, size_t n)
{
    robots *r = p->r;
    const char *nul = memchr(v, '\0', n); /* the value a C string can hold */
    if (nul)
        n = (size_t)(nul - v);
    while (n > 0 && is_ws(v[n - 1]))
        n--;
    if (n == 0)
        return;
    if (r->nsitemaps == r->capsitemaps) {
        r->capsitemaps = r->capsitemaps ? 2 * r->capsitemaps : 4;
        r->sitemaps = xreallocarray(r->sitemaps, r->capsitemaps, sizeof *r->sitemaps);
    }
    r->sitemaps[r->nsitemaps++] = xstrndup(v, n);
}

/* One line (without its end): "key: value # comment". */
static void parse_line(parser *p, const char *s, size_t n)
{
    const char *hash = memchr(s, '#', n);
    if (hash)
        n = (size_t)(hash - s);
    size_t i = 0;
    while (i < n && is_ws(s[i]))
        i++;
    const char *key = s + i;
    while (i < n && !is_ws(s[i]) && s[i] != ':')
        i++;
    size_t klen = (size_t)(s + i - key);
    while (i < n && is_ws(s[i]))
        i++;
    if (klen == 0 || i == n || s[i] != ':')
        return; /* empty, a comment, or not "key: value" */
    i++;
    while (i < n && is_ws(s[i]))
        i++;
    while (n > i && is_ws(s[n - 1]))
        n--;
    const char *v = s + i;
    size_t vlen = n - i;

    if (key_is(key, klen, "user-agent"))
        on_user_agent(p, v, vlen);
    else if (key_is(key, klen, "allow"))
        on_rule(p, true, v, vlen);
    else if (key_is(key, klen, "disallow"))
        on_rule(p, false, v, vlen);
    else if (key_is(key, klen, "crawl-delay"))
        on_crawl_delay(p, v, vlen);
    else if (key_is(key, klen, "sitemap"))
        on_sitemap(p, v, vlen);
}

/* Longest first; on equal length allow first (rules equal in both give the same
 * answer, so their order does not matter). */
static int rule_order(const void *a, const void *b)
{
    const rule *x = a, *y = b;
    if (x->priority != y->priority)
        return x->priority > y->priority ? -1 : 1;
    if (x->allow != y->allow)
        return x->allow ? -1 : 1;
    return 0;
}

robots *robots_parse(const char *data, size_t n, const char *agent)
{
    parser p = {.token = agent ? agent : ""};
    p.token_len = token_span(p.token, strlen(p.token));
    p.ours.delay = p.star.delay = -1;
    p.r = robots_new();

    bool cut = n > ROBOTS_MAX_BYTES;
    if (cut)
        n = ROBOTS_MAX_BYTES;
    size_t i = 0;
    if (n >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0)
        i = 3;
    while (i < n) {
        size_t start = i;
        while (i < n && data[i] != '\n' && data[i] != '\r')
            i++;
        if (i == n && cut)
            break; /* the line the limit cut: its end is not known */
        parse_line(&p, data + start, i - start);
        if (i < n && data[i] == '\r' && i + 1 < n && data[i + 1] == '\n')
            i++;
        i++;
    }

    rule_list *chosen = p.any_ours ? &p.ours : p.any_star ? &p.star : NULL;
    if (chosen) {
        p.r->rules = *chosen;
        *chosen = (rule_list){0};
        if (p.r->rules.n > 1) /* qsort(NULL, 0, ...) is undefined */
            qsort(p.r->rules.v, p.r->rules.n, sizeof(rule), rule_order);
    }
    rules_free(&p.ours);
    rules_free(&p.star);
    return p.r;
}
