/* mirror_links.c — the link conversion's scanner and rewriter (mirror_links.h). An edit
 * list (where a value starts and ends, what replaces it) is gathered in one pass over
 * the text, then the text is copied with the edits applied. */
#include "mirror_links.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"
#include "mirror_name.h"
#include "strmap.h"
#include "url.h"

static void sputs(mirror_buf *b, const char *s)
{
    mirror_buf_put(b, s, strlen(s));
}

typedef struct edit {
    size_t start, end;
    char *text;
} edit;

typedef struct conv {
    const char *text;
    size_t len;
    char *base;            /* the base URL of relative links */
    const char *self_link; /* the document's link to itself: a <base href>'s new value */
    mirror_link_fn fn;
    void *ctx;
    mirror_resolved *resolved;
    edit *v;
    size_t n, cap;
} conv;

static void add_edit(conv *c, size_t start, size_t end, char *text)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 16;
        c->v = xreallocarray(c->v, c->cap, sizeof *c->v);
    }
    c->v[c->n++] = (edit){start, end, text};
}

/* The text with the edits (in order, not overlapping) applied; NULL when none. */
static char *apply(conv *c, size_t *outlen)
{
    if (c->n == 0)
        return NULL;
    mirror_buf b = {0};
    size_t at = 0;
    for (size_t i = 0; i < c->n; i++) {
        mirror_buf_put(&b, c->text + at, c->v[i].start - at);
        sputs(&b, c->v[i].text);
        at = c->v[i].end;
        free(c->v[i].text);
    }
    mirror_buf_put(&b, c->text + at, c->len - at);
    free(c->v);
    *outlen = b.len;
    return b.s;
}

static bool is_web(const char *url)
{
    return strncmp(url, "http://", 7) == 0 || strncmp(url, "https://", 8) == 0;
}

/* ---- the answers of url_resolve, kept ---- */

typedef struct answer {
    strmap_node node;
    char *key; /* the part of the base the answer depends on, '\n', the href */
    char *url; /* or NULL: it does not resolve */
} answer;

struct mirror_resolved {
    strmap answers;
};

mirror_resolved *mirror_resolved_new(void)
{
    mirror_resolved *r = xcalloc(1, sizeof *r);
    strmap_init(&r->answers);
    return r;
}

static void drop_answer(strmap_node *n)
{
    answer *a = strmap_entry(n, answer, node);
    free(a->key);
    free(a->url);
    free(a);
}

void mirror_resolved_free(mirror_resolved *r)
{
    if (!r)
        return;
    strmap_clear(&r->answers, drop_answer);
    strmap_free(&r->answers);
    free(r);
}

/* How many leading bytes of base the resolution of href depends on (RFC 3986 5.2.2),
 * or -1: all of it, or this is not a case known to need less (an href with a space, a
 * control byte or a backslash, which url_resolve cleans or reads as a browser does, is
 * not). Where the origin ends: after "scheme://", at the first '/', '?' or '#'. */
static long base_part(const char *base, const char *href)
{
    const char *sep = strstr(base, "://");
    if (!sep || !is_web(base))
        return -1;
    for (const unsigned char *p = (const unsigned char *)href; *p; p++)
        if (*p <= ' ' || *p == 0x7f || *p == '\\')
            return -1;
    size_t origin = (size_t)(sep + 3 - base) + strcspn(sep + 3, "/?#");
    if (strncasecmp(href, "http://", 7) == 0 || strncasecmp(href, "https://", 8) == 0
        || href[0] == '/')
        return (long)origin; /* an absolute URL, "/path", "//host/path" */
    size_t first = strcspn(href, "/?#");
    if (!href[0] || href[0] == '?' || href[0] == '#' || memchr(href, ':', first)
        || base[origin] != '/')
        return -1; /* empty, a query or a fragment of the base, a scheme ("http:x") */
    /* a relative path: the base's path up to its last '/' ("merge", 5.2.3), never
     * its query */
    size_t path_end = origin + strcspn(base + origin, "?#");
    size_t dir = path_end;
    while (dir > origin && base[dir - 1] != '/')
        dir--;
    return (long)dir;
}

char *mirror_resolve(mirror_resolved *r, const char *base, const char *href)
{
    long part = r ? base_part(base, href) : -1;
    if (part < 0)
        return url_resolve(base, href);
    char *key = xasprintf("%.*s\n%s", (int)part, base, href);
    strmap_node *n = strmap_find(&r->answers, key);
    if (n) {
        free(key);
        answer *a = strmap_entry(n, answer, node);
        return a->url ? xstrdup(a->url) : NULL;
    }
    if (r->answers.count >= MIRROR_RESOLVED_MAX)
        strmap_clear(&r->answers, drop_answer);
    answer *a = xcalloc(1, sizeof *a);
    a->key = key;
    a->url = url_resolve(base, href);
    strmap_add(&r->answers, &a->node, a->key);
    return a->url ? xstrdup(a->url) : NULL;
}

