/* html_tokenizer.h — a streaming HTML tokenizer for link extraction: the states of the
 * WHATWG HTML standard's tokenizer (section 13.2.5) that decide where tags are, no
 * tree. Text is skipped with memchr; what comes out is start tags with their
 * attributes, end tags, and the text of raw-text elements.
 *
 * As the standard has it: tag and attribute names are ASCII-lower-cased, NUL is
 * U+FFFD, CR and CRLF are LF; attribute values have their character references
 * decoded (all the standard's named ones, legacy ones without ';' as in an
 * attribute, numeric ones with the standard's replacements); of two attributes of
 * the same name only the first counts; comments end at "-->" or "--!>" ("<!-->" and
 * "<!--->" are whole ones), "<!DOCTYPE ...>", "<?...>", "</...>" not starting with a
 * letter and "<![CDATA[...>" are bogus comments ending at '>' (a DOCTYPE longer
 * than max_tag stops the tokenizer, as a tag does); after a start tag
 * script, style, xmp, iframe, noembed, noframes, textarea, title the text up to its
 * own end tag is text (script's with the script-data escape states), after
 * plaintext all of it. A tag cut by the end of the input is dropped.
 *
 * What it does not do, having no tree: foreign content (svg, math: their CDATA
 * sections and their style and title elements tokenized as markup), <noscript> as
 * raw text (the standard's scripting-disabled reading), the modes in which the tree
 * builder ignores a start tag (a <style> in a <select>).
 *
 * The input comes in pieces of any size; the tokens are those of the whole input.
 * It holds one tag at a time (at most max_tag bytes), nothing else that grows.
 */
#ifndef CRAWL_HTML_TOKENIZER_H
#define CRAWL_HTML_TOKENIZER_H

#include <stdbool.h>
#include <stddef.h>

typedef struct html_tokenizer_ops {
    /* name: lower case; atts: NULL-terminated name/value pairs (values never NULL:
     * a value-less attribute has ""), valid during the call; self_closing: it
     * ended in "/>". */
    void (*start_tag)(void *ctx, const char *name, const char *const *atts, bool self_closing);
    /* An end tag (its attributes dropped); the end of a raw-text element cut by the
     * end of the input too. May be NULL. */
    void (*end_tag)(void *ctx, const char *name);
    /* Text of a raw-text or RCDATA element named elem, in pieces. May be NULL. */
    void (*raw_text)(void *ctx, const char *elem, const char *text, size_t len);
} html_tokenizer_ops;

typedef struct html_tokenizer html_tokenizer;

/* max_tag: a tag longer than this (from its '<' to its '>') stops the tokenizer.
 * max_work: the attribute-name comparisons of all the page's tags (n * (n - 1) / 2
 * for a tag of n) at most; past it the tokenizer stops. */
html_tokenizer *html_tokenizer_new(const html_tokenizer_ops *ops, void *ctx, size_t max_tag,
                                   size_t max_work);
void html_tokenizer_feed(html_tokenizer *t, const char *data, size_t len);
/* End of input. */
void html_tokenizer_finish(html_tokenizer *t);
/* No more tokens (a caller's limit); the rest of the input is ignored. */
void html_tokenizer_stop(html_tokenizer *t);
bool html_tokenizer_stopped(const html_tokenizer *t);
/* The work spent so far (attribute-name comparisons). */
size_t html_tokenizer_work(const html_tokenizer *t);
void html_tokenizer_free(html_tokenizer *t);

/* Decodes the character references of an attribute value in[0..n) into out (room
 * for 3 * n + 1 bytes; NUL-terminated), also NUL to U+FFFD and CR, CRLF to LF.
 * Returns the length written. */
size_t html_decode_attr(const char *in, size_t n, char *out);

#endif
