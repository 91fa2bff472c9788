/* links_requisites.h — what an HTML start tag asks a browser to load to render the page
 * (wget -p's "page requisites"): img src and srcset, script src, link href with rel
 * stylesheet or icon, source src and srcset, video poster and src, audio src, and the
 * url(...) of any style attribute (css_urls.h). The link parser's requisites mode
 * (links_new_requisites, links.h) calls it for each start tag; <style> elements are
 * its own (their text is CSS).
 *
 * Each value is handed over as written (unresolved: the caller resolves it against
 * the page's base), one call per URL: a srcset gives one per image candidate.
 */
#ifndef CRAWL_LINKS_REQUISITES_H
#define CRAWL_LINKS_REQUISITES_H

typedef void (*requisite_fn)(void *ctx, const char *url);

/* name: the tag name, lower case (libxml2's HTML parser gives it so); atts: libxml2's
 * NULL-terminated name/value pairs (a value may be NULL), or NULL. */
void requisites_of_tag(const char *name, const char *const *atts, requisite_fn fn, void *ctx);

/* Each image candidate's URL of a srcset attribute (HTML's "parse a srcset
 * attribute": candidates split at commas, descriptors after whitespace). */
void requisites_srcset(const char *srcset, requisite_fn fn, void *ctx);

#endif
