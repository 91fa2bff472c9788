/* links_skip.c — see links_skip.h.
 *
 * The stream as seen by one scan is V = win (tail, then carry) followed by the new
 * bytes d. Every position of V where an end could start is tried: the few in win one
 * by one, those in d found with memchr on the ends' shared first byte. The first
 * position where an end matches whole wins; where the bytes run out before an end is
 * decided (a "partial" match, necessarily in the last SKIP_MAX_END - 1 bytes), what
 * follows is kept for the next scan. Everything else is dropped.
 */
#include "links_skip.h"

#include <string.h>

enum { NO_MATCH, MATCH, PARTIAL };

static bool same(char a, char b, bool nocase)
{
    if (nocase) {
        if (a >= 'A' && a <= 'Z')
            a = (char)(a - 'A' + 'a');
        if (b >= 'A' && b <= 'Z')
            b = (char)(b - 'A' + 'a');
    }
    return a == b;
}

void text_skip_start(text_skip *s, const char *end1, const char *end2, bool nocase, const char *fed,
                     size_t fed_len)
{
    memset(s, 0, sizeof *s);
    s->end[s->nend++] = end1;
    if (end2)
        s->end[s->nend++] = end2;
    s->nocase = nocase;
    size_t keep = fed_len < SKIP_MAX_END - 1 ? fed_len : SKIP_MAX_END - 1;
    memcpy(s->win, fed + fed_len - keep, keep);
    s->tail = keep;
}

/* Whether one end matches V at q (V = win[0, w) then d[0, n)). */
static int match_at(const text_skip *s, const char *end, size_t q, const char *d, size_t n)
{
    size_t w = s->tail + s->carry;
    for (size_t i = 0; end[i]; i++) {
        size_t at = q + i;
        if (at >= w + n)
            return PARTIAL;
        char c = at < w ? s->win[at] : d[at - w];
        if (!same(c, end[i], s->nocase))
            return NO_MATCH;
    }
    return MATCH;
}

/* The best any end does at q: MATCH over PARTIAL over NO_MATCH. */
static int try_at(const text_skip *s, size_t q, const char *d, size_t n)
{
    int best = NO_MATCH;
    for (size_t k = 0; k < s->nend && best != MATCH; k++) {
        int r = match_at(s, s->end[k], q, d, n);
        if (r == MATCH || (r == PARTIAL && best == NO_MATCH))
            best = r;
    }
    return best;
}

/* The end begins at V[q]: hand back what of win follows the tail (never given to
 * libxml2) and return the offset in d the caller goes on from. */
static size_t found_at(text_skip *s, size_t q)
{
    size_t w = s->tail + s->carry;
    s->emit_len = 0;
    if (q >= w)
        return q - w;
    size_t from = q > s->tail ? q : s->tail;
    s->emit_len = w - from;
    memcpy(s->emit, s->win + from, s->emit_len);
    return 0;
}

/* No end yet; V[q, w + n) may start one (q = w + n: none may): keep it in win. */
static void keep_from(text_skip *s, size_t q, const char *d, size_t n)
{
    size_t w = s->tail + s->carry;
    char v[2 * SKIP_MAX_END];
    size_t len = 0;
    for (size_t at = q; at < w + n; at++)
        v[len++] = at < w ? s->win[at] : d[at - w];
    size_t tail = q < s->tail ? s->tail - q : 0;
    memcpy(s->win, v, len);
    s->tail = tail;
    s->carry = len - tail;
}

size_t text_skip_scan(text_skip *s, const char *d, size_t n, bool *found)
{
    *found = false;
    size_t w = s->tail + s->carry;
    size_t partial = w + n; /* the first partial position, if any */
    for (size_t q = 0; q < w; q++) {
        int r = try_at(s, q, d, n);
        if (r == MATCH) {
            *found = true;
            return found_at(s, q);
        }
        if (r == PARTIAL && partial == w + n)
            partial = q;
    }
    char first = s->end[0][0];
    const char *p = d;
    while ((p = memchr(p, first, n - (size_t)(p - d)))) {
        size_t q = w + (size_t)(p - d);
        int r = try_at(s, q, d, n);
        if (r == MATCH) {
            *found = true;
            return found_at(s, q);
        }
        if (r == PARTIAL && partial == w + n)
            partial = q;
        p++;
    }
    keep_from(s, partial, d, n);
    return n;
}
