/* robots_parser.c — robots.txt per RFC 9309 (see robots_parser.h for what is parsed and how URLs
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
#include "robots_parser.h"

#include "alloc.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* One rule, its pattern in the owner's arena (rules of a big file cost 24 octets each
 * plus their patterns, not a malloc'd string each). */
typedef struct rule {
    uint32_t off;    /* the canonical pattern at arena + off; a '*' is the wildcard */
    uint32_t len;    /* its length ('$' is not kept) */
    uint32_t prefix; /* its octets before the first '*' (len when it has none) */
    uint32_t minlen; /* the fewest octets a path it matches has: len minus the stars */
    bool anchored;   /* ended with '$': must match to the end of the path */
    bool allow;
} rule;

/* Rules and the arena of their patterns. */
typedef struct rule_list {
    rule *v;
    size_t n, cap;
    char *arena;
    size_t alen, acap;
    double delay; /* Crawl-delay, -1 when none */
} rule_list;

struct robots {
    rule_list rules; /* the rules for us, sorted: longest first, allow first; no two alike */
    bool disallow_all;
    char *sitemaps; /* the Sitemap values, each NUL-terminated, one after the other */
    size_t sitemaps_len, sitemaps_cap;
    uint32_t *sitemap_off; /* where each starts in sitemaps */
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

/* Does the rule's pattern p match the canonical path (n octets) from its start — to
 * its end when anchored? Adds the octets it compared or scanned to *work. */
static bool pattern_match(const rule *ru, const char *p, const char *path, size_t n, size_t *work)
{
    if (n < ru->minlen) { /* too short for it, whatever the stars match */
        *work += 1;
        return false;
    }
    size_t k = 0; /* the literal prefix, octet by octet: most rules fail here */
    while (k < ru->prefix && path[k] == p[k])
        k++;
    *work += k + 1;
    if (k < ru->prefix)
        return false;
    if (ru->prefix == ru->len)
        return !ru->anchored || n == ru->len;
    size_t pos = ru->prefix;
    p += ru->prefix + 1;
    size_t plen = ru->len - ru->prefix - 1;
    /* The pieces between stars, each at its leftmost place after the one before. */
    const char *star;
    while ((star = memchr(p, '*', plen)) != NULL) {
        size_t seg = (size_t)(star - p);
        if (seg) {
            *work += n - pos;
            const char *at = memmem(path + pos, n - pos, p, seg);
            if (!at)
                return false;
            pos = (size_t)(at - path) + seg;
        }
        p = star + 1;
        plen -= seg + 1;
    }
    /* The last piece: at the end when anchored, anywhere after pos otherwise. */
    if (ru->anchored) {
        *work += plen;
        return n - pos >= plen && memcmp(path + n - plen, p, plen) == 0;
    }
    if (plen == 0)
        return true;
    *work += n - pos;
    return memmem(path + pos, n - pos, p, plen) != NULL;
}

robots_verdict robots_check(const robots *r, const char *path_and_query)
{
    robots_verdict v = {.allowed = true};
    if (!path_and_query || !path_and_query[0])
        path_and_query = "/";
    size_t n = strlen(path_and_query);
    char stackbuf[1024];
    char *path = 3 * n + 1 <= sizeof stackbuf ? stackbuf : xmalloc(3 * n + 1);
    size_t len = canonical(path_and_query, n, false, path, NULL);

    if (len == sizeof ROBOTS_PATH - 1 && memcmp(path, ROBOTS_PATH, len) == 0) {
        v.allowed = true;
    } else if (r->disallow_all) {
        v.allowed = false;
    } else {
        /* Longest first: the first rule that matches is the answer. */
        for (size_t i = 0; i < r->rules.n; i++) {
            if (v.work > ROBOTS_MAX_WORK) {
                v.allowed = false;
                v.over_budget = true;
                break;
            }
            const rule *ru = &r->rules.v[i];
            if (pattern_match(ru, r->rules.arena + ru->off, path, len, &v.work)) {
                v.allowed = ru->allow;
                break;
            }
        }
    }
    if (path != stackbuf)
        free(path);
    return v;
}

bool robots_allowed(const robots *r, const char *path_and_query)
{
    return robots_check(r, path_and_query).allowed;
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
    free(l->v);
    free(l->arena);
    l->v = NULL;
    l->arena = NULL;
    l->n = l->cap = l->alen = l->acap = 0;
}

void robots_free(robots *r)
{
    if (!r)
        return;
    rules_free(&r->rules);
    free(r->sitemaps);
    free(r->sitemap_off);
    free(r);
}

size_t robots_bytes(const robots *r)
{
    return sizeof *r + r->rules.cap * sizeof(rule) + r->rules.acap + r->sitemaps_cap
        + r->capsitemaps * sizeof(uint32_t);
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
    return i < r->nsitemaps ? r->sitemaps + r->sitemap_off[i] : NULL;
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

/* Add the rule whose canonical pattern is p (ru->len octets) to l, the pattern at the
 * end of l's arena. */
static void rule_add(rule_list *l, rule ru, const char *p)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->v = xreallocarray(l->v, l->cap, sizeof *l->v);
    }
    ru.off = (uint32_t)l->alen;
    xappend(&l->arena, &l->alen, &l->acap, p, ru.len);
    l->v[l->n++] = ru;
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
    rule ru = {.allow = allow};
    size_t len = canonical(v, n, true, buf, &ru.anchored);
    ru.len = (uint32_t)len; /* at most 3 x ROBOTS_MAX_BYTES */
    const char *star = memchr(buf, '*', len);
    ru.prefix = star ? (uint32_t)(star - buf) : ru.len;
    ru.minlen = ru.len;
    for (size_t i = ru.prefix; i < len; i++)
        ru.minlen -= buf[i] == '*';
    if (p->cur_ours)
        rule_add(&p->ours, ru, buf);
    if (p->cur_star)
        rule_add(&p->star, ru, buf);
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
        r->sitemap_off = xreallocarray(r->sitemap_off, r->capsitemaps, sizeof *r->sitemap_off);
    }
    r->sitemap_off[r->nsitemaps++] = (uint32_t)r->sitemaps_len;
    xappend(&r->sitemaps, &r->sitemaps_len, &r->sitemaps_cap, v, n);
    xappend(&r->sitemaps, &r->sitemaps_len, &r->sitemaps_cap, "", 1);
}

