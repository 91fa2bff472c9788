/* links_skip.h — the link parser's drain (internal to links.c): finds where a construct
 * libxml2 is stuck in ends, so that the text before that end can be dropped rather
 * than given to libxml2, which would hold all of it.
 *
 * libxml2's push parser parses nothing until it has seen the end of what it is in:
 * text until a '<', a comment until "-->", a script until "</script". A page of 16 MiB
 * without that end (NUL bytes, text without '<', a gzip bomb's zeros) would be held
 * whole. None of that text can hold a link, so once libxml2 holds enough of it
 * (links.c), the rest is looked through here for the end, and only the end and what
 * follows it go on to libxml2.
 *
 * The stream is given in pieces of any size; the answer is the one the whole stream
 * would give. An end may begin in the last bytes libxml2 already has (given to
 * text_skip_start), or in bytes of an earlier piece that were kept back as the start
 * of a possible end (then text_skip_scan hands them back in emit).
 */
#ifndef CRAWL_LINKS_SKIP_H
#define CRAWL_LINKS_SKIP_H

#include <stdbool.h>
#include <stddef.h>

/* Longest end looked for ("</script" is 8), plus one. */
#define SKIP_MAX_END 16

typedef struct text_skip {
    const char *end[2]; /* one or two ends, sharing their first byte */
    size_t nend;
    bool nocase;                /* ASCII letters match either case */
    char win[2 * SKIP_MAX_END]; /* [0, tail): bytes libxml2 has; [tail, tail + carry):
                                  bytes kept back, not given to it */
    size_t tail, carry;
    char emit[SKIP_MAX_END]; /* after a find: kept-back bytes the end begins with */
    size_t emit_len;
} text_skip;

/* Look for end1 or end2 (NULL: none; both non-empty, shorter than SKIP_MAX_END, with
 * the same first byte, which is not a letter). fed: the last fed_len bytes libxml2
 * has (only the last
 * SKIP_MAX_END - 1 of them matter). */
void text_skip_start(text_skip *s, const char *end1, const char *end2, bool nocase, const char *fed,
                     size_t fed_len);

/* The next n bytes of the stream. Returns how many of them are used up — dropped, or
 * kept back as a possible start of an end. When *found, an end begins at
 * d[returned], after the s->emit_len bytes of s->emit (when it began in kept-back
 * bytes, or at once after the bytes libxml2 has): the caller gives libxml2 s->emit
 * then d[returned..], and the search is over. */
size_t text_skip_scan(text_skip *s, const char *d, size_t n, bool *found);

#endif
