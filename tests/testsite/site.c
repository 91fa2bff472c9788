/* site.c — the .site file parser and the page model (see site.h and
 * tests/sites/README.md). The file is read whole; each line is split into words in
 * place (double quotes group, a word starting with '#' starts a comment), and
 * `body <<TAG` / `raw <<TAG` blocks are cut out of the text as they are. */
#include "site.h"

#include "alloc.h"
#include "gen.h"
#include "gz.h"
#include "sbuf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_WORDS      64
#define MAX_FILE_BYTES (512L * 1024 * 1024)

typedef struct parser {
    const char *file;
    const char *dir; /* the site file's directory, for @file paths */
    bool no_files;   /* @file refused (site_parse_buffer without a dir) */
    const char *text;
    size_t len, pos; /* the whole file and where the next line starts */
    int line;        /* number of the line last read */
    site *s;
    site_page *cur;
    bool charset_set; /* charset= given on the current page */
    bool has_body;    /* body=, raw=, bytes= or a block given */
    bool has_html;    /* link lines, links= or nest= given */
    bool fill_set;    /* fill= given on the current page */
    char *err;
    size_t errlen;
} parser;

static int fail(parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(parser *p, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (p->line > 0)
        snprintf(p->err, p->errlen, "%s:%d: %s", p->file, p->line, msg);
    else
        snprintf(p->err, p->errlen, "%s: %s", p->file, msg);
    return -1;
}

static char *read_whole(const char *path, size_t *len, int *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        *err = errno;
        return NULL;
    }
    sbuf b = {0};
    char chunk[65536];
    size_t n;
    bool too_big = false;
    while (!too_big && (n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        too_big = b.len + n > (size_t)MAX_FILE_BYTES;
        if (!too_big)
            sbuf_add(&b, chunk, n);
    }
    int bad = ferror(f) || too_big;
    fclose(f);
    if (bad) {
        sbuf_free(&b);
        *err = EFBIG;
        return NULL;
    }
    return sbuf_take(&b, len);
}

/* Next line of the file (without its newline or a trailing CR), or NULL at the end. */
static const char *next_line(parser *p, size_t *len)
{
    if (p->pos >= p->len)
        return NULL;
    const char *start = p->text + p->pos;
    const char *nl = memchr(start, '\n', p->len - p->pos);
    size_t n = nl ? (size_t)(nl - start) : p->len - p->pos;
    p->pos += n + (nl ? 1 : 0);
    if (n > 0 && start[n - 1] == '\r')
        n--;
    p->line++;
    *len = n;
    return start;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Split s into words in place. Returns the count, or -1 on an error. */
static int split_words(parser *p, char *s, char **w, int max)
{
    int n = 0;
    char *r = s;
    for (;;) {
        while (*r == ' ' || *r == '\t')
            r++;
        if (!*r || *r == '#')
            break;
        if (n == max)
            return fail(p, "more than %d words on one line", max);
        char *out = r;
        w[n++] = out;
        bool quoted = false;
        while (*r && (quoted || (*r != ' ' && *r != '\t'))) {
            if (*r == '"') {
                quoted = !quoted;
                r++;
                continue;
            }
            if (quoted && *r == '\\' && r[1] && strchr("\"\\nrt", r[1])) {
                r++;
                *out++ = *r == 'n' ? '\n' : *r == 'r' ? '\r' : *r == 't' ? '\t' : *r;
                r++;
                continue;
            }
            if (quoted && *r == '\\' && r[1] == 'x') { /* \xHH: any byte but NUL */
                int hi = hex_digit(r[2]), lo = hi < 0 ? -1 : hex_digit(r[3]);
                if (lo < 0 || (hi == 0 && lo == 0))
                    return fail(p, "\\x needs two hex digits, not 00");
                *out++ = (char)(hi << 4 | lo);
                r += 4;
                continue;
            }
            *out++ = *r++;
        }
        if (quoted)
            return fail(p, "unterminated quote");
        bool end = !*r;
        *out = '\0';
        if (end)
            break;
        r++;
    }
    return n;
}

static int parse_ll(const char *s, long long lo, long long hi, long long *out)
{
    if (!*s)
        return -1;
    for (const char *c = s; *c; c++)
        if (*c < '0' || *c > '9')
            return -1;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int num_value(parser *p, const char *key, const char *v, long long lo, long long hi,
                     long long *out)
{
    if (parse_ll(v, lo, hi, out) < 0)
        return fail(p, "bad %s '%s' (a whole number from %lld to %lld)", key, v, lo, hi);
    return 0;
}

/* "Basic " and the base64 of USER:PASSWORD (RFC 7617): the Authorization a page with
 * auth= wants. malloc'd. */
static char *basic_credentials(const char *userpass)
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = strlen(userpass);
    char *out = xmalloc(6 + 4 * ((n + 2) / 3) + 1), *o = out;
    memcpy(o, "Basic ", 6);
    o += 6;
    const unsigned char *s = (const unsigned char *)userpass;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)s[i] << 16 | (i + 1 < n ? (unsigned)s[i + 1] << 8 : 0)
            | (i + 2 < n ? s[i + 2] : 0);
        *o++ = b64[v >> 18 & 63];
        *o++ = b64[v >> 12 & 63];
        *o++ = i + 1 < n ? b64[v >> 6 & 63] : '=';
        *o++ = i + 2 < n ? b64[v & 63] : '=';
    }
    *o = '\0';
    return out;
}