/* One line (without its end): "key: value # comment", or as Google's parser also
 * accepts, "key value" — two runs of non-blanks, no colon. */
static void parse_line(parser *p, const char *s, size_t n)
{
    const char *hash = memchr(s, '#', n);
    if (hash)
        n = (size_t)(hash - s);
    while (n > 0 && is_ws(s[n - 1]))
        n--;
    size_t i = 0;
    while (i < n && is_ws(s[i]))
        i++;
    const char *key = s + i;
    while (i < n && !is_ws(s[i]) && s[i] != ':')
        i++;
    size_t klen = (size_t)(s + i - key);
    while (i < n && is_ws(s[i]))
        i++;
    if (klen == 0 || i == n)
        return; /* empty, a comment, or a key alone */
    if (s[i] == ':') {
        i++;
        while (i < n && is_ws(s[i]))
            i++;
    } else if (memchr(s + i, ':', n - i) || memchr(s + i, ' ', n - i)
               || memchr(s + i, '\t', n - i)) {
        return; /* neither "key: value" nor "key value" */
    }
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

/* A rule and its pattern, while the chosen rules are sorted. */
typedef struct sort_rule {
    rule ru;
    const char *p;
} sort_rule;

/* Longest first (the '$' counts), on equal length allow first, then by pattern: rules
 * alike are then next to each other. */
static int rule_order(const void *a, const void *b)
{
    const sort_rule *x = a, *y = b;
    size_t px = x->ru.len + x->ru.anchored, py = y->ru.len + y->ru.anchored;
    if (px != py)
        return px > py ? -1 : 1;
    if (x->ru.allow != y->ru.allow)
        return x->ru.allow ? -1 : 1;
    if (x->ru.anchored != y->ru.anchored)
        return x->ru.anchored ? -1 : 1;
    return memcmp(x->p, y->p, x->ru.len);
}

/* l's rules sorted, each once, in an arena of their own just big enough: a file that
 * says one rule 46,000 times keeps one. */
static void rules_compact(rule_list *l)
{
    sort_rule *s = xreallocarray(NULL, l->n ? l->n : 1, sizeof *s);
    for (size_t i = 0; i < l->n; i++)
        s[i] = (sort_rule){l->v[i], l->arena ? l->arena + l->v[i].off : ""};
    if (l->n > 1) /* qsort(NULL, 0, ...) is undefined */
        qsort(s, l->n, sizeof *s, rule_order);
    size_t n = 0, bytes = 0;
    for (size_t i = 0; i < l->n; i++)
        if (n == 0 || rule_order(&s[n - 1], &s[i]) != 0) {
            s[n++] = s[i];
            bytes += s[i].ru.len;
        }
    rule_list out = {.delay = l->delay, .n = n, .cap = n, .acap = bytes};
    out.v = n ? xreallocarray(NULL, n, sizeof *out.v) : NULL;
    out.arena = xmalloc(bytes ? bytes : 1); /* never NULL: arena + 0 is then defined */
    for (size_t i = 0; i < n; i++) {
        out.v[i] = s[i].ru;
        out.v[i].off = (uint32_t)out.alen;
        memcpy(out.arena + out.alen, s[i].p, s[i].ru.len);
        out.alen += s[i].ru.len;
    }
    free(s);
    rules_free(l);
    *l = out;
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
        rules_compact(chosen);
        p.r->rules = *chosen;
        *chosen = (rule_list){0};
    }
    rules_free(&p.ours);
    rules_free(&p.star);
    robots *r = p.r;
    if (r->sitemaps_cap > r->sitemaps_len) { /* no slack kept for the crawl */
        r->sitemaps = xrealloc(r->sitemaps, r->sitemaps_len);
        r->sitemaps_cap = r->sitemaps_len;
    }
    if (r->capsitemaps > r->nsitemaps) {
        r->sitemap_off = xreallocarray(r->sitemap_off, r->nsitemaps, sizeof *r->sitemap_off);
        r->capsitemaps = r->nsitemaps;
    }
    return r;
}
