/* cookiejar.h — a cookie file in the Netscape format libcurl, curl(1),
 * wget and browsers' export tools read and write (https://curl.se/docs/http-cookies.html).
 *
 * One cookie a line, seven fields between tabs: domain (a leading '.' or the second
 * field TRUE: its subdomains too), include-subdomains TRUE/FALSE, path, secure
 * TRUE/FALSE, expiry (Unix seconds; 0: a session cookie), name, value. A line starting
 * "#HttpOnly_" is a cookie (HttpOnly); other lines starting '#' are comments; empty
 * lines are allowed. Anything else means the file is not a cookie file: it is neither
 * read nor ever written over (a crawl given one is refused before it starts).
 *
 * Writing never truncates the old file first: the new one is written beside it, synced,
 * then renamed over it, so a full disk or a crash leaves the old file whole.
 */
#ifndef CRAWL_COOKIEJAR_H
#define CRAWL_COOKIEJAR_H

#include <stddef.h>

/* NULL when line (no newline) may be in a cookie file — a cookie, a comment or empty —
 * else why not, in a few words. */
const char *cookiejar_line_check(const char *line);

/* Read path: each cookie line goes to add(ctx, line) (add NULL: the file is only
 * checked); a missing or empty file holds no cookie. Returns the cookies read, or -1
 * with one line in err ("'PATH' is not a Netscape cookie file (line N: ...)", or why it
 * cannot be read; or add refused a line). */
long cookiejar_read(const char *path, int (*add)(void *ctx, const char *line), void *ctx, char *err,
                    size_t errlen);

/* Replace path with a cookie file holding lines (cookies in the Netscape format, as
 * libcurl lists them), after a comment saying what wrote it. 0, or -1 with one line in
 * err (the old file is then as it was). A symbolic link is followed: its target is
 * replaced. */
int cookiejar_write(const char *path, const char *const *lines, size_t n, char *err, size_t errlen);

/* A cookie given as NAME=VALUE: NULL when pair is one (NAME an RFC 6265 token, VALUE of
 * cookie-octets: printable ASCII but space, '"', ',', ';' and '\'), else why not. */
const char *cookiejar_pair_check(const char *pair);

/* The cookie file line (malloc'd) for pair (checked) sent to host only — not its
 * subdomains — on every path, over http and https, for the crawl's session. */
char *cookiejar_host_line(const char *host, const char *pair);

#endif