static void set_str(char **slot, const char *v)
{
    free(*slot);
    *slot = xstrdup(v);
}

static void push(char ***arr, size_t *n, const char *v)
{
    *arr = xreallocarray(*arr, *n + 1, sizeof **arr);
    (*arr)[(*n)++] = xstrdup(v);
}

static int claim_body(parser *p, const char *what)
{
    if (p->has_body)
        return fail(p, "page %s has two bodies (%s given again)", p->cur->path, what);
    if (p->has_html)
        return fail(p, "page %s: %s does not go with link lines, links= or nest=", p->cur->path,
                    what);
    p->has_body = true;
    return 0;
}

static int claim_html(parser *p, const char *what)
{
    if (p->has_body)
        return fail(p, "page %s: %s does not go with body, raw or bytes", p->cur->path, what);
    p->has_html = true;
    return 0;
}

/* body=@file / raw=@file: read the file now, relative to the site file. */
static int load_file(parser *p, site_page *pg, const char *rel)
{
    if (!*rel)
        return fail(p, "empty file name after '@'");
    if (p->no_files)
        return fail(p, "@%s: no files may be read here", rel);
    sbuf path = {0};
    if (rel[0] != '/' && p->dir) {
        sbuf_adds(&path, p->dir);
        sbuf_adds(&path, "/");
    }
    sbuf_adds(&path, rel);
    int e = 0;
    size_t len = 0;
    char *data = read_whole(path.data, &len, &e);
    if (!data) {
        int r = fail(p, "cannot read %s: %s", path.data, strerror(e));
        sbuf_free(&path);
        return r;
    }
    sbuf_free(&path);
    free(pg->body);
    pg->body = data;
    pg->body_len = len;
    return 0;
}

