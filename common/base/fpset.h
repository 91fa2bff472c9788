/* fpset.h — a set of strings kept as 64-bit fingerprints (the crawl's seen_urls): 8
 * bytes a string whatever its length, where seen.h keeps a copy of each. The set never
 * gives a string back; it only answers "seen before?".
 *
 * The fingerprint is the keyed hash of the string (hash.h, a random key per process),
 * so a web page cannot choose strings whose fingerprints collide. Two different strings
 * share a fingerprint with probability 2^-64 a pair: among n strings, some pair does with
 * probability about n^2 / 2^65 — 3 in 10,000 at n = 10^8, and about 0.027 at 10^9. A
 * collision makes the second URL look seen: it is silently not crawled. Heritrix's
 * seen set makes the same trade. Open addressing, linear probing, load at most 1/2. */
#ifndef CRAWL_FPSET_H
#define CRAWL_FPSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct fpset fpset;

fpset *fpset_new(void);
void fpset_free(fpset *s);
/* Returns true if str was not in the set (and now is), false if it was. */
bool fpset_add(fpset *s, const char *str);
bool fpset_has(const fpset *s, const char *str);
size_t fpset_count(const fpset *s);
/* The fingerprint of str, as the set keeps it (never 0). */
uint64_t fpset_fingerprint(const char *str);
/* The same with a fingerprint already made (a state file keeps fingerprints). */
bool fpset_add_fp(fpset *s, uint64_t fp);
/* The most slots a lookup looks at (0 when empty): a few with a good hash. */
size_t fpset_longest_probe(const fpset *s);
/* Bytes the set holds (its table). */
size_t fpset_bytes(const fpset *s);

#endif
