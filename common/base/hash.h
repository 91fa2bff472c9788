/* hash.h — the one hash function for tables fed by strangers' data.
 *
 * Every hash table in crawlstages is keyed by text that a web server chose: URLs,
 * links, host names. With an unkeyed hash (FNV-1a, say), a hostile page can hold
 * thousands of links built to collide and turn each insert into a scan of all the
 * others (hash flooding). So, as redis does for its dicts and CPython for str, the hash
 * is SipHash-2-4 with a 128-bit key drawn at random once per process: collisions
 * cannot be precomputed without the key.
 *
 *   uint64_t h = hash_bytes(url, strlen(url));
 *
 * hash_siphash24 with an explicit key is the reference function (the tests check it
 * against the published test vectors); hash_set_seed fixes the key, for tests and for
 * anything that must hash the same across runs.
 */
#ifndef CRAWL_HASH_H
#define CRAWL_HASH_H

#include <stddef.h>
#include <stdint.h>

/* SipHash-2-4 of the n bytes at p, with a 16-byte key. */
uint64_t hash_siphash24(const void *p, size_t n, const uint8_t key[16]);
/* SipHash-2-4 with this process's random key (drawn on first use). */
uint64_t hash_bytes(const void *p, size_t n);
uint64_t hash_str(const char *s);
/* Set this process's key (before the first hash_bytes, or all tables built so far
 * hash differently). */
void hash_set_seed(const uint8_t key[16]);

/* A random delay's factor, uniform in [0.5, 1.5) (Scrapy's RANDOMIZE_DOWNLOAD_DELAY),
 * from a xorshift64 generator whose state (never 0) is the caller's: not for secrets. */
static inline double hash_jitter(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return 0.5 + (double)(*state >> 11) / 9007199254740992.0;
}

#endif
