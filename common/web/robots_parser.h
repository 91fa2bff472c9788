/* robots_parser.h — robots.txt per RFC 9309 (the Robots Exclusion Protocol): a parser and a
 * matcher, pure C, no I/O. A crawler's downloader middleware fetches the file and
 * asks this module whether a URL may be fetched.
 *
 *   robots *r = robots_parse(body, len, "crawlstages/0.1");
 *   if (!robots_allowed(r, "/private/page?x=1")) ... a record: forbidden by robots.txt
 *   robots_free(r);
 *
 * What the parser does (RFC 9309, section 2):
 *   - groups: one or more user-agent lines, then rules. A user-agent line after a rule
 *     starts a new group; empty lines, comments and other lines (sitemap, crawl-delay,
 *     unknown keys) do not. The group for us is every group whose user-agent's product
 *     token equals ours, case-insensitively, all merged; only when there is none, the
 *     `*` groups merged; when there is neither, nothing is forbidden. A matching group
 *     with no rules allows everything.
 *   - rules: allow and disallow. The rule with the longest pattern that matches wins;
 *     on a tie allow wins. No match: allowed. An empty pattern matches nothing.
 *     /robots.txt itself is always allowed.
 *   - patterns are anchored at the start of the path; `*` matches any run of octets,
 *     a `$` at the end anchors the end. Matching is on octets after percent-encoding
 *     equivalence: %XX of an unreserved character (letters, digits, - . _ ~) is that
 *     character (%7E and ~ are one), other escapes compare in upper-case hex (%2F and
 *     / stay different), octets outside printable ASCII compare as their escape (a
 *     UTF-8 pattern matches the encoded path). A pattern's %2A and %24 are a literal
 *     * and $.
 *   - only the first ROBOTS_MAX_BYTES octets are read (a line cut by that limit is
 *     dropped); a UTF-8 BOM is skipped; lines end with CR, LF or CRLF; `#` starts a
 *     comment; keys are case-insensitive; a line is `key: value`, or as Google's parser
 *     accepts, `key value` (two runs of non-blanks, no colon); other lines are ignored.
 *   - kept beside the rules: Crawl-delay (of the group chosen for us) and every Sitemap
 *     line, for politeness.
 *
 * What it costs (a robots.txt is a stranger's file):
 *   - memory: only the group chosen for us is kept, each rule once (a file that says
 *     one rule 46,000 times keeps one), its patterns in one arena; robots_bytes says
 *     how much, for a cache of many origins to bound.
 *   - time: the rules are tried longest first and the first that matches answers; a
 *     rule's literal prefix is compared first and a path too short for it is skipped
 *     at once; the pieces between stars are found with memmem, leftmost, without
 *     backtracking. So one rule costs at most about the path's length, and one URL at
 *     most ROBOTS_MAX_WORK octets compared: a URL whose answer would cost more is
 *     disallowed (robots_check says so) — the crawler errs on the side of the file.
 *
 * Strings are copied: the input may be freed once robots_parse returns.
 */
#ifndef CRAWL_ROBOTS_H
#define CRAWL_ROBOTS_H

#include <stdbool.h>
#include <stddef.h>

/* The parsing limit: RFC 9309 asks crawlers to read at least 500 KiB. */
#define ROBOTS_MAX_BYTES (500 * 1024)
/* The most octets one URL's answer may compare or scan (a millisecond or two). */
#define ROBOTS_MAX_WORK  (2 * 1024 * 1024)

typedef struct robots robots;

/* Parses the n octets at data (they need not be NUL-terminated, and may hold NULs).
 * agent is our product token, or a whole User-Agent string: its leading run of
 * letters, '_' and '-' is the token ("crawlstages/0.1" matches groups for
 * "crawlstages"). Never NULL. */
robots *robots_parse(const char *data, size_t n, const char *agent);
/* No rules: robots.txt is unavailable (a 4xx status, or no file within the redirects
 * followed — RFC 9309, 2.3.1.2 and 2.3.1.3). */
robots *robots_allow_all(void);
/* Everything forbidden: robots.txt is unreachable (a 5xx status, a network error —
 * RFC 9309, 2.3.1.4). */
robots *robots_disallow_all(void);
void robots_free(robots *r);

/* May the URL whose path and query (from the '/' on: "/a/b?x=1") this is be fetched?
 * An empty string is "/". */
bool robots_allowed(const robots *r, const char *path_and_query);

/* robots_allowed's answer, with what it cost. */
typedef struct robots_verdict {
    bool allowed;
    bool over_budget; /* disallowed because the answer would cost over ROBOTS_MAX_WORK */
    size_t work;      /* octets of the path compared or scanned */
} robots_verdict;
robots_verdict robots_check(const robots *r, const char *path_and_query);

/* The Crawl-delay of the group chosen for us, in seconds; -1 when it has none. */
double robots_crawl_delay(const robots *r);

/* The Sitemap lines' values, in the file's order. */
size_t robots_sitemap_count(const robots *r);
const char *robots_sitemap(const robots *r, size_t i);

/* The rules that apply to us, each once (for -v and tests). */
size_t robots_rule_count(const robots *r);
/* The heap octets r holds (what malloc was asked for). */
size_t robots_bytes(const robots *r);

#endif
