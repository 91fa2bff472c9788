/* mirror_name.c — a URL's place in the mirror (mirror_name.h): the URL split by libcurl's
 * URL API (url_split), then each component checked, decoded and escaped here. */
#include "mirror_name.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"
#include "url.h"

void mirror_buf_put(mirror_buf *b, const char *p, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->s = xrealloc(b->s, b->cap);
    }
    memcpy(b->s + b->len, p, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void putc_(mirror_buf *b, char c)
{
    mirror_buf_put(b, &c, 1);
}

static void put_hex(mirror_buf *b, unsigned char c)
{
    char x[4];
    snprintf(x, sizeof x, "%%%02X", c);
    mirror_buf_put(b, x, 3);
}

static bool type_is(const char *type, const char *want)
{
    size_t n = strlen(want);
    if (strncasecmp(type, want, n) != 0)
        return false;
    while (type[n] == ' ' || type[n] == '\t')
        n++;
    return type[n] == '\0' || type[n] == ';';
}

mirror_kind mirror_kind_of(const char *type)
{
    if (!type)
        return MIRROR_OTHER;
    while (*type == ' ' || *type == '\t')
        type++;
    if (type_is(type, "text/html") || type_is(type, "application/xhtml+xml"))
        return MIRROR_HTML;
    return type_is(type, "text/css") ? MIRROR_CSS : MIRROR_OTHER;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* s[0..n) with each valid %XX decoded; *len its length (it may hold NUL). */
static char *decode(const char *s, size_t n, size_t *len)
{
    char *out = xmalloc(n + 1);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int hi, lo;
        if (s[i] == '%' && i + 2 < n && (hi = hexval(s[i + 1])) >= 0
            && (lo = hexval(s[i + 2])) >= 0) {
            out[k++] = (char)(hi << 4 | lo);
            i += 2;
        } else {
            out[k++] = s[i];
        }
    }
    out[k] = '\0';
    *len = k;
    return out;
}

char *mirror_unescape(const char *c)
{
    size_t len;
    return decode(c, strlen(c), &len);
}

/* One component's bytes as a name: control bytes, DEL and '%' as %XX, and '?' (in a
 * path segment) or '/' (in the query). */
static void escape(mirror_buf *b, const char *s, size_t n, bool query)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f || c == '%' || (!query && c == '?') || (query && c == '/'))
            put_hex(b, c);
        else
            putc_(b, (char)c);
    }
}

uint64_t mirror_hash(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
    return h;
}

/* A component too long for a name: its first bytes (not cutting a %XX), '~', the hash
 * of the whole, and its extension (up to 8 bytes after the last '.'). */
static void shorten(mirror_buf *b, size_t start)
{
    const char *c = b->s + start;
    size_t n = b->len - start;
    if (n <= MIRROR_NAME_MAX)
        return;
    const char *dot = strrchr(c, '.');
    size_t ext = dot && (size_t)(c + n - dot) <= 9 && !strchr(dot, '%') ? (size_t)(c + n - dot) : 0;
    size_t keep = MIRROR_NAME_MAX - 17 - ext;
    for (size_t i = keep >= 2 ? keep - 2 : 0; i < keep; i++)
        if (c[i] == '%') {
            keep = i;
            break;
        }
    char tail[32];
    snprintf(tail, sizeof tail, "~%016llx", (unsigned long long)mirror_hash(c, n));
    char *e = xstrndup(c + n - ext, ext);
    b->len = start + keep;
    mirror_buf_put(b, tail, strlen(tail));
    mirror_buf_put(b, e, ext);
    free(e);
}

/* Names Windows and FAT keep for devices, whatever their case and extension
 * ("con.html", "Aux.tar.gz", "nul .txt"): Microsoft's "Naming Files, Paths, and
 * Namespaces". */
static const char *const reserved_names[] = {"CON", "PRN", "AUX", "NUL", "COM", "LPT"};

