/* fuzz_tokenizer.c — libFuzzer target for the HTML tokenizer (common/web/html_tokenizer.h)
 * and the link parser's tokenizer path (links.h, LINKS_TOKENIZER).
 *
 * Input: an HTML body, read as UTF-8 (links_charset.c). Checked:
 *   - the tokens are the same fed whole, byte by byte and in pieces of 7 bytes;
 *   - every name is non-empty and has no ASCII upper case letter, names and values
 *     are valid UTF-8 (the decoder's output stays so through the tokenizer), no tag
 *     has two attributes of one name;
 *   - html_decode_attr of each value's bytes writes at most 3 bytes per byte read;
 *   - differential: on the inputs where libxml2 and the standard cannot disagree
 *     (only a-z, 0-9, ' ', '\n', '=', '<', '>', no '<' between a '<' and its '>',
 *     ending with '>', none of the names of
 *     tokenizer_differences.txt's cases: raw text, html, body...), the links of both
 *     paths are the same.
 */
#include "fuzz_common.h"

#include "html_tokenizer.h"
#include "links.h"
#include "links_charset.h"

#include <stdbool.h>

static bool valid_utf8(const unsigned char *s)
{
    while (*s) {
        unsigned char c = *s;
        size_t n = c < 0x80          ? 1
            : c >= 0xC2 && c <= 0xDF ? 2
            : c >= 0xE0 && c <= 0xEF ? 3
            : c >= 0xF0 && c <= 0xF4 ? 4
                                     : 0;
        if (n == 0)
            return false;
        for (size_t i = 1; i < n; i++)
            if ((s[i] & 0xC0) != 0x80)
                return false;
        s += n;
    }
    return true;
}

/* Raw text comes in pieces cut anywhere: a run of it is written as one "[elem]text\n". */
static const char *text_of; /* the element of the run being written, or NULL */

static void end_text(record *r)
{
    if (text_of)
        record_adds(r, "\n");
    text_of = NULL;
}

static void check_name(const char *name)
{
    FUZZ_CHECK(*name);
    for (const char *p = name; *p; p++)
        FUZZ_CHECK(!(*p >= 'A' && *p <= 'Z'));
    FUZZ_CHECK(valid_utf8((const unsigned char *)name));
}

static void tok_start(void *ctx, const char *name, const char *const *atts, bool self_closing)
{
    record *r = ctx;
    end_text(r);
    check_name(name);
    record_adds(r, "<");
    record_adds(r, name);
    for (size_t i = 0; atts[i]; i += 2) {
        check_name(atts[i]);
        FUZZ_CHECK(atts[i + 1] && valid_utf8((const unsigned char *)atts[i + 1]));
        for (size_t k = 0; k < i; k += 2)
            FUZZ_CHECK(strcmp(atts[k], atts[i]) != 0);
        size_t n = strlen(atts[i + 1]);
        char *out = malloc(3 * n + 1);
        FUZZ_CHECK(out && html_decode_attr(atts[i + 1], n, out) <= 3 * n);
        free(out);
        record_adds(r, " ");
        record_adds(r, atts[i]);
        record_adds(r, "=");
        record_adds(r, atts[i + 1]);
    }
    record_adds(r, self_closing ? "/>\n" : ">\n");
}

static void tok_end(void *ctx, const char *name)
{
    end_text(ctx);
    check_name(name);
    record_adds(ctx, "</");
    record_adds(ctx, name);
    record_adds(ctx, ">\n");
}

static void tok_text(void *ctx, const char *elem, const char *text, size_t len)
{
    record *r = ctx;
    if (text_of != elem) {
        end_text(r);
        record_adds(r, "[");
        record_adds(r, elem);
        record_adds(r, "]");
        text_of = elem;
    }
    record_add(r, text, len);
}

static void to_tokenizer(void *ctx, const char *utf8, size_t len)
{
    html_tokenizer_feed(ctx, utf8, len);
}

static void tokens(record *out, const uint8_t *data, size_t size, size_t piece)
{
    static const html_tokenizer_ops ops = {tok_start, tok_end, tok_text};
    html_tokenizer *t = html_tokenizer_new(&ops, out, 4096, 100000);
    charset_decoder dec;
    charset_decoder_init(&dec, NULL, to_tokenizer, t);
    for (size_t off = 0; off < size;) {
        size_t n = piece && size - off > piece ? piece : size - off;
        charset_decoder_feed(&dec, (const char *)data + off, n);
        off += n;
    }
    charset_decoder_finish(&dec);
    charset_decoder_free(&dec);
    html_tokenizer_finish(t);
    end_text(out);
    html_tokenizer_free(t);
}

static void collect(void *ctx, const char *url)
{
    record_adds(ctx, url);
    record_adds(ctx, "\n");
}

static void links(record *out, links_engine engine, const uint8_t *data, size_t size)
{
    links_parser *lp =
        links_new_engine("http://example.com/dir/page.html", NULL, false, engine, collect, out);
    links_feed(lp, (const char *)data, size);
    links_finish(lp);
    links_free(lp);
}

/* Inputs on which libxml2 and the standard give the same links (see the top). */
static bool plain_input(const uint8_t *data, size_t size)
{
    if (size == 0 || data[size - 1] != '>')
        return false;
    bool in_tag = false; /* a '<' in a tag starts a tag for libxml2, not for the standard */
    for (size_t i = 0; i < size; i++) {
        uint8_t c = data[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == ' ' || c == '\n' || c == '='
              || c == '<' || c == '>'))
            return false;
        if (c == '<' && in_tag)
            return false;
        in_tag = c == '<' || (in_tag && c != '>');
    }
    static const char *const names[] = {"script", "style",   "title",    "textarea",  "xmp",
                                        "iframe", "noembed", "noframes", "plaintext", "html",
                                        "body",   "head",    "svg",      "math"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (memmem(data, size, names[k], strlen(names[k])))
            return false;
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    record whole = {0}, bytes = {0}, sevens = {0};
    tokens(&whole, data, size, 0);
    tokens(&bytes, data, size, 1);
    tokens(&sevens, data, size, 7);
    FUZZ_CHECK(record_equal(&whole, &bytes));
    FUZZ_CHECK(record_equal(&whole, &sevens));
    record_free(&whole);
    record_free(&bytes);
    record_free(&sevens);

    if (plain_input(data, size)) {
        record a = {0}, b = {0};
        links(&a, LINKS_LIBXML2, data, size);
        links(&b, LINKS_TOKENIZER, data, size);
        FUZZ_CHECK(record_equal(&a, &b));
        record_free(&a);
        record_free(&b);
    }
    return 0;
}
