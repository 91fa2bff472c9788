/* mirror_links.h — --mirror's link conversion (wget -k): a saved page or stylesheet
 * rewritten so that each link to a saved file is a relative path to it (its fragment
 * kept) and each other link to the web is its absolute URL; every byte outside the
 * rewritten values is kept.
 *
 * A small scanner that knows where each value is (the link parser of common/web hands
 * over URLs, not their places): in HTML, tags and their attributes (comments, <!...>,
 * and the raw text of <script>, <style>, <textarea>, <title> skipped as a browser does),
 * the values of href, src, srcset (each candidate), poster, background, data and style
 * (its CSS), the text of <style>, and <base href> (the base of the links after it; its
 * value becomes the document's own name, as the files no longer sit under it); in CSS,
 * url() and @import's string (comments and other strings skipped). Values are decoded
 * (HTML character references) before they are resolved, and written back escaped; a
 * value that is empty, only a fragment, or not http(s) once resolved (javascript:,
 * mailto:, data:) is kept as it is.
 */
#ifndef CRAWL_MIRROR_LINKS_H
#define CRAWL_MIRROR_LINKS_H

#include <stdbool.h>
#include <stddef.h>

/* Where the file of an absolute URL (no fragment) is, as a link from the file being
 * converted (malloc'd), or NULL: not saved. */
typedef char *(*mirror_link_fn)(void *ctx, const char *url);

/* The links resolved so far (url_resolve's answers), kept across the files of one
 * conversion: most of a mirror's links name the same few thousand URLs from pages in
 * the same few directories, and resolving one with libcurl costs more than the rest
 * of its conversion. An answer is kept under the part of the base it depends on (RFC
 * 3986 5.2: nothing of it for an http(s) URL but the base's origin, the origin for
 * "/path" and "//host", the base's directory for a relative path, the whole base for
 * "?query"), so pages of one directory share their answers. At most
 * MIRROR_RESOLVED_MAX answers: then it starts again. */
typedef struct mirror_resolved mirror_resolved;
enum { MIRROR_RESOLVED_MAX = 1 << 16 };
mirror_resolved *mirror_resolved_new(void);
void mirror_resolved_free(mirror_resolved *r);
/* url_resolve(base, href), through r (NULL: none): malloc'd, or NULL. */
char *mirror_resolve(mirror_resolved *r, const char *base, const char *href);

/* The converted text (malloc'd, *outlen bytes), or NULL when nothing changed. url: the
 * document's own URL, the base of its relative links; self_link: its link to itself
 * (its name), what a <base href> becomes; resolved: the answers kept (or NULL). */
char *mirror_convert_html(const char *text, size_t len, const char *url, const char *self_link,
                          mirror_link_fn fn, void *ctx, mirror_resolved *resolved, size_t *outlen);
char *mirror_convert_css(const char *text, size_t len, const char *url, mirror_link_fn fn,
                         void *ctx, mirror_resolved *resolved, size_t *outlen);

#endif