static int set_key(parser *p, char *word)
{
    site_page *pg = p->cur;
    char *eq = strchr(word, '=');
    *eq = '\0';
    const char *k = word, *v = eq + 1;
    long long n;
    if (!strcmp(k, "status")) {
        if (num_value(p, k, v, 100, 999, &n) < 0)
            return -1;
        pg->status = (int)n;
    } else if (!strcmp(k, "type")) {
        if (!*v)
            return fail(p, "empty type (use type=none for no Content-Type)");
        free(pg->type);
        pg->type = NULL;
        if (strcmp(v, "none"))
            set_str(&pg->type, v);
        if (!p->charset_set) {
            free(pg->charset);
            pg->charset = NULL;
        }
    } else if (!strcmp(k, "charset")) {
        p->charset_set = true;
        free(pg->charset);
        pg->charset = NULL;
        if (strcmp(v, "none"))
            set_str(&pg->charset, v);
    } else if (!strcmp(k, "location")) {
        set_str(&pg->location, v);
    } else if (!strcmp(k, "body") || !strcmp(k, "raw")) {
        bool raw = k[0] == 'r';
        if (claim_body(p, raw ? "raw" : "body") < 0)
            return -1;
        pg->kind = raw ? BODY_RAW : BODY_TEXT;
        if (v[0] == '@')
            return load_file(p, pg, v + 1);
        if (raw)
            return fail(p, "raw takes @file or a <<TAG block");
        set_str(&pg->body, v);
        pg->body_len = strlen(v);
    } else if (!strcmp(k, "bytes")) {
        if (claim_body(p, "bytes") < 0 || num_value(p, k, v, 0, 1LL << 40, &n) < 0)
            return -1;
        pg->kind = BODY_BYTES;
        pg->bytes = n;
    } else if (!strcmp(k, "fill")) {
        static const char *const fills[] = {"html", "text", "nul"};
        size_t i = 0;
        while (i < 3 && strcmp(v, fills[i]))
            i++;
        if (i == 3)
            return fail(p, "bad fill '%s' (html, text or nul)", v);
        pg->fill = (gen_fill_kind)i;
        p->fill_set = true;
    } else if (!strcmp(k, "encoding")) {
        if (strcmp(v, "gzip") && strcmp(v, "identity"))
            return fail(p, "bad encoding '%s' (gzip or identity)", v);
        pg->gzip = !strcmp(v, "gzip");
    } else if (!strcmp(k, "links")) {
        if (claim_html(p, "links=") < 0 || num_value(p, k, v, 0, 10000000, &n) < 0)
            return -1;
        pg->gen_links = (long)n;
    } else if (!strcmp(k, "linkprefix")) {
        set_str(&pg->link_prefix, v);
    } else if (!strcmp(k, "nest")) {
        if (claim_html(p, "nest=") < 0 || num_value(p, k, v, 0, 10000000, &n) < 0)
            return -1;
        pg->nest = (long)n;
    } else if (!strcmp(k, "delay")) {
        if (num_value(p, k, v, 0, 3600000, &n) < 0)
            return -1;
        pg->delay_ms = n;
    } else if (!strcmp(k, "drop")) {
        if (num_value(p, k, v, 0, 1000000000, &n) < 0)
            return -1;
        pg->drop = (long)n;
    } else if (!strcmp(k, "busy")) {
        /* busy=K or busy=K/STATUS: the first K requests get STATUS (429) */
        char *slash = strchr(v, '/');
        long long st = 429;
        if (slash) {
            *slash = '\0';
            if (num_value(p, k, slash + 1, 100, 999, &st) < 0)
                return -1;
        }
        if (num_value(p, k, v, 0, 1000000000, &n) < 0)
            return -1;
        pg->busy = (long)n;
        pg->busy_status = (int)st;
    } else if (!strcmp(k, "retry")) {
        set_str(&pg->retry_after, v);
    } else if (!strcmp(k, "cookie")) {
        if (!strchr(v, '=') || *v == '=')
            return fail(p, "bad cookie '%s' (NAME=VALUE)", v);
        set_str(&pg->need_cookie, v);
    } else if (!strcmp(k, "auth")) {
        if (!strchr(v, ':'))
            return fail(p, "bad auth '%s' (USER:PASSWORD)", v);
        free(pg->need_auth);
        pg->need_auth = basic_credentials(v);
    } else if (!strcmp(k, "login")) {
        set_str(&pg->login, v);
    } else if (!strcmp(k, "form")) {
        if (!strchr(v, '=') || *v == '=')
            return fail(p, "bad form '%s' (NAME=VALUE&NAME=VALUE...)", v);
        set_str(&pg->need_form, v);
    } else if (!strcmp(k, "digest")) {
        if (!strchr(v, ':'))
            return fail(p, "bad digest '%s' (USER:PASSWORD)", v);
        set_str(&pg->need_digest, v);
    } else if (!strcmp(k, "reset")) {
        if (num_value(p, k, v, 0, 1LL << 40, &n) < 0)
            return -1;
        pg->reset_after = n;
    } else if (!strcmp(k, "padheader")) {
        /* an extra "X-Pad: xxx..." header with an N-byte value (huge heads) */
        if (num_value(p, k, v, 0, 64L * 1024 * 1024, &n) < 0)
            return -1;
        char *h = xmalloc((size_t)n + 8);
        memcpy(h, "X-Pad: ", 7);
        memset(h + 7, 'x', (size_t)n);
        h[n + 7] = '\0';
        push(&pg->headers, &pg->nheaders, h);
        free(h);
    } else if (!strcmp(k, "drip")) {
        char *slash = strchr(v, '/');
        long long b, ms;
        if (!slash)
            return fail(p, "bad drip '%s' (want BYTES/MS, e.g. drip=100/10)", v);
        *slash = '\0';
        if (parse_ll(v, 1, 1 << 30, &b) < 0 || parse_ll(slash + 1, 0, 3600000, &ms) < 0)
            return fail(p, "bad drip '%s/%s' (want BYTES/MS, e.g. drip=100/10)", v, slash + 1);
        pg->drip_bytes = (long)b;
        pg->drip_ms = (long)ms;
    } else {
        return fail(p, "unknown key '%s'", k);
    }
    return 0;
}

