/* links.h — the link parser: libxml2's HTML push parser, fed chunk by chunk as the body
 * arrives, so a page never needs to be held whole.
 *
 * Like the chapter's regex it collects every href attribute, of any element (a, area,
 * link, ...), but parsed as HTML: unquoted values, upper-case tags, whitespace around
 * values, entities. <base href> changes the base for the links after it. Each href is
 * resolved (url_resolve) and handed over absolute, without fragment; duplicates are
 * passed on too (the caller's set removes them). libxml2's errors are never printed.
 */
#ifndef CRAWL_LINKS_H
#define CRAWL_LINKS_H

#include <stdbool.h>
#include <stddef.h>

typedef void (*links_fn)(void *ctx, const char *url);
typedef struct links_parser links_parser;

/* Whether a response of this media type (no parameters, lower case) is parsed for
 * links: text/html, application/xhtml+xml, application/xml. */
bool links_wanted(const char *media_type);

/* base_url: the page's URL. charset: from Content-Type (NULL means utf-8).
 * xml: parse as XML rather than HTML (application/xml); an XML document's href
 * attributes are collected the same way. NULL only when fn is NULL. */
links_parser *links_new(const char *base_url, const char *charset, bool xml,
                        links_fn fn, void *ctx);
void links_feed(links_parser *lp, const char *data, size_t len);
/* End of body: flush, emitting any remaining links. */
void links_finish(links_parser *lp);
void links_free(links_parser *lp);

#endif
