/* sitemap_parser.h — sitemaps (the sitemaps.org protocol): a streaming parser, fed the file's
 * bytes as they arrive off the network, that hands over each <loc> as soon as its end
 * tag has been parsed. Pure C on libxml2's SAX push parser and zlib, no I/O, no tree.
 *
 *   sitemap_parser *p = sitemap_parser_new(NULL, on_loc, ctx);   (NULL: the defaults)
 *   while (... a piece of the body arrives ...)
 *       if (sitemap_parser_feed(p, data, n) < 0)
 *           break;                              the rest is not wanted
 *   if (sitemap_parser_finish(p) < 0)
 *       ... one line: sitemap_parser_error(p) (the locs before it were delivered)
 *   sitemap_parser_free(p);
 *
 * What it reads:
 *   - <urlset><url><loc>URL</loc>...</url>...</urlset>: each URL as SITEMAP_URL;
 *     <sitemapindex><sitemap><loc>URL</loc>...</sitemap>...</sitemapindex>: each as
 *     SITEMAP_INDEX_ENTRY (the caller fetches those sitemaps in turn, or not). Elements
 *     match by local name in any namespace (many real sitemaps get it wrong); only a
 *     <loc> right inside an entry right inside the root counts. The text is libxml2's,
 *     entities and character references decoded, CDATA taken as text, trimmed of
 *     whitespace; an empty one is skipped. It is not checked to be a URL.
 *   - a gzip file (.xml.gz), told by its first two bytes (1f 8b), inflated on the way.
 *   - a text sitemap: when the first non-blank byte (after inflating) is not '<', one
 *     URL per line; lines trimmed, those starting with http:// or https:// delivered as
 *     SITEMAP_URL, the others ignored.
 *   - anything else is refused with one line: another root element, XML that is not
 *     well-formed (the first error libxml2 reports; libxml2 prints nothing).
 *
 * Limits (sitemap_limits; the protocol's own are 50,000 URLs and 50 MB per file):
 *   - max_urls: the locs delivered; one more and the file is refused ("more than 50000
 *     URLs: the rest ignored"), the first max_urls kept.
 *   - max_bytes: the file's size after inflating (a gzip bomb stops there).
 *   - max_loc_len: a longer <loc> or text line is skipped, the parse goes on.
 *   - max_depth: elements nested deeper refuse the file.
 * Entities are never expanded and nothing is fetched: no external entity, DTD or
 * network access (billion laughs and XXE find an undeclared entity and stop). Memory
 * is bounded whatever the file holds: zlib's state (about 60 KB), the loc buffer, and
 * what libxml2 allocates, under SITEMAP_MEMORY_BOUND — it holds at most
 * SITEMAP_MAX_HELD bytes it has not parsed yet (a longer tag, comment or attribute
 * refuses the file: no real sitemap has one) and at most SITEMAP_MAX_NAMES bytes of
 * distinct element and attribute names (tests/unit/test_sitemap_parser.c measures it on a
 * gzip bomb, a nesting bomb, billion laughs and endless constructs: about 100 KB,
 * 140 KB when fed 100 KB at a time).
 *
 * Entries delivered are delivered: a file refused half-way keeps what came before.
 * The callback must not call back into the parser.
 */
#ifndef CRAWL_SITEMAP_H
#define CRAWL_SITEMAP_H

#include <stddef.h>

#define SITEMAP_MAX_URLS     50000
#define SITEMAP_MAX_BYTES    ((size_t)50 * 1024 * 1024)
#define SITEMAP_MAX_LOC      2048
#define SITEMAP_MAX_DEPTH    16
/* What libxml2 may hold unparsed: one construct it waits for the end of. */
#define SITEMAP_MAX_HELD     (64 * 1024)
/* Distinct element and attribute names libxml2 may store. */
#define SITEMAP_MAX_NAMES    (64 * 1024)
/* What libxml2 allocates for one parser at most. */
#define SITEMAP_MEMORY_BOUND (512 * 1024)

typedef struct sitemap_parser sitemap_parser;

typedef enum { SITEMAP_URL, SITEMAP_INDEX_ENTRY } sitemap_kind;

/* One <loc> of a <url> (SITEMAP_URL) or of a <sitemap> (SITEMAP_INDEX_ENTRY), or one
 * URL line of a text sitemap; loc is the caller's until it returns. */
typedef void (*sitemap_loc_fn)(void *ctx, sitemap_kind kind, const char *loc);

typedef struct sitemap_limits {
    size_t max_urls;    /* SITEMAP_MAX_URLS */
    size_t max_bytes;   /* SITEMAP_MAX_BYTES, counted after inflating */
    size_t max_loc_len; /* SITEMAP_MAX_LOC, after trimming */
    int max_depth;      /* SITEMAP_MAX_DEPTH: the root is at depth 1 */
} sitemap_limits;

void sitemap_default_limits(sitemap_limits *l);

/* l: NULL for the defaults (copied). fn is called for every loc. Never NULL. */
sitemap_parser *sitemap_parser_new(const sitemap_limits *l, sitemap_loc_fn fn, void *ctx);
/* The next n bytes of the file. Returns 0, or -1 once the file is refused (and from
 * then on: the rest is not looked at). */
int sitemap_parser_feed(sitemap_parser *p, const void *data, size_t n);
/* End of the file. Returns 0 when it was a whole, well-formed <urlset> or
 * <sitemapindex> (or a text sitemap with a URL line) within the limits, else -1. */
int sitemap_parser_finish(sitemap_parser *p);
/* Why it was refused or stopped, one line; NULL when it was not. */
const char *sitemap_parser_error(const sitemap_parser *p);
/* The locs delivered so far. */
size_t sitemap_parser_count(const sitemap_parser *p);
void sitemap_parser_free(sitemap_parser *p);

#endif