/* A `body <<TAG` or `raw <<TAG` block: lines up to the one that is just TAG. The
 * indentation of the TAG line is removed from every line. Raw lines end in CRLF. */
static int read_block(parser *p, const char *tag, bool raw)
{
    site_page *pg = p->cur;
    if (claim_body(p, raw ? "raw" : "body") < 0)
        return -1;
    int start_line = p->line;
    size_t start_pos = p->pos, len;
    const char *l;
    size_t indent = 0;
    bool found = false;
    while ((l = next_line(p, &len))) {
        size_t a = 0, b = len;
        while (a < b && (l[a] == ' ' || l[a] == '\t'))
            a++;
        while (b > a && (l[b - 1] == ' ' || l[b - 1] == '\t'))
            b--;
        if (b - a == strlen(tag) && !memcmp(l + a, tag, b - a)) {
            indent = a;
            found = true;
            break;
        }
    }
    if (!found) {
        p->line = start_line;
        return fail(p, "no line '%s' ends this block", tag);
    }
    int end_line = p->line;
    size_t end_pos = p->pos;
    p->pos = start_pos;
    p->line = start_line;
    sbuf b = {0};
    sbuf_reserve(&b, 0);
    while (p->line < end_line - 1 && (l = next_line(p, &len))) {
        size_t skip = 0;
        while (skip < indent && skip < len && (l[skip] == ' ' || l[skip] == '\t'))
            skip++;
        sbuf_add(&b, l + skip, len - skip);
        sbuf_adds(&b, raw ? "\r\n" : "\n");
    }
    p->pos = end_pos;
    p->line = end_line;
    free(pg->body);
    pg->body = sbuf_take(&b, &pg->body_len);
    pg->kind = raw ? BODY_RAW : BODY_TEXT;
    return 0;
}

static void page_free(site_page *pg)
{
    if (!pg)
        return;
    for (size_t i = 0; i < pg->nlinks; i++)
        free(pg->links[i]);
    for (size_t i = 0; i < pg->nheaders; i++)
        free(pg->headers[i]);
    free(pg->links);
    free(pg->headers);
    free(pg->path);
    free(pg->type);
    free(pg->charset);
    free(pg->location);
    free(pg->body);
    free(pg->link_prefix);
    free(pg->retry_after);
    free(pg->need_cookie);
    free(pg->need_auth);
    free(pg->need_digest);
    free(pg->login);
    free(pg->need_form);
    free(pg);
}

static int end_page(parser *p)
{
    site_page *pg = p->cur;
    if (!pg)
        return 0;
    if (pg->status == 0)
        pg->status = pg->location ? 302 : 200;
    p->cur = NULL;
    if (p->fill_set && pg->kind != BODY_BYTES)
        return fail(p, "page %s: fill= goes with bytes= only", pg->path);
    if (pg->gzip && pg->kind == BODY_RAW)
        return fail(p, "page %s: encoding=gzip does not go with raw (write the bytes)", pg->path);
    return 0;
}

