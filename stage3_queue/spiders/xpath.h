/* xpath.h — response:xpath(expr) and --extract NAME=XPATH: libxml2's HTML parse of a
 * body, then an XPath expression evaluated on it, as an array of strings.
 *
 * A node-set gives each node's string value (an attribute's value, an element's text,
 * xmlXPathCastNodeToString), in document order; a string, number or boolean result
 * gives one string (XPath's own string() of it). The parse is lenient and silent
 * (HTML_PARSE_RECOVER | NOERROR | NOWARNING | NONET): whatever the page, there is a
 * document; an empty body is a document without nodes.
 */
#ifndef CRAWL_XPATH_H
#define CRAWL_XPATH_H

#include <stddef.h>

typedef struct xpath_doc xpath_doc;

/* Parse body (len bytes, charset from Content-Type or NULL) as HTML; url is its base
 * (for the document's URL). Never NULL. */
xpath_doc *xpath_parse(const char *body, size_t len, const char *charset, const char *url);
void xpath_doc_free(xpath_doc *d);

/* The operations one evaluation may take (libxml2's opLimit, counted per step and per
 * node visited: about 65 ms of a 2020s core); over them it fails. A comparison of two
 * node-sets counts its pairs, |A| x |B|, before libxml2 makes it (which libxml2 does not
 * count, and which may stop at the first pair: "//a = //a" on 20,000 a's is over, where
 * libxml2 alone would say true at once). */
#define XPATH_OP_LIMIT 10000000

/* Evaluate expr: fn(ctx, s, len) for each string of the result, in order; stops when
 * fn returns non-zero. 0, or -1 with one line in err (the expression is refused by
 * xpath_check, or fails: over XPATH_OP_LIMIT operations, say). */
int xpath_eval(xpath_doc *d, const char *expr, int (*fn)(void *ctx, const char *s, size_t len),
               void *ctx, char *err, size_t errlen);

/* The operations the last xpath_eval on d took (libxml2's count), for a budget. */
unsigned long xpath_ops(const xpath_doc *d);

/* Whether expr compiles and calls only functions of XPath 1.0's core library (for
 * --extract, before the crawl; xpath_eval checks it too). 0, or -1 with err. */
int xpath_check(const char *expr, char *err, size_t errlen);

#endif
