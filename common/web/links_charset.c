/* links_charset.c — a body in any charset to valid UTF-8, chunk by chunk (see
 * links_charset.h). */
#include "links_charset.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

/* Decoded text with replacements is gathered here before it goes out, so that a
 * page full of latin-1 bytes is not handed to libxml2 a few bytes at a time. */
#define SCRATCH 4096

static const char REPLACEMENT[] = "\xEF\xBF\xBD"; /* U+FFFD in UTF-8 */

enum { UTF8_INVALID = 0, UTF8_TRUNCATED = -1 };

/* The length (1 to 4) of the valid UTF-8 character at s (n > 0 bytes available),
 * UTF8_INVALID, or UTF8_TRUNCATED when s ends inside a character that is valid so
 * far. Overlong forms, surrogates and code points past U+10FFFF are invalid, and so
 * is NUL here: libxml2 does not take it the same way at every chunk boundary. */
static int utf8_char(const unsigned char *s, size_t n)
{
    unsigned char c = s[0], lo = 0x80, hi = 0xBF;
    int len;
    if (c < 0x80)
        return c ? 1 : UTF8_INVALID;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        lo = c == 0xE0 ? 0xA0 : 0x80;
        hi = c == 0xED ? 0x9F : 0xBF;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        lo = c == 0xF0 ? 0x90 : 0x80;
        hi = c == 0xF4 ? 0x8F : 0xBF;
    } else {
        return UTF8_INVALID;
    }
    for (int i = 1; i < len; i++) {
        if ((size_t)i >= n)
            return UTF8_TRUNCATED;
        if (s[i] < lo || s[i] > hi)
            return UTF8_INVALID;
        lo = 0x80; /* the special ranges only apply to the second byte */
        hi = 0xBF;
    }
    return len;
}

/* The length of the run of ASCII bytes other than NUL at the start of s: most of a
 * page. Eight bytes at a time: a word passes when no byte has its high bit set and
 * no byte is zero (the usual has-zero-byte test). */
static size_t ascii_run(const unsigned char *s, size_t n)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        if ((w & highs) || ((w - ones) & ~w & highs))
            break;
    }
    while (i < n && s[i] != 0 && s[i] < 0x80)
        i++;
    return i;
}

/* Output buffered in a scratch area, flushed to the sink when full and at the end. */
typedef struct scratch {
    char buf[SCRATCH];
    size_t len;
} scratch;

static void scratch_flush(charset_decoder *d, scratch *sc)
{
    if (sc->len > 0)
        d->out(d->ctx, sc->buf, sc->len);
    sc->len = 0;
}

static void scratch_put(charset_decoder *d, scratch *sc, const void *p, size_t n)
{
    if (sc->len + n > sizeof sc->buf)
        scratch_flush(d, sc);
    memcpy(sc->buf + sc->len, p, n);
    sc->len += n;
}

static void set_carry(charset_decoder *d, const char *p, size_t n)
{
    memcpy(d->carry, p, n);
    d->carry_len = n;
}

/* UTF-8 mode. The valid prefix (usually all of it) goes out without a copy; from
 * the first invalid byte on, output is rebuilt in scratch, each invalid byte as the
 * latin-1 character of the same value (NUL as U+FFFD). A character cut by the end
 * is carried, unless at_end. */
static void utf8_decode(charset_decoder *d, const char *data, size_t n, bool at_end)
{
    const unsigned char *s = (const unsigned char *)data;
    size_t i = 0;
    int k;
    while ((i += ascii_run(s + i, n - i)) < n && (k = utf8_char(s + i, n - i)) > 0)
        i += (size_t)k;
    if (i > 0)
        d->out(d->ctx, data, i);
    if (i == n)
        return;

    scratch sc;
    sc.len = 0;
    while (i < n) {
        k = utf8_char(s + i, n - i);
        if (k == UTF8_TRUNCATED && !at_end)
            break;
        if (k > 0) {
            scratch_put(d, &sc, s + i, (size_t)k);
            i += (size_t)k;
        } else if (s[i] == 0) {
            scratch_put(d, &sc, REPLACEMENT, sizeof REPLACEMENT - 1);
            i++;
        } else {
            unsigned char latin1[2] = {(unsigned char)(0xC0 | s[i] >> 6),
                                       (unsigned char)(0x80 | (s[i] & 0x3F))};
            scratch_put(d, &sc, latin1, 2);
            i++;
        }
    }
    scratch_flush(d, &sc);
    set_carry(d, data + i, n - i);
}

/* iconv's output, always whole UTF-8 characters, still goes through utf8_decode for
 * its NULs. */
static void conv_flush(charset_decoder *d, scratch *conv)
{
    utf8_decode(d, conv->buf, conv->len, true);
    conv->len = 0;
}

/* A piece may be split over two flushes (an ASCII run), but not one character (a
 * U+FFFD): utf8_decode would take its halves for invalid bytes, and where the halves
 * fall depends on how the body was cut into chunks. */
static void conv_put(charset_decoder *d, scratch *conv, const char *p, size_t n)
{
    if (n <= LINKS_CARRY && n > sizeof conv->buf - conv->len)
        conv_flush(d, conv);
    while (n > 0) {
        if (conv->len == sizeof conv->buf)
            conv_flush(d, conv);
        size_t room = sizeof conv->buf - conv->len;
        size_t k = n < room ? n : room;
        memcpy(conv->buf + conv->len, p, k);
        conv->len += k;
        p += k;
        n -= k;
    }
}

