/* mirror_name.h — where --mirror keeps a URL: a pure function from a URL (and the kind
 * of its response) to a path relative to the mirror's directory, HOST[:PORT]/PATH, after
 * wget's rules (docs/mirror.md):
 *
 *   http://h/a/          h/a/index.html        a URL ending in '/'
 *   http://h:8080/b.png  h:8080/b.png          a port that is not the scheme's default
 *   http://h/s.css?v=2   h/s.css?v=2.css       the query is part of the name; a
 *                                              stylesheet or a page without its
 *                                              extension gets one (wget -E)
 *   http://h/a%20b       h/a b                 a path segment is percent-decoded
 *
 * Every name is escaped so that any byte sequence makes a safe name and the name gives
 * the bytes back (mirror_unescape): a control byte, DEL and '%' are "%XX" in every
 * component, '?' too in a path segment (so that "/a%3Fb" and "/a?b" differ) and '/' in
 * the query. A component longer than MIRROR_NAME_MAX bytes gets a stable short form: its
 * first bytes, '~' and 16 hex digits of a hash of the whole (FNV-1a, the same in every
 * run), then its extension. A component that Windows or FAT keeps for a device (CON,
 * PRN, AUX, NUL, COM1-9, LPT1-9, in any case, with any extension) gets its first byte
 * as %XX, and a trailing dot or space its last ("CON.html" -> "%43ON.html", "a." ->
 * "a%2E"): escapes like any other, so mirror_unescape gives the bytes back.
 *
 * Refused (NULL, and why): a scheme other than http(s); a host that is empty, begins
 * with '.', or holds a byte outside [a-z0-9.-_] (an IPv6 literal: hex digits and ':');
 * a path segment that decodes to "." or "..", or holds '/', '\' or NUL once decoded
 * ("%2e%2e", "%2f", "%5c", "%00"); a path deeper than MIRROR_MAX_DEPTH segments or a
 * name longer than MIRROR_PATH_MAX bytes.
 */
#ifndef CRAWL_MIRROR_NAME_H
#define CRAWL_MIRROR_NAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A growing string, NUL-terminated (mirror_name.c and mirror_links.c build theirs). */
typedef struct mirror_buf {
    char *s;
    size_t len, cap;
} mirror_buf;
void mirror_buf_put(mirror_buf *b, const char *p, size_t n);

enum { MIRROR_NAME_MAX = 200, MIRROR_MAX_DEPTH = 64, MIRROR_PATH_MAX = 2048 };

typedef enum { MIRROR_OTHER = 0, MIRROR_HTML, MIRROR_CSS } mirror_kind;

/* The kind of a response from its media type ("text/html", "text/css"; NULL: other). */
mirror_kind mirror_kind_of(const char *content_type);

/* The relative path of url (malloc'd), or NULL with one line in why. */
char *mirror_name(const char *url, mirror_kind kind, char *why, size_t whylen);

/* The bytes a name's component stands for: each "%XX" decoded (malloc'd). */
char *mirror_unescape(const char *component);

/* Names that differ only in case ("h/A.html", "h/a.html") are one file on a
 * case-insensitive file system. Of a set of such names, the first by mirror_case_first
 * (fewer ASCII capitals, then bytewise) keeps its name, and every other gets
 * mirror_case_variant's: "~", 8 hex digits of the FNV-1a hash of the name under the host's
 * directory, before
 * its extension ("h/A.html" -> "h/A~f9692fd9.html"). The rule reads only the names, so
 * the fetch order does not matter, and a resumed mirror names the same way. */
char *mirror_fold(const char *path); /* ASCII capitals lowered (malloc'd) */
bool mirror_case_first(const char *a, const char *b);
char *mirror_case_variant(const char *path); /* malloc'd */

/* The link a page at path from writes to the file at path to (both mirror_name's):
 * relative, each component percent-encoded for a URL ('?', '#', '%', '&', quotes,
 * spaces and every byte outside printable ASCII as %XX). malloc'd. */
char *mirror_relative(const char *from, const char *to);

/* FNV-1a, 64 bits, of n bytes: the short forms' hash, and the manifest's check that a
 * file is the one its "k" line converted. */
uint64_t mirror_hash(const char *s, size_t n);

#endif
