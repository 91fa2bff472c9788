/* links_charset.h — the link parser's first stage (internal to links.c): turns a body
 * in any charset into valid UTF-8, chunk by chunk, so that libxml2 only ever sees
 * UTF-8. Decoding never fails, and the output does not depend on how the input was
 * split (a character cut in two by a chunk boundary is carried over to the next).
 *
 *   - UTF-8 (also: no charset, or one iconv does not know): valid UTF-8 is passed on
 *     as is, without a copy; each byte that is not part of valid UTF-8 is read as
 *     latin-1, as libxml2 itself does.
 *   - any other charset: iconv, with U+FFFD for bytes that are not valid in it (where
 *     libxml2's own decoding would stop the parse).
 */
#ifndef CRAWL_LINKS_CHARSET_H
#define CRAWL_LINKS_CHARSET_H

#include <iconv.h>
#include <stdbool.h>
#include <stddef.h>

typedef void (*utf8_sink)(void *ctx, const char *utf8, size_t len);

/* Longest character or shift sequence carried from one chunk to the next. */
#define LINKS_CARRY 16

typedef struct charset_decoder {
    iconv_t cd;              /* (iconv_t)-1 in UTF-8 mode */
    bool ascii_kept;         /* cd is for a single-byte charset in which ASCII stays ASCII */
    char carry[LINKS_CARRY]; /* the start of a character cut by the chunk boundary */
    size_t carry_len;
    utf8_sink out;
    void *ctx;
} charset_decoder;

/* charset: NULL or any string. Returns true when the charset is known (a UTF-8
 * name, or one iconv converts from), false when UTF-8 is used for lack of one. */
bool charset_decoder_init(charset_decoder *d, const char *charset, utf8_sink out, void *ctx);
void charset_decoder_feed(charset_decoder *d, const char *data, size_t len);
/* End of input: a character left incomplete is decoded as invalid bytes. */
void charset_decoder_finish(charset_decoder *d);
void charset_decoder_free(charset_decoder *d);

#endif
