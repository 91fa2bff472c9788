/* links.h — the link parser, fed chunk by chunk as the body arrives, so a page never
 * needs to be held whole. HTML goes through the HTML tokenizer (html_tokenizer.h, the
 * WHATWG standard's states; the default) or libxml2's HTML push parser (links_new_engine);
 * XML through libxml2's. What follows about memory is libxml2's path; the tokenizer
 * holds one tag (at most LINKS_MAX_TAG bytes) and 512 open elements' hashes.
 *
 * Like the chapter's regex it collects every href attribute, of any element (a, area,
 * link, ...), but parsed as HTML: unquoted values, upper-case tags, whitespace around
 * values, entities. <base href> changes the base for the links after it. Each href is
 * resolved (url_resolve) and handed over absolute, without fragment; duplicates are
 * passed on too (the caller's set removes them). libxml2's errors are never printed.
 *
 * Memory is bounded per parser, whatever the page holds: libxml2 allocates at most
 * LINKS_MEMORY_BOUND bytes for one (measured: about 120 KB for a page stuck in 16 MiB
 * of NUL bytes, text without '<' or an endless comment; 390 KB at most, for a page of
 * new attribute names), plus the links_parser itself (about 4 KB). libxml2 keeps little
 * of what it has parsed, holds at most 64 KB it has not, and the text past that up to
 * the end of what it is stuck in (a '<', "-->", "</script") is dropped unparsed: it
 * cannot hold a link. Where no such end is known (a DOCTYPE, an XML reference without
 * its ';') the parse stops, and the links before count. See links.c's limits.
 */
#ifndef CRAWL_LINKS_H
#define CRAWL_LINKS_H

#include <stdbool.h>
#include <stddef.h>

/* What libxml2 allocates for one parser at most (tests/unit/test_links.c). */
#define LINKS_MEMORY_BOUND (512 * 1024)

typedef void (*links_fn)(void *ctx, const char *url);
typedef struct links_parser links_parser;

/* Whether a response of this media type (no parameters, lower case) is parsed for
 * links: text/html, application/xhtml+xml, application/xml. */
bool links_wanted(const char *media_type);

/* base_url: the page's URL. charset: from Content-Type (NULL means utf-8).
 * xml: parse as XML rather than HTML (application/xml); an XML document's href
 * attributes are collected the same way. NULL only when fn is NULL. */
links_parser *links_new(const char *base_url, const char *charset, bool xml, links_fn fn,
                        void *ctx);
/* The same parser (HTML), but what it hands over is what the page needs to render
 * (wget -p's page requisites, links_requisites.h) — each URL a start tag loads, and the
 * url()s of <style> elements (at most 256 KiB of their text a page) — resolved as
 * hrefs are; the page's hrefs themselves are not. */
links_parser *links_new_requisites(const char *base_url, const char *charset, links_fn fn,
                                   void *ctx);
/* The two HTML link paths: html_tokenizer.h (the standard's tokenizer, no tree) and
 * libxml2's HTML SAX parser. links_new and links_new_requisites use
 * LINKS_DEFAULT_ENGINE; XML is always libxml2's. The links they give differ only
 * where libxml2 departs from the standard (tests/data/links/differences.txt). */
typedef enum links_engine { LINKS_LIBXML2, LINKS_TOKENIZER } links_engine;
#define LINKS_DEFAULT_ENGINE LINKS_TOKENIZER
/* An HTML parser on the given path (links_new_requisites's when requisites). */
links_parser *links_new_engine(const char *base_url, const char *charset, bool requisites,
                               links_engine engine, links_fn fn, void *ctx);
void links_feed(links_parser *lp, const char *data, size_t len);
/* End of body: flush, emitting any remaining links. */
void links_finish(links_parser *lp);
void links_free(links_parser *lp);

#endif