/* A link as written (decoded): its new form (malloc'd), or NULL to keep it. */
static char *convert_link(conv *c, const char *href)
{
    while (*href == ' ' || *href == '\t' || *href == '\n' || *href == '\r' || *href == '\f')
        href++;
    if (!*href || *href == '#')
        return NULL;
    const char *hash = strchr(href, '#');
    char *target = hash ? xstrndup(href, (size_t)(hash - href)) : xstrdup(href);
    char *url = mirror_resolve(c->resolved, c->base, target);
    free(target);
    if (!url || !is_web(url)) {
        free(url);
        return NULL;
    }
    char *local = c->fn(c->ctx, url);
    char *out = xasprintf("%s%s", local ? local : url, hash ? hash : "");
    free(local);
    free(url);
    return out;
}

/* ---- CSS ---- */

/* A CSS value's new text: a link never holds a quote, a parenthesis, a backslash or a
 * space (they are percent-encoded), so it fits quoted or not. */
static char *css_safe(char *link)
{
    mirror_buf b = {0};
    sputs(&b, "");
    for (const char *p = link; *p; p++) {
        if (strchr("\"'()\\ \t\n\r\f", *p)) {
            char x[4];
            snprintf(x, sizeof x, "%%%02X", (unsigned char)*p);
            sputs(&b, x);
        } else {
            mirror_buf_put(&b, p, 1);
        }
    }
    free(link);
    return b.s;
}

/* The URL at [start, end) of c->text (CSS): an edit when it changes. Escaped URLs
 * (a backslash) are kept as written. */
static void css_value(conv *c, size_t start, size_t end)
{
    if (memchr(c->text + start, '\\', end - start))
        return;
    char *href = xstrndup(c->text + start, end - start);
    char *link = convert_link(c, href);
    free(href);
    if (link)
        add_edit(c, start, end, css_safe(link));
}

static size_t skip_string(const char *t, size_t i, size_t len)
{
    char q = t[i++];
    while (i < len && t[i] != q && t[i] != '\n') {
        if (t[i] == '\\' && i + 1 < len)
            i++;
        i++;
    }
    return i < len ? i + 1 : len;
}

static bool ident_char(char ch)
{
    return isalnum((unsigned char)ch) || ch == '-' || ch == '_' || (unsigned char)ch >= 0x80;
}

/* url( at i (after "url("): its value's edit; where the token ends. */
static size_t css_url_token(conv *c, size_t i, size_t end)
{
    const char *t = c->text;
    while (i < end && isspace((unsigned char)t[i]))
        i++;
    if (i < end && (t[i] == '"' || t[i] == '\'')) {
        size_t close = skip_string(t, i, end);
        if (close <= end && close - i >= 2 && t[close - 1] == t[i])
            css_value(c, i + 1, close - 1);
        i = close;
    } else {
        size_t s = i;
        while (i < end && t[i] != ')' && !isspace((unsigned char)t[i]) && t[i] != '"'
               && t[i] != '\'' && t[i] != '(')
            i++;
        if (i > s)
            css_value(c, s, i);
    }
    while (i < end && t[i] != ')')
        i++;
    return i < end ? i + 1 : end;
}

/* The CSS in c->text[start, end): its url() and @import edits. */
static void css_scan(conv *c, size_t start, size_t end)
{
    const char *t = c->text;
    bool import = false; /* after @import, before its URL */
    for (size_t i = start; i < end;) {
        if (t[i] == '/' && i + 1 < end && t[i + 1] == '*') {
            const char *e = NULL;
            for (size_t j = i + 2; j + 1 < end; j++)
                if (t[j] == '*' && t[j + 1] == '/') {
                    e = t + j;
                    break;
                }
            i = e ? (size_t)(e - t) + 2 : end;
        } else if (t[i] == '"' || t[i] == '\'') {
            size_t close = skip_string(t, i, end);
            if (import && close - i >= 2 && t[close - 1] == t[i])
                css_value(c, i + 1, close - 1);
            import = false;
            i = close;
        } else if (end - i >= 4 && strncasecmp(t + i, "url(", 4) == 0
                   && (i == start || !ident_char(t[i - 1]))) {
            i = css_url_token(c, i + 4, end);
            import = false;
        } else if (end - i >= 7 && strncasecmp(t + i, "@import", 7) == 0) {
            import = true;
            i += 7;
        } else {
            if (t[i] == ';' || t[i] == '{' || t[i] == '}')
                import = false;
            i += t[i] == '\\' && i + 1 < end ? 2 : 1;
        }
    }
}

