/* html_open.h — the elements left open by an HTML page's tags, counted as a parser
 * keeps them (libxml2's and the standard's tree builder's main rules, no tree), for the
 * link parser's limits on the tokenizer path (links.c): a page stops being parsed past
 * LINKS_MAX_DEPTH open elements, and an end tag costs work by how far it looks.
 *
 * Void elements (br, img, ...), self-closed tags (<x/>, as libxml2 reads them) and
 * html, head, body open nothing. A start tag closes what it implies closed: p, li,
 * dd, dt, option, optgroup, td, th, tr, thead, tbody, tfoot, a heading, an a; an
 * end tag closes up to the nearest open element of its name, or nothing.
 */
#ifndef CRAWL_HTML_OPEN_H
#define CRAWL_HTML_OPEN_H

#include <stdbool.h>
#include <stddef.h>

/* What an end tag that closes nothing costs (libxml2's parse error, links.c). */
#define HTML_OPEN_MISS_COST 100

typedef struct html_open html_open;

/* Keeps at most max_depth + 1 elements: past max_depth the caller stops. */
html_open *html_open_new(size_t max_depth);
/* A start tag (name lower case): returns the work it cost (elements looked at). */
size_t html_open_start(html_open *o, const char *name, bool self_closing);
/* An end tag: the work it cost, HTML_OPEN_MISS_COST more when it closed nothing. */
size_t html_open_end(html_open *o, const char *name);
size_t html_open_depth(const html_open *o);
void html_open_free(html_open *o);

#endif
