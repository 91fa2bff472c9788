/* css_urls.h — the URLs a stylesheet loads: url(...) tokens and @import strings, found
 * by a small tokenizer after CSS Syntax Level 3 (comments, strings, escapes, url()
 * tokens), never by a regex. For page requisites: a stylesheet, a <style> element or a
 * style attribute.
 *
 * Each URL is handed over as written (escapes decoded, surrounding whitespace
 * removed), not resolved: the caller resolves it against the stylesheet's URL (or the
 * page's, for inline CSS). Empty URLs are not handed over. Nothing is allocated
 * beyond one URL's length at a time; the scan is linear in the text.
 */
#ifndef CRAWL_CSS_URLS_H
#define CRAWL_CSS_URLS_H

#include <stddef.h>

typedef void (*css_url_fn)(void *ctx, const char *url);

/* Scan len bytes of CSS (any bytes: an unterminated comment, string or url() ends at
 * the end of the text, as in a browser). */
void css_urls(const char *css, size_t len, css_url_fn fn, void *ctx);

#endif