char *mirror_convert_css(const char *text, size_t len, const char *url, mirror_link_fn fn,
                         void *ctx, mirror_resolved *resolved, size_t *outlen)
{
    conv c = {
        .text = text, .len = len, .base = xstrdup(url), .fn = fn, .ctx = ctx, .resolved = resolved};
    css_scan(&c, 0, len);
    free(c.base);
    return apply(&c, outlen);
}

/* ---- HTML ---- */

/* An attribute value's character references decoded (the common ones and numeric
 * ones; others are kept as written). malloc'd. */
static char *html_decode(const char *s, size_t n)
{
    static const struct {
        const char *name;
        char ch;
    } named[] = {{"amp;", '&'}, {"lt;", '<'}, {"gt;", '>'}, {"quot;", '"'}, {"apos;", '\''}};
    mirror_buf b = {0};
    sputs(&b, "");
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        if (s[i] == '&') {
            for (size_t j = 0; j < sizeof named / sizeof named[0] && !k; j++) {
                size_t m = strlen(named[j].name);
                if (i + 1 + m <= n && strncmp(s + i + 1, named[j].name, m) == 0) {
                    mirror_buf_put(&b, &named[j].ch, 1);
                    k = m;
                }
            }
            if (!k && i + 2 < n && s[i + 1] == '#') {
                bool hex = s[i + 2] == 'x' || s[i + 2] == 'X';
                size_t j = i + 2 + hex;
                unsigned long v = 0;
                while (j < n && (hex ? isxdigit((unsigned char)s[j]) : isdigit((unsigned char)s[j]))
                       && v < 0x110000)
                    v = v * (hex ? 16 : 10)
                        + (unsigned long)(isdigit((unsigned char)s[j])
                                              ? s[j] - '0'
                                              : (tolower(s[j]) - 'a' + 10)),
                    j++;
                if (j < n && s[j] == ';' && j > i + 2 + hex && v > 0 && v < 0x80) {
                    char ch = (char)v;
                    mirror_buf_put(&b, &ch, 1);
                    k = j - i;
                }
            }
        }
        if (k)
            i += k;
        else
            mirror_buf_put(&b, s + i, 1);
    }
    return b.s;
}

/* A value written back in its quotes (q: '"', '\'', or 0 for none): '&' and the quote
 * as references (every quote, '<' and '>' when it has none). */
static char *html_escape(const char *s, char q)
{
    mirror_buf b = {0};
    sputs(&b, "");
    for (; *s; s++) {
        const char *e = *s == '&'            ? "&amp;"
            : *s == '"' && q != '\''         ? "&quot;"
            : *s == '\'' && q != '"'         ? "&#39;"
            : (*s == '<' || *s == '>') && !q ? (*s == '<' ? "&lt;" : "&gt;")
                                             : NULL;
        if (e)
            sputs(&b, e);
        else
            mirror_buf_put(&b, s, 1);
    }
    return b.s;
}

/* A decoded value as a conv of its own (srcset, style): its edits applied to it. */
static char *sub_apply(conv *c, const char *v, void (*scan)(conv *, size_t, size_t))
{
    conv sub = {.text = v, .len = strlen(v), .base = c->base, .fn = c->fn, .ctx = c->ctx};
    scan(&sub, 0, sub.len);
    size_t n;
    return apply(&sub, &n);
}

static void srcset_scan(conv *c, size_t start, size_t end)
{
    const char *t = c->text;
    for (size_t i = start; i < end;) {
        while (i < end && (isspace((unsigned char)t[i]) || t[i] == ','))
            i++;
        size_t s = i;
        while (i < end && !isspace((unsigned char)t[i]))
            i++;
        size_t e = i;
        while (e > s && t[e - 1] == ',')
            e--;
        if (e > s) {
            char *href = xstrndup(t + s, e - s);
            char *link = convert_link(c, href);
            free(href);
            if (link)
                add_edit(c, s, e, css_safe(link)); /* no space or comma may stay bare */
        }
        while (i < end && t[i] != ',')
            i++;
    }
}

typedef enum { V_URL, V_SRCSET, V_STYLE, V_BASE } value_kind;

/* The attribute's kind of value, on this element, or -1: not a link. */
static int link_attr(const char *tag, const char *name)
{
    if (strcasecmp(name, "href") == 0)
        return strcasecmp(tag, "base") == 0 ? V_BASE : V_URL;
    if (strcasecmp(name, "src") == 0 || strcasecmp(name, "poster") == 0
        || strcasecmp(name, "background") == 0
        || (strcasecmp(name, "data") == 0 && strcasecmp(tag, "object") == 0))
        return V_URL;
    if (strcasecmp(name, "srcset") == 0)
        return V_SRCSET;
    return strcasecmp(name, "style") == 0 ? V_STYLE : -1;
}