static bool is_reserved(const char *c, size_t n)
{
    const char *dot = memchr(c, '.', n);
    size_t base = dot ? (size_t)(dot - c) : n;
    while (base > 0 && c[base - 1] == ' ')
        base--;
    for (size_t i = 0; i < sizeof reserved_names / sizeof reserved_names[0]; i++) {
        bool numbered = i >= 4; /* COM1-COM9, LPT1-LPT9 */
        if (base == 3u + numbered && strncasecmp(c, reserved_names[i], 3) == 0
            && (!numbered || (c[3] >= '1' && c[3] <= '9')))
            return true;
    }
    return false;
}

/* The component from start to the end of b, made a name every file system takes: a
 * reserved device name gets its first byte as %XX ("CON.html" -> "%43ON.html"), and a
 * trailing dot or space (which Windows drops, so that "a." would be "a") its last. */
static void unreserve(mirror_buf *b, size_t start)
{
    size_t n = b->len - start;
    if (n == 0)
        return;
    bool dev = is_reserved(b->s + start, n);
    char last = b->s[b->len - 1];
    bool trail = last == '.' || last == ' ';
    if (!dev && !trail)
        return;
    char *c = xstrndup(b->s + start, n);
    b->len = start;
    size_t from = 0, to = n;
    if (dev)
        put_hex(b, (unsigned char)c[from++]);
    if (trail && to > from)
        to--;
    mirror_buf_put(b, c + from, to - from);
    if (trail && to < n)
        put_hex(b, (unsigned char)c[n - 1]);
    free(c);
}

static bool host_ok(const char *h)
{
    if (!h[0] || h[0] == '.' || strlen(h) > 253)
        return false;
    bool v6 = strchr(h, ':') != NULL;
    for (const char *p = h; *p; p++) {
        char c = *p;
        bool ok = v6 ? (hexval(c) >= 0 || c == ':' || c == '.')
                     : ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-'
                        || c == '_');
        if (!ok)
            return false;
    }
    return strstr(h, "..") == NULL;
}

static bool ends_with(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && strncasecmp(s + n - k, suffix, k) == 0;
}

/* One path segment (raw, n bytes) into b: decoded, checked, escaped. -1 with why. */
static int segment(mirror_buf *b, const char *raw, size_t n, char *why, size_t whylen)
{
    size_t len;
    char *d = decode(raw, n, &len);
    const char *bad = NULL;
    if (memchr(d, '\0', len))
        bad = "a NUL byte";
    else if (strchr(d, '/'))
        bad = "a '/' (%2F)";
    else if (strchr(d, '\\'))
        bad = "a backslash";
    else if (strcmp(d, ".") == 0 || strcmp(d, "..") == 0)
        bad = "a dot segment";
    if (bad) {
        snprintf(why, whylen, "its path holds %s in a segment", bad);
        free(d);
        return -1;
    }
    escape(b, d, len, false);
    free(d);
    return 0;
}

/* The path and query ("/a/b?q") after the host directory, into b: each directory
 * segment (empty ones skipped), then the leaf (after the last '/'; none: index.html)
 * with its query and extension. -1 with why. */
static int path_part(mirror_buf *b, const char *pq, mirror_kind kind, char *why, size_t whylen)
{
    const char *q = strchr(pq, '?');
    const char *end = q ? q : pq + strlen(pq);
    const char *last = end;
    while (last > pq && last[-1] != '/')
        last--;
    int depth = 0;
    for (const char *p = pq; p < last;) {
        const char *s = p;
        while (*p != '/')
            p++;
        if (p > s) {
            if (++depth > MIRROR_MAX_DEPTH) {
                snprintf(why, whylen, "its path is deeper than %d segments", MIRROR_MAX_DEPTH);
                return -1;
            }
            size_t at = b->len + 1;
            putc_(b, '/');
            if (segment(b, s, (size_t)(p - s), why, whylen) < 0)
                return -1;
            unreserve(b, at);
            shorten(b, at);
        }
        p++;
    }
    size_t at = b->len + 1;
    putc_(b, '/');
    if (last < end) {
        if (segment(b, last, (size_t)(end - last), why, whylen) < 0)
            return -1;
    } else {
        mirror_buf_put(b, "index.html", 10);
    }
    if (q) {
        putc_(b, '?');
        escape(b, q + 1, strlen(q + 1), true);
    }
    const char *leaf = b->s + at;
    size_t n = b->len - at;
    if (kind == MIRROR_HTML && !ends_with(leaf, n, ".html") && !ends_with(leaf, n, ".htm"))
        mirror_buf_put(b, ".html", 5);
    else if (kind == MIRROR_CSS && !ends_with(leaf, n, ".css"))
        mirror_buf_put(b, ".css", 4);
    unreserve(b, at);
    shorten(b, at);
    return 0;
}

