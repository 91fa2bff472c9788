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

static bool in(const char *name, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(name, *list) == 0)
            return true;
    return false;
}

static enum kind kind_of(const char *name)
{
    static const struct {
        const char *name;
        enum kind kind;
    } kinds[] = {
        {"a", E_A},
        {"p", E_P},
        {"li", E_LI},
        {"dd", E_DD},
        {"dt", E_DT},
        {"option", E_OPTION},
        {"optgroup", E_OPTGROUP},
        {"td", E_TD},
        {"th", E_TH},
        {"tr", E_TR},
        {"thead", E_TSECTION},
        {"tbody", E_TSECTION},
        {"tfoot", E_TSECTION},
        {"ul", E_LIST},
        {"ol", E_LIST},
        {"menu", E_LIST},
        {"dl", E_DL},
        {"table", E_TABLE},
        {"applet", E_SCOPE},
        {"caption", E_SCOPE},
        {"marquee", E_SCOPE},
        {"object", E_SCOPE},
        {"template", E_SCOPE},
        {"button", E_SCOPE},
    };
    if (name[0] == 'h' && name[1] >= '1' && name[1] <= '6' && !name[2])
        return E_HEADING;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(name, kinds[i].name) == 0)
            return kinds[i].kind;
    return E_OTHER;
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

/* The start tags that close an open p (the standard's list, "in body"). */
static bool closes_p(const char *name, enum kind k)
{
    static const char *const blocks[] = {
        "address", "article", "aside",    "blockquote", "center", "details", "dialog",  "dir",
        "div",     "dl",      "fieldset", "figcaption", "figure", "footer",  "header",  "hgroup",
        "main",    "menu",    "nav",      "ol",         "search", "section", "summary", "ul",
        "pre",     "listing", "form",     "plaintext",  "table",  "hr",      "xmp",     NULL,
    };
    return k == E_P || k == E_HEADING || k == E_LI || k == E_DD || k == E_DT || in(name, blocks);
}

/* What a start tag of kind k implies closed. */
static void implied_ends(html_open *o, const char *name, enum kind k, size_t *work)
{
    static const enum kind p[] = {E_P}, li[] = {E_LI}, ddt[] = {E_DD, E_DT}, list[] = {E_LIST},
                           dl[] = {E_DL}, cell[] = {E_TD, E_TH}, row[] = {E_TR},
                           sect[] = {E_TSECTION}, a[] = {E_A};
    if (closes_p(name, k))
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
    static const char *const opens_nothing[] = {
        "area",  "base", "basefont", "bgsound", "br",   "col",  "embed", "frame",
        "hr",    "img",  "input",    "keygen",  "link", "meta", "param", "source",
        "track", "wbr",  "html",     "head",    "body", NULL,
    };
    size_t work = 0;
    enum kind k = kind_of(name);
    implied_ends(o, name, k, &work);
    if (self_closing || in(name, opens_nothing))
        return work;
    if (o->depth < o->max) {
        o->stack[o->depth].hash = hash_of(name);
        o->stack[o->depth].kind = k;
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