/* An attribute value at [s, e), in quotes q (0: none): its edit. */
static void html_value(conv *c, const char *tag, const char *name, size_t s, size_t e, char q)
{
    int kind = link_attr(tag, name);
    if (kind < 0)
        return;
    char *v = html_decode(c->text + s, e - s), *out = NULL;
    if (kind == V_BASE) {
        char *base = url_resolve(c->base, v);
        if (base && is_web(base)) {
            free(c->base);
            c->base = base;
            out = xstrdup(c->self_link); /* the links are resolved against it here */
        } else {
            free(base);
        }
    } else if (kind == V_URL) {
        out = convert_link(c, v);
    } else {
        out = sub_apply(c, v, kind == V_SRCSET ? srcset_scan : css_scan);
    }
    free(v);
    if (out) {
        add_edit(c, s, e, html_escape(out, q));
        free(out);
    }
}

/* Where the first case-insensitive "</name" at or after i begins (len: none). */
static size_t find_end_tag(const char *t, size_t i, size_t len, const char *name)
{
    size_t n = strlen(name);
    for (; i + 2 + n <= len; i++)
        if (t[i] == '<' && t[i + 1] == '/' && strncasecmp(t + i + 2, name, n) == 0)
            return i;
    return len;
}

static size_t skip_to(const char *t, size_t i, size_t len, const char *what)
{
    const char *e = NULL;
    size_t n = strlen(what);
    for (size_t j = i; j + n <= len; j++)
        if (memcmp(t + j, what, n) == 0) {
            e = t + j;
            break;
        }
    return e ? (size_t)(e - t) + n : len;
}

/* The attributes of a start tag, from i (after its name) to its '>': each link value's
 * edit. Returns where the tag ends. */
static size_t html_attrs(conv *c, const char *tag, size_t i)
{
    const char *t = c->text;
    size_t len = c->len;
    while (i < len && t[i] != '>') {
        if (isspace((unsigned char)t[i]) || t[i] == '/') {
            i++;
            continue;
        }
        size_t ns = i;
        while (i < len && !isspace((unsigned char)t[i]) && t[i] != '=' && t[i] != '>'
               && (t[i] != '/' || i == ns))
            i++;
        char *name = xstrndup(t + ns, i - ns);
        while (i < len && isspace((unsigned char)t[i]))
            i++;
        if (i < len && t[i] == '=') {
            i++;
            while (i < len && isspace((unsigned char)t[i]))
                i++;
            size_t s, e;
            char q = 0;
            if (i < len && (t[i] == '"' || t[i] == '\'')) {
                q = t[i];
                s = ++i;
                while (i < len && t[i] != q)
                    i++;
                e = i;
                i += i < len;
            } else {
                s = i;
                while (i < len && !isspace((unsigned char)t[i]) && t[i] != '>')
                    i++;
                e = i;
            }
            html_value(c, tag, name, s, e, q);
        }
        free(name);
    }
    return i < len ? i + 1 : len;
}

/* One tag at i ('<'): its edits; where the scan goes on. */
static size_t html_tag(conv *c, size_t i)
{
    static const char *const raw[] = {"script", "style", "textarea", "title", "xmp"};
    const char *t = c->text;
    size_t len = c->len;
    if (len - i >= 4 && memcmp(t + i, "<!--", 4) == 0)
        return skip_to(t, i + 4, len, "-->");
    if (i + 1 < len && (t[i + 1] == '!' || t[i + 1] == '?' || t[i + 1] == '/'))
        return skip_to(t, i + 1, len, ">");
    if (i + 1 >= len || !isalpha((unsigned char)t[i + 1]))
        return i + 1;
    size_t ns = i + 1, ne = ns;
    while (ne < len && (isalnum((unsigned char)t[ne]) || t[ne] == '-' || t[ne] == ':'))
        ne++;
    char *tag = xstrndup(t + ns, ne - ns);
    size_t after = html_attrs(c, tag, ne);
    for (size_t k = 0; k < sizeof raw / sizeof raw[0]; k++)
        if (strcasecmp(tag, raw[k]) == 0) {
            size_t end = find_end_tag(t, after, len, tag);
            if (k == 1)
                css_scan(c, after, end);
            after = end;
            break;
        }
    free(tag);
    return after;
}

char *mirror_convert_html(const char *text, size_t len, const char *url, const char *self_link,
                          mirror_link_fn fn, void *ctx, mirror_resolved *resolved, size_t *outlen)
{
    conv c = {.text = text,
              .len = len,
              .base = xstrdup(url),
              .self_link = self_link,
              .fn = fn,
              .ctx = ctx,
              .resolved = resolved};
    for (size_t i = 0; i < len;) {
        const char *lt = memchr(text + i, '<', len - i);
        if (!lt)
            break;
        i = html_tag(&c, (size_t)(lt - text));
    }
    free(c.base);
    return apply(&c, outlen);
}