static int start_page(parser *p, char **w, int n)
{
    if (end_page(p) < 0)
        return -1;
    if (n < 2)
        return fail(p, "page needs a path, e.g. 'page /about'");
    if (w[1][0] != '/')
        return fail(p, "page path '%s' must start with '/'", w[1]);
    if (!strcmp(w[1], "/__stats"))
        return fail(p, "/__stats is the server's own statistics page");
    for (size_t i = 0; i < p->s->npages; i++)
        if (!strcmp(p->s->pages[i]->path, w[1]))
            return fail(p, "page %s already defined at line %d", w[1], p->s->pages[i]->line);
    p->s->pages = xreallocarray(p->s->pages, p->s->npages + 1, sizeof *p->s->pages);
    site_page *pg = xcalloc(1, sizeof *pg);
    p->s->pages[p->s->npages++] = pg;
    pg->line = p->line;
    pg->delay_ms = -1;
    pg->reset_after = -1;
    pg->kind = BODY_HTML;
    pg->path = xstrdup(w[1]);
    pg->type = xstrdup("text/html");
    pg->charset = xstrdup("utf-8");
    p->cur = pg;
    p->charset_set = p->has_body = p->has_html = p->fill_set = false;
    for (int i = 2; i < n; i++) {
        if (!strchr(w[i], '='))
            return fail(p, "expected key=value after the path, got '%s'", w[i]);
        if (set_key(p, w[i]) < 0)
            return -1;
    }
    return 0;
}

/* One line inside (or starting) a page. */
static int parse_line(parser *p, char *line)
{
    char *w[MAX_WORDS];
    /* header lines keep their text as is (after the keyword, up to a comment) */
    char *t = line;
    while (*t == ' ' || *t == '\t')
        t++;
    if (!strncmp(t, "header", 6) && (t[6] == ' ' || t[6] == '\t')) {
        if (!p->cur)
            return fail(p, "header outside a page");
        char *v = t + 7;
        while (*v == ' ' || *v == '\t')
            v++;
        for (char *c = v; *c; c++)
            if (*c == '#' && (c[-1] == ' ' || c[-1] == '\t')) {
                *c = '\0';
                break;
            }
        size_t n = strlen(v);
        while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
            v[--n] = '\0';
        char *colon = strchr(v, ':');
        if (!colon || colon == v)
            return fail(p, "header needs 'Name: value'");
        push(&p->cur->headers, &p->cur->nheaders, v);
        return 0;
    }
    int n = split_words(p, line, w, MAX_WORDS);
    if (n <= 0)
        return n;
    if (!strcmp(w[0], "page"))
        return start_page(p, w, n);
    if (!p->cur)
        return fail(p, "'%s' outside a page (start one with 'page /path')", w[0]);
    if (!strcmp(w[0], "link")) {
        if (n < 2)
            return fail(p, "link needs a URL");
        if (claim_html(p, "a link line") < 0)
            return -1;
        for (int i = 1; i < n; i++)
            push(&p->cur->links, &p->cur->nlinks, w[i]);
        return 0;
    }
    if (!strcmp(w[0], "body") || !strcmp(w[0], "raw")) {
        const char *tag = NULL;
        if (n == 2 && !strncmp(w[1], "<<", 2) && w[1][2])
            tag = w[1] + 2;
        else if (n == 3 && !strcmp(w[1], "<<"))
            tag = w[2];
        if (!tag)
            return fail(p, "expected '%s <<TAG'", w[0]);
        return read_block(p, tag, w[0][0] == 'r');
    }
    for (int i = 0; i < n; i++) {
        if (!strchr(w[i], '='))
            return fail(p, "unknown directive '%s'", w[i]);
        if (set_key(p, w[i]) < 0)
            return -1;
    }
    return 0;
}

static int by_path(const void *a, const void *b)
{
    return strcmp((*(site_page *const *)a)->path, (*(site_page *const *)b)->path);
}

/* The lines of p->text, read into a new site. */
static site *parse_text(parser *p)
{
    p->s = xcalloc(1, sizeof *p->s);
    int rc = 0;
    const char *l;
    size_t len;
    while (rc == 0 && (l = next_line(p, &len))) {
        if (memchr(l, '\0', len)) {
            rc = fail(p, "NUL byte in the line (binary data goes in a file: body=@FILE)");
            break;
        }
        char *line = xstrndup(l, len);
        rc = parse_line(p, line);
        free(line);
    }
    if (rc == 0)
        rc = end_page(p);
    if (rc == 0 && p->s->npages == 0) {
        p->line = 0;
        rc = fail(p, "no pages (start one with 'page /')");
    }
    if (rc < 0) {
        site_free(p->s);
        return NULL;
    }
    qsort(p->s->pages, p->s->npages, sizeof *p->s->pages, by_path);
    return p->s;
}

