/* fnvflood.h — strings built to collide under FNV-1a, as a hostile page would build its
 * links against a table that hashes with it (hash flooding). crawlstages hashed its
 * string sets with FNV-1a before hash.h; the tests feed these strings to the tables
 * and check that the probes stay short.
 *
 * The construction is Joux's multicollision. FNV-1a is iterated: once two blocks take
 * the same state to the same state, whatever follows keeps them equal. A birthday
 * search over blocks of eight letters finds such a pair in about 2^16 tries; k pairs
 * in a row give 2^k strings (one block of each pair) with one hash. FNV-1a 64's low 32
 * bits, which pick the slot of any table under 2^32 slots, depend only on the low 32
 * bits before each byte, so the same search serves them. Deterministic: the blocks
 * are tried in a fixed order. */
#ifndef CRAWL_FNVFLOOD_H
#define CRAWL_FNVFLOOD_H

#include <stdint.h>

typedef enum fnv_kind {
    FNV1A_32,       /* the whole 32-bit hash */
    FNV1A_64_LOW32, /* the low 32 bits of the 64-bit hash */
} fnv_kind;

/* FNV-1a (kind) of s. */
uint32_t fnvflood_hash(fnv_kind kind, const char *s);
/* 2^rounds distinct strings, each prefix followed by rounds blocks of lower-case
 * letters, all with the same fnvflood_hash. A NULL-terminated malloc'd array of
 * malloc'd strings (fnvflood_free), or NULL if the search gave up (it should not). */
char **fnvflood(const char *prefix, fnv_kind kind, int rounds);
void fnvflood_free(char **v);

#endif
