/* pattern.h — the user's URL regexes (--exclude, and a crawler's own pattern flags), on
 * PCRE2 with limits, so that no pattern can take the machine: glibc's regcomp bounds
 * neither memory ('((a{1,200}){1,200}){1,200}' took 15 GB) nor time (back-references
 * against a long URL never finish).
 *
 * Syntax: PCRE2's, which covers POSIX extended regexes as URL patterns write them
 * (alternation, groups, ., [...] with [[:alpha:]]-style classes, *, +, ?, {m,n}, ^, $).
 * Refused when compiled, with a one-line reason:
 *   - back-references (\1, \g, \k) and subroutine calls or recursion;
 *   - every "(?" form but "(?:" and flag settings of i, m, n, s ("(?i)", "(?-i)",
 *     "(?i:...)"): lookaheads, lookbehinds, atomic and named groups, conditionals,
 *     comments, callouts, recursion;
 *   - "(*" (backtracking verbs, start-of-pattern options);
 *   - possessive quantifiers (*+ ++ ?+ }+), \C, \K, and \Q...\E quoting;
 *   - a repeat count {m,n} above PATTERN_MAX_REPEAT;
 *   - a pattern longer than PATTERN_MAX_LENGTH, or one whose compiled form (with its
 *     JIT code) needs more than PATTERN_MAX_BYTES.
 * The refusals come from a scan of the pattern's text (escapes and bracket classes
 * understood, nothing else), plus PCRE2's own count of back-references.
 *
 * Matching is bounded by a step budget, not only by PCRE2's match limit (which leaves
 * whole kinds of backtracking uncounted: 'a{1,100}a{1,100}a{1,100}c|b' ran 30 s against
 * 64 KB of 'a's under any match limit): the pattern is compiled with an automatic
 * callout before every item, each callout counts one step, and a match that reaches
 * PATTERN_MATCH_STEPS steps stops. PCRE2's match, depth and heap limits (and the JIT's
 * stack) bound the rest. Any of them reached: pattern_match returns PATTERN_LIMIT, which
 * is neither a match nor a non-match — each caller decides which side is safe.
 *
 * A pattern is read-only once compiled: any number of threads may match it at once.
 */
#ifndef CRAWL_PATTERN_H
#define CRAWL_PATTERN_H

#include <stdbool.h>
#include <stddef.h>

#define PATTERN_MAX_LENGTH  4096          /* bytes of pattern text */
#define PATTERN_MAX_BYTES   (1024 * 1024) /* compiled pattern, JIT code's work included */
#define PATTERN_MAX_REPEAT  100           /* the largest m or n in {m,n} */
#define PATTERN_MATCH_STEPS 250000        /* items entered in one match */

typedef struct pattern pattern;

/* Compile src. NULL when it does not compile or is refused, with the reason in why
 * (one line, no pattern text: "missing closing parenthesis at offset 1"). */
pattern *pattern_compile(const char *src, char *why, size_t whylen);

/* A command line's check of src, given to flag ("--exclude"): 0 when it compiles, else
 * -1 with "FLAG: bad regex 'SRC': WHY" in why. */
int pattern_check(const char *flag, const char *src, char *why, size_t whylen);

/* As pattern_compile, with another compile-memory cap (tests: the cap is enforced). */
pattern *pattern_compile_capped(const char *src, size_t max_bytes, char *why, size_t whylen);

enum { PATTERN_LIMIT = -1, PATTERN_NO_MATCH = 0, PATTERN_MATCH = 1 };

/* Whether p matches somewhere in subject: PATTERN_MATCH, PATTERN_NO_MATCH, or
 * PATTERN_LIMIT (a limit stopped the match: the answer is unknown). */
int pattern_match(const pattern *p, const char *subject);

/* Whether this pattern has reached a limit before (and records that it has now): for a
 * caller that warns once per pattern. */
bool pattern_first_limit(pattern *p);

/* Whether matching runs PCRE2's JIT code (false: its interpreter, slower). */
bool pattern_jit(const pattern *p);

void pattern_free(pattern *p);

#endif