site *site_parse_buffer(const char *name, const char *text, size_t len, const char *dir, char *err,
                        size_t errlen)
{
    parser p = {.file = name ? name : "(buffer)",
                .dir = dir,
                .no_files = !dir,
                .text = text ? text : "",
                .len = text ? len : 0,
                .err = err,
                .errlen = errlen};
    return parse_text(&p);
}

site *site_load(const char *file, char *err, size_t errlen)
{
    parser p = {.file = file, .err = err, .errlen = errlen};
    int e = 0;
    char *text = read_whole(file, &p.len, &e);
    if (!text) {
        fail(&p, "cannot read: %s", strerror(e));
        return NULL;
    }
    p.text = text;
    const char *slash = strrchr(file, '/');
    char *dir = slash ? xstrndup(file, slash == file ? 1 : (size_t)(slash - file)) : NULL;
    p.dir = dir;
    site *s = parse_text(&p);
    free(text);
    free(dir);
    return s;
}

static void render_html(sbuf *b, const site_page *pg)
{
    sbuf_printf(b,
                "<!DOCTYPE html>\n<html><head><title>%d %s</title></head>\n<body>\n"
                "<h1>%s</h1>\n",
                pg->status, site_reason(pg->status), pg->path);
    if (pg->location)
        sbuf_printf(b, "<p>See <a href=\"%s\">%s</a></p>\n", pg->location, pg->location);
    for (size_t i = 0; i < pg->nlinks; i++)
        sbuf_printf(b, "<a href=\"%s\">%s</a>\n", pg->links[i], pg->links[i]);
    gen_append_links(b, pg->link_prefix ? pg->link_prefix : "/l/", pg->gen_links);
    if (pg->nest)
        gen_append_nest(b, pg->nest);
    sbuf_adds(b, "</body></html>\n");
}

static void expand(char **s, size_t *len, const char *base)
{
    if (!*s)
        return;
    sbuf b = {0};
    sbuf_add_expanded(&b, *s, len ? *len : strlen(*s), base);
    size_t n;
    char *out = sbuf_take(&b, &n);
    free(*s);
    *s = out;
    if (len)
        *len = n;
}

/* encoding=gzip: the body from now on is the gzip stream, and says so. */
static void compress_body(site_page *pg)
{
    size_t len;
    char *gz = pg->kind == BODY_BYTES ? gz_compress_fill(pg->fill, (uint64_t)pg->bytes, &len)
                                      : gz_compress(pg->body ? pg->body : "", pg->body_len, &len);
    free(pg->body);
    pg->body = gz;
    pg->body_len = len;
    pg->kind = BODY_TEXT;
    push(&pg->headers, &pg->nheaders, "Content-Encoding: gzip");
}

void site_finish(site *s, const char *base)
{
    for (size_t i = 0; i < s->npages; i++) {
        site_page *pg = s->pages[i];
        if (pg->kind == BODY_HTML) {
            sbuf b = {0};
            render_html(&b, pg);
            free(pg->body);
            pg->body = sbuf_take(&b, &pg->body_len);
        }
        expand(&pg->body, &pg->body_len, base);
        expand(&pg->location, NULL, base);
        for (size_t h = 0; h < pg->nheaders; h++)
            expand(&pg->headers[h], NULL, base);
        if (pg->gzip)
            compress_body(pg);
    }
}

site_page *site_find(const site *s, const char *path)
{
    site_page key = {.path = (char *)path}, *kp = &key;
    site_page **hit = bsearch(&kp, s->pages, s->npages, sizeof *s->pages, by_path);
    return hit ? *hit : NULL;
}

void site_free(site *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->npages; i++)
        page_free(s->pages[i]);
    free(s->pages);
    free(s);
}

const char *site_reason(int status)
{
    switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 201: return "Created";
    case 204: return "No Content";
    case 206: return "Partial Content";
    case 300: return "Multiple Choices";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 303: return "See Other";
    case 304: return "Not Modified";
    case 307: return "Temporary Redirect";
    case 308: return "Permanent Redirect";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 410: return "Gone";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 505: return "HTTP Version Not Supported";
    default: return "Status";
    }
}
