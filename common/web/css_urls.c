/* css_urls.c — url(...) and @import in CSS, by a tokenizer after CSS Syntax Level 3
 * (css_urls.h): comments (section 4.3.2), strings (4.3.5), escapes (4.3.7), ident-like
 * tokens and url tokens (4.3.4, 4.3.6). Only what tells a URL from other text is
 * tokenized; everything else is skipped a code point (here: a byte) at a time.
 */
#include "css_urls.h"

#include <stdbool.h>
#include <stdlib.h>
#include <strings.h>

#include "alloc.h"

typedef struct scan {
    const char *p, *end;
    char *buf; /* the token being read (a URL, a string, a name) */
    size_t len, cap;
} scan;

static bool is_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int hex_value(char c)
{
    return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

/* A name code point: letters, digits, '-', '_', and any non-ASCII byte. */
static bool is_name(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-'
        || c == '_' || (unsigned char)c >= 0x80;
}

static void put(scan *s, const char *data, size_t n)
{
    xappend(&s->buf, &s->len, &s->cap, data, n);
}

/* A code point as UTF-8; the ones CSS replaces (NUL, surrogates, past U+10FFFF) are
 * U+FFFD. */
static void put_code_point(scan *s, unsigned long cp)
{
    char u[4];
    if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
        cp = 0xFFFD;
    if (cp < 0x80) {
        u[0] = (char)cp;
        put(s, u, 1);
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | (cp >> 6));
        u[1] = (char)(0x80 | (cp & 0x3F));
        put(s, u, 2);
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | (cp >> 12));
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
        put(s, u, 3);
    } else {
        u[0] = (char)(0xF0 | (cp >> 18));
        u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[3] = (char)(0x80 | (cp & 0x3F));
        put(s, u, 4);
    }
}

/* At a backslash that starts a valid escape (not before a newline): consume it and
 * append what it stands for (4.3.7). */
static void escape(scan *s)
{
    s->p++; /* the backslash */
    if (s->p >= s->end) {
        put_code_point(s, 0xFFFD);
        return;
    }
    if (!is_hex(*s->p)) {
        put(s, s->p++, 1);
        return;
    }
    unsigned long cp = 0;
    for (int i = 0; i < 6 && s->p < s->end && is_hex(*s->p); i++)
        cp = cp * 16 + (unsigned long)hex_value(*s->p++);
    if (s->p < s->end && is_space(*s->p))
        s->p += (s->p[0] == '\r' && s->p + 1 < s->end && s->p[1] == '\n') ? 2 : 1;
    put_code_point(s, cp);
}

static bool valid_escape(const scan *s)
{
    return s->p < s->end && *s->p == '\\' && (s->p + 1 >= s->end || s->p[1] != '\n');
}

static void skip_space(scan *s)
{
    while (s->p < s->end && is_space(*s->p))
        s->p++;
}

/* The text in s->buf, handed over when not empty; the buffer is emptied. */
static void emit(scan *s, css_url_fn fn, void *ctx)
{
    size_t a = 0, b = s->len;
    while (a < b && is_space(s->buf[a]))
        a++;
    while (b > a && is_space(s->buf[b - 1]))
        b--;
    if (b > a) {
        put(s, "", 1);
        s->buf[b] = '\0';
        fn(ctx, s->buf + a);
    }
    s->len = 0;
}

/* A string token, at its opening quote (4.3.5): its value in s->buf. An unescaped
 * newline ends it (a bad string: its value is dropped). Returns false for a bad one. */
static bool string_token(scan *s)
{
    char quote = *s->p++;
    s->len = 0;
    while (s->p < s->end) {
        char c = *s->p;
        if (c == quote) {
            s->p++;
            return true;
        }
        if (c == '\n')
            return false; /* bad string: the newline is left for the next token */
        if (c == '\\') {
            if (s->p + 1 < s->end && s->p[1] == '\n') {
                s->p += 2; /* an escaped newline continues the string */
                continue;
            }
            escape(s);
            continue;
        }
        put(s, s->p++, 1);
    }
    return true; /* the end of the text ends the string */
}

/* An unquoted url token, after "url(" and its whitespace (4.3.6): the URL in s->buf.
 * Returns false for a bad url (a quote, '(' or a control byte inside): the rest of it
 * is consumed up to ')' and dropped. */
static bool url_token(scan *s)
{
    s->len = 0;
    while (s->p < s->end) {
        char c = *s->p;
        if (c == ')') {
            s->p++;
            return true;
        }
        if (is_space(c)) {
            skip_space(s);
            if (s->p >= s->end || *s->p == ')') {
                s->p += s->p < s->end;
                return true;
            }
            break; /* whitespace inside: a bad url */
        }
        if (c == '"' || c == '\'' || c == '(' || (unsigned char)c < 0x20 || c == 0x7f)
            break;
        if (c == '\\') {
            if (!valid_escape(s))
                break;
            escape(s);
            continue;
        }
        put(s, s->p++, 1);
    }
    if (s->p >= s->end)
        return true; /* the end of the text ends the url */
    /* consume the remnants of a bad url (4.3.14) */
    while (s->p < s->end && *s->p != ')') {
        if (valid_escape(s))
            escape(s);
        else
            s->p++;
    }
    s->p += s->p < s->end;
    return false;
}

/* A name (4.3.11) into s->buf. */
static void name(scan *s)
{
    s->len = 0;
    while (s->p < s->end) {
        if (is_name(*s->p))
            put(s, s->p++, 1);
        else if (valid_escape(s))
            escape(s);
        else
            break;
    }
}

static bool name_is(const scan *s, const char *word, size_t n)
{
    return s->len == n && strncasecmp(s->buf, word, n) == 0;
}

void css_urls(const char *css, size_t len, css_url_fn fn, void *ctx)
{
    if (len == 0)
        return; /* an empty <style>: css may be NULL (no arithmetic on it) */
    scan s = {.p = css, .end = css + len};
    bool import = false; /* after @import: the next string is a URL */
    while (s.p < s.end) {
        char c = *s.p;
        if (c == '/' && s.p + 1 < s.end && s.p[1] == '*') {
            s.p += 2;
            while (s.p < s.end && !(s.p[0] == '*' && s.p + 1 < s.end && s.p[1] == '/'))
                s.p++;
            s.p += s.p < s.end ? 2 : 0;
        } else if (c == '"' || c == '\'') {
            bool ok = string_token(&s);
            if (import && ok)
                emit(&s, fn, ctx);
            import = false;
        } else if (c == '@') {
            s.p++;
            name(&s);
            import = name_is(&s, "import", 6);
        } else if (is_name(c) || valid_escape(&s)) {
            name(&s);
            if (s.p < s.end && *s.p == '(' && name_is(&s, "url", 3)) {
                s.p++;
                skip_space(&s);
                if (s.p < s.end && (*s.p == '"' || *s.p == '\'')) {
                    if (string_token(&s)) /* url("x"): a function with a string */
                        emit(&s, fn, ctx);
                } else if (url_token(&s)) {
                    emit(&s, fn, ctx);
                }
            }
            import = false;
        } else {
            if (!is_space(c))
                import = false;
            s.p++;
        }
        s.len = 0;
    }
    free(s.buf);
}
