/* html_open.c — the open elements of an HTML page, as far as their number goes
 * (html_open.h): a stack of names (hashed), with the implied ends of the tree
 * builder's "in body" and table rules that keep ordinary pages shallow.
 */
#include "html_open.h"

#include "alloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The elements the rules name; everything else is E_OTHER, told apart by its hash. */
enum kind {
    E_OTHER,
    E_A,
    E_P,
    E_LI,
    E_DD,
    E_DT,
    E_OPTION,
    E_OPTGROUP,
    E_TD,
    E_TH,
    E_TR,
    E_TSECTION, /* thead, tbody, tfoot */
    E_HEADING,  /* h1 to h6 */
    E_LIST,     /* ul, ol, menu */
    E_DL,
    E_TABLE,
    E_SCOPE, /* applet, caption, marquee, object, template, button: end a search */
};

typedef struct entry {
    uint64_t hash;
    enum kind kind;
} entry;

struct html_open {
    entry *stack;
    size_t depth, max;
};

static uint64_t hash_of(const char *s)
{
    uint64_t h = 1469598103934665603u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

/* What the rules know of an element: its kind, whether it opens nothing (void, or
 * html, head, body) and whether its start tag closes an open p ("in body"). */
enum { OPENS_NOTHING = 1, CLOSES_P = 2 };

typedef struct known {
    const char *name;
    enum kind kind;
    int flags;
} known;

/* Sorted by name (strcmp), for bsearch: one lookup per tag. */
static const known KNOWN[] = {
    {"a", E_A, 0},
    {"address", E_OTHER, CLOSES_P},
    {"applet", E_SCOPE, 0},
    {"area", E_OTHER, OPENS_NOTHING},
    {"article", E_OTHER, CLOSES_P},
    {"aside", E_OTHER, CLOSES_P},
    {"base", E_OTHER, OPENS_NOTHING},
    {"basefont", E_OTHER, OPENS_NOTHING},
    {"bgsound", E_OTHER, OPENS_NOTHING},
    {"blockquote", E_OTHER, CLOSES_P},
    {"body", E_OTHER, OPENS_NOTHING},
    {"br", E_OTHER, OPENS_NOTHING},
    {"button", E_SCOPE, 0},
    {"caption", E_SCOPE, 0},
    {"center", E_OTHER, CLOSES_P},
    {"col", E_OTHER, OPENS_NOTHING},
    {"dd", E_DD, CLOSES_P},
    {"details", E_OTHER, CLOSES_P},
    {"dialog", E_OTHER, CLOSES_P},
    {"dir", E_OTHER, CLOSES_P},
    {"div", E_OTHER, CLOSES_P},
    {"dl", E_DL, CLOSES_P},
    {"dt", E_DT, CLOSES_P},
    {"embed", E_OTHER, OPENS_NOTHING},
    {"fieldset", E_OTHER, CLOSES_P},
    {"figcaption", E_OTHER, CLOSES_P},
    {"figure", E_OTHER, CLOSES_P},
    {"footer", E_OTHER, CLOSES_P},
    {"form", E_OTHER, CLOSES_P},
    {"frame", E_OTHER, OPENS_NOTHING},
    {"h1", E_HEADING, CLOSES_P},
    {"h2", E_HEADING, CLOSES_P},
    {"h3", E_HEADING, CLOSES_P},
    {"h4", E_HEADING, CLOSES_P},
    {"h5", E_HEADING, CLOSES_P},
    {"h6", E_HEADING, CLOSES_P},
    {"head", E_OTHER, OPENS_NOTHING},
    {"header", E_OTHER, CLOSES_P},
    {"hgroup", E_OTHER, CLOSES_P},
    {"hr", E_OTHER, OPENS_NOTHING | CLOSES_P},
    {"html", E_OTHER, OPENS_NOTHING},
    {"img", E_OTHER, OPENS_NOTHING},
    {"input", E_OTHER, OPENS_NOTHING},
    {"keygen", E_OTHER, OPENS_NOTHING},
    {"li", E_LI, CLOSES_P},
    {"link", E_OTHER, OPENS_NOTHING},
    {"listing", E_OTHER, CLOSES_P},
    {"main", E_OTHER, CLOSES_P},
    {"marquee", E_SCOPE, 0},
    {"menu", E_LIST, CLOSES_P},
    {"meta", E_OTHER, OPENS_NOTHING},
    {"nav", E_OTHER, CLOSES_P},
    {"object", E_SCOPE, 0},
    {"ol", E_LIST, CLOSES_P},
    {"optgroup", E_OPTGROUP, 0},
    {"option", E_OPTION, 0},
    {"p", E_P, CLOSES_P},
    {"param", E_OTHER, OPENS_NOTHING},
    {"plaintext", E_OTHER, CLOSES_P},
    {"pre", E_OTHER, CLOSES_P},
    {"search", E_OTHER, CLOSES_P},
    {"section", E_OTHER, CLOSES_P},
    {"source", E_OTHER, OPENS_NOTHING},
    {"summary", E_OTHER, CLOSES_P},
    {"table", E_TABLE, CLOSES_P},
    {"tbody", E_TSECTION, 0},
    {"td", E_TD, 0},
    {"template", E_SCOPE, 0},
    {"tfoot", E_TSECTION, 0},
    {"th", E_TH, 0},
    {"thead", E_TSECTION, 0},
    {"tr", E_TR, 0},
    {"track", E_OTHER, OPENS_NOTHING},
    {"ul", E_LIST, CLOSES_P},
    {"wbr", E_OTHER, OPENS_NOTHING},
    {"xmp", E_OTHER, CLOSES_P},
};

static int known_cmp(const void *key, const void *elem)
{
    return strcmp(key, ((const known *)elem)->name);
}

static known lookup(const char *name)
{
    const known *k =
        bsearch(name, KNOWN, sizeof KNOWN / sizeof KNOWN[0], sizeof KNOWN[0], known_cmp);
    if (k)
        return *k;
    known other = {name, E_OTHER, 0};
    return other;
}

html_open *html_open_new(size_t max_depth)
{
    html_open *o = xcalloc(1, sizeof *o);
    o->max = max_depth + 1;
    o->stack = xcalloc(o->max, sizeof *o->stack);
    return o;
}

void html_open_free(html_open *o)
{
    if (!o)
        return;
    free(o->stack);
    free(o);
}

size_t html_open_depth(const html_open *o)
{
    return o->depth;
}

/* Closes the nearest open element of one of the kinds want[0..n) above the nearest
 * one of a kind in stop[0..m) (E_TABLE and E_SCOPE always stop the search): pops it
 * and all above. Adds the elements looked at to *work. */
static void close_nearest(html_open *o, const enum kind *want, size_t n, const enum kind *stop,
                          size_t m, size_t *work)
{
    for (size_t i = o->depth; i-- > 0;) {
        enum kind k = o->stack[i].kind;
        ++*work;
        for (size_t j = 0; j < n; j++)
            if (k == want[j]) {
                o->depth = i;
                return;
            }
        if (k == E_TABLE || k == E_SCOPE)
            return;
        for (size_t j = 0; j < m; j++)
            if (k == stop[j])
                return;
    }
}

/* What a start tag of kind k implies closed. */
static void implied_ends(html_open *o, enum kind k, bool closes_p, size_t *work)
{
    static const enum kind p[] = {E_P}, li[] = {E_LI}, ddt[] = {E_DD, E_DT}, list[] = {E_LIST},
                           dl[] = {E_DL}, cell[] = {E_TD, E_TH}, row[] = {E_TR},
                           sect[] = {E_TSECTION}, a[] = {E_A};
    if (closes_p)
        close_nearest(o, p, 1, NULL, 0, work);
    if (k == E_LI)
        close_nearest(o, li, 1, list, 1, work);
    else if (k == E_DD || k == E_DT)
        close_nearest(o, ddt, 2, dl, 1, work);
    else if (k == E_TD || k == E_TH)
        close_nearest(o, cell, 2, row, 1, work);
    else if (k == E_TR)
        close_nearest(o, row, 1, sect, 1, work);
    else if (k == E_TSECTION)
        close_nearest(o, sect, 1, NULL, 0, work);
    else if (k == E_A)
        close_nearest(o, a, 1, NULL, 0, work);
    else if (k == E_HEADING && o->depth > 0 && o->stack[o->depth - 1].kind == E_HEADING)
        o->depth--;
    else if ((k == E_OPTION || k == E_OPTGROUP) && o->depth > 0
             && o->stack[o->depth - 1].kind == E_OPTION)
        o->depth--;
    if (k == E_OPTGROUP && o->depth > 0 && o->stack[o->depth - 1].kind == E_OPTGROUP)
        o->depth--;
}

size_t html_open_start(html_open *o, const char *name, bool self_closing)
{
    size_t work = 0;
    known k = lookup(name);
    implied_ends(o, k.kind, k.flags & CLOSES_P, &work);
    if (self_closing || (k.flags & OPENS_NOTHING))
        return work;
    if (o->depth < o->max) {
        o->stack[o->depth].hash = hash_of(name);
        o->stack[o->depth].kind = k.kind;
    }
    o->depth++;
    return work;
}

size_t html_open_end(html_open *o, const char *name)
{
    uint64_t h = hash_of(name);
    size_t top = o->depth < o->max ? o->depth : o->max;
    for (size_t i = top; i-- > 0;)
        if (o->stack[i].hash == h) {
            o->depth = i;
            return top - i;
        }
    return top + HTML_OPEN_MISS_COST;
}