/* Converts n bytes with iconv into conv, U+FFFD for each byte it refuses. Returns
 * how many bytes at the end are left as the start of a character (never when
 * at_end). */
static size_t iconv_span(charset_decoder *d, scratch *conv, const char *data, size_t n, bool at_end)
{
    char *in = (char *)data; /* iconv's prototype; it does not write to the input */
    size_t in_left = n;
    while (in_left > 0) {
        char *o = conv->buf + conv->len;
        size_t o_left = sizeof conv->buf - conv->len;
        size_t r = iconv(d->cd, &in, &in_left, &o, &o_left);
        conv->len = sizeof conv->buf - o_left;
        if (r != (size_t)-1)
            break;
        if (errno == E2BIG && conv->len > 0) {
            conv_flush(d, conv);
            continue;
        }
        if (errno == EINVAL && !at_end && in_left <= LINKS_CARRY)
            break; /* the rest is the start of a character */
        conv_put(d, conv, REPLACEMENT, sizeof REPLACEMENT - 1);
        in++;
        in_left--;
    }
    return in_left;
}

/* iconv mode. For a single-byte charset that keeps ASCII as is, runs of ASCII are
 * copied rather than converted (iconv is slow); for the others, all goes through
 * iconv, and an incomplete character at the end is carried, unless at_end. */
static void iconv_decode(charset_decoder *d, const char *data, size_t n, bool at_end)
{
    scratch conv;
    conv.len = 0;
    size_t left = 0;
    if (!d->ascii_kept) {
        left = iconv_span(d, &conv, data, n, at_end);
    } else {
        const unsigned char *s = (const unsigned char *)data;
        size_t i = 0;
        while (i < n) {
            size_t a = ascii_run(s + i, n - i);
            conv_put(d, &conv, data + i, a);
            i += a;
            size_t b = i;
            while (b < n && (s[b] == 0 || s[b] >= 0x80))
                b++;
            iconv_span(d, &conv, data + i, b - i, true); /* single bytes: none left */
            i = b;
        }
    }
    if (at_end) { /* the closing shift sequence of a stateful charset, if any */
        conv_flush(d, &conv);
        char *o = conv.buf;
        size_t o_left = sizeof conv.buf;
        iconv(d->cd, NULL, NULL, &o, &o_left);
        conv.len = sizeof conv.buf - o_left;
    }
    conv_flush(d, &conv);
    set_carry(d, data + n - left, left); /* after conv_flush, which clears it */
}

static void decode(charset_decoder *d, const char *data, size_t n, bool at_end)
{
    if (d->cd == (iconv_t)-1)
        utf8_decode(d, data, n, at_end);
    else
        iconv_decode(d, data, n, at_end);
}

/* Single-byte charsets without shift states in which ASCII stays ASCII. */
static bool keeps_ascii(const char *charset)
{
    static const char *const prefixes[] = {"iso-8859-",   "iso8859-", "iso_8859-",
                                           "windows-125", "cp125",    "latin",
                                           "us-ascii",    "ascii",    "koi8-"};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
        if (strncasecmp(charset, prefixes[i], strlen(prefixes[i])) == 0)
            return true;
    return false;
}

static bool is_utf8_name(const char *charset)
{
    return strcasecmp(charset, "utf-8") == 0 || strcasecmp(charset, "utf8") == 0;
}

bool charset_decoder_init(charset_decoder *d, const char *charset, utf8_sink out, void *ctx)
{
    memset(d, 0, sizeof *d);
    d->cd = (iconv_t)-1;
    d->out = out;
    d->ctx = ctx;
    if (!charset || !*charset)
        return false;
    if (is_utf8_name(charset))
        return true;
    d->cd = iconv_open("UTF-8", charset);
    d->ascii_kept = keeps_ascii(charset);
    return d->cd != (iconv_t)-1;
}

void charset_decoder_feed(charset_decoder *d, const char *data, size_t len)
{
    /* A carried character is completed from the start of the new data, joined in a
     * small buffer; each round uses up new data, so this ends. */
    while (len > 0 && d->carry_len > 0) {
        char joined[3 * LINKS_CARRY];
        size_t room = sizeof joined - d->carry_len;
        size_t take = len < room ? len : room;
        memcpy(joined, d->carry, d->carry_len);
        memcpy(joined + d->carry_len, data, take);
        size_t joined_len = d->carry_len + take;
        d->carry_len = 0;
        data += take;
        len -= take;
        decode(d, joined, joined_len, false);
    }
    if (len > 0)
        decode(d, data, len, false);
}

void charset_decoder_finish(charset_decoder *d)
{
    char rest[LINKS_CARRY];
    size_t n = d->carry_len;
    memcpy(rest, d->carry, n);
    d->carry_len = 0;
    decode(d, rest, n, true);
}

void charset_decoder_free(charset_decoder *d)
{
    if (d->cd != (iconv_t)-1)
        iconv_close(d->cd);
    d->cd = (iconv_t)-1;
}