char *mirror_name(const char *url, mirror_kind kind, char *why, size_t whylen)
{
    char *scheme = NULL, *host = NULL, *pq = NULL;
    int port = 0;
    if (url_split(url, &scheme, &host, &port, &pq) < 0) {
        snprintf(why, whylen, "not an http(s) URL");
        return NULL;
    }
    mirror_buf b = {0};
    int rc = -1;
    if (!host_ok(host)) {
        snprintf(why, whylen, "its host is not a name a directory may have");
    } else {
        bool v6 = strchr(host, ':') != NULL;
        mirror_buf_put(&b, v6 ? "[" : "", v6);
        mirror_buf_put(&b, host, strlen(host));
        mirror_buf_put(&b, v6 ? "]" : "", v6);
        if (!v6)
            unreserve(&b, 0);
        int dflt = strcmp(scheme, "https") == 0 ? 443 : 80;
        if (port != dflt) {
            char p[16];
            snprintf(p, sizeof p, ":%d", port);
            mirror_buf_put(&b, p, strlen(p));
        }
        rc = path_part(&b, pq, kind, why, whylen);
        if (rc == 0 && b.len > MIRROR_PATH_MAX) {
            snprintf(why, whylen, "its name would be longer than %d bytes", MIRROR_PATH_MAX);
            rc = -1;
        }
    }
    free(scheme), free(host), free(pq);
    if (rc < 0) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

/* ---- names that differ only in case ---- */

char *mirror_fold(const char *path)
{
    char *f = xstrdup(path);
    for (char *p = f; *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p - 'A' + 'a');
    return f;
}

static size_t uppers(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s >= 'A' && *s <= 'Z';
    return n;
}

bool mirror_case_first(const char *a, const char *b)
{
    size_t ua = uppers(a), ub = uppers(b);
    return ua != ub ? ua < ub : strcmp(a, b) < 0;
}

char *mirror_case_variant(const char *path)
{
    const char *leaf = strrchr(path, '/');
    leaf = leaf ? leaf + 1 : path;
    size_t n = strlen(leaf);
    const char *dot = strrchr(leaf, '.');
    size_t ext = dot && dot > leaf && (size_t)(leaf + n - dot) <= 9 && !strchr(dot, '%')
        ? (size_t)(leaf + n - dot)
        : 0;
    /* the hash of the name under the host's directory: the same on another port */
    const char *under = strchr(path, '/');
    under = under ? under + 1 : path;
    uint64_t h = mirror_hash(under, strlen(under));
    return xasprintf("%.*s~%08llx%s", (int)(leaf + n - ext - path), path,
                     (unsigned long long)(h >> 32), leaf + n - ext);
}

/* ---- links from one file to another ---- */

static void put_url_component(mirror_buf *b, const char *c, size_t n)
{
    /* the name's bytes as they are on disk: a browser decodes the link back to them */
    for (const unsigned char *p = (const unsigned char *)c; p < (const unsigned char *)c + n; p++) {
        bool plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')
            || (*p >= '0' && *p <= '9') || strchr("-._~!$()*+,;=:@", *p);
        if (plain)
            putc_(b, (char)*p);
        else
            put_hex(b, *p);
    }
}

char *mirror_relative(const char *from, const char *to)
{
    /* the directories they share */
    size_t common = 0;
    for (size_t i = 0; from[i] && from[i] == to[i]; i++)
        if (from[i] == '/')
            common = i + 1;
    mirror_buf b = {0};
    mirror_buf_put(&b, "", 0);
    for (const char *p = from + common; (p = strchr(p, '/')); p++)
        mirror_buf_put(&b, "../", 3);
    for (const char *p = to + common; *p;) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        put_url_component(&b, p, n);
        if (!slash)
            break;
        putc_(&b, '/');
        p = slash + 1;
    }
    return b.s;
}
