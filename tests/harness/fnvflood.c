/* fnvflood.c — see fnvflood.h. */
#include "fnvflood.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

enum {
    BLOCK = 8,          /* letters per block */
    TABLE_BITS = 20,    /* the birthday table: 2^20 slots */
    MAX_TRIES = 700000, /* < 0.7 * 2^20; P(no collision in 32 bits) < e^-50 */
};

typedef struct fnv_params {
    uint32_t basis, prime;
} fnv_params;

static fnv_params params(fnv_kind kind)
{
    if (kind == FNV1A_32)
        return (fnv_params){2166136261u, 16777619u};
    /* FNV-1a 64's offset basis and prime, mod 2^32 */
    return (fnv_params){(uint32_t)14695981039346656037ULL, (uint32_t)1099511628211ULL};
}

static uint32_t feed(fnv_params p, uint32_t h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * p.prime;
    return h;
}

uint32_t fnvflood_hash(fnv_kind kind, const char *s)
{
    fnv_params p = params(kind);
    return feed(p, p.basis, s, strlen(s));
}

/* Block number i: BLOCK letters drawn from i (splitmix64), so that every position
 * varies. (Counting through the letters would vary only the first few, and over so few
 * positions the 26 letters, which differ only in their low five bits, cannot move
 * FNV-1a's state far enough for two blocks to meet.) */
static void block(uint32_t i, char out[BLOCK])
{
    uint64_t x = (uint64_t)i + 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    x ^= x >> 31;
    for (int k = 0; k < BLOCK; k++, x /= 26)
        out[k] = (char)('a' + x % 26);
}

/* Two blocks that take state h to one state: sets a, b and *h. False if none found. */
static bool find_pair(fnv_params p, uint32_t *h, uint32_t *tbl_key, uint32_t *tbl_val,
                      char a[BLOCK], char b[BLOCK])
{
    const uint32_t mask = (1u << TABLE_BITS) - 1;
    memset(tbl_val, 0, sizeof(uint32_t) << TABLE_BITS);
    for (uint32_t i = 0; i < MAX_TRIES; i++) {
        char blk[BLOCK];
        block(i, blk);
        uint32_t v = feed(p, *h, blk, BLOCK);
        uint32_t j = (v * 2654435761u) >> (32 - TABLE_BITS);
        for (; tbl_val[j]; j = (j + 1) & mask) {
            if (tbl_key[j] == v) {
                block(tbl_val[j] - 1, a);
                if (memcmp(a, blk, BLOCK) == 0)
                    break; /* the same letters drawn twice: no pair */
                memcpy(b, blk, BLOCK);
                *h = v;
                return true;
            }
        }
        tbl_key[j] = v;
        tbl_val[j] = i + 1;
    }
    return false;
}

char **fnvflood(const char *prefix, fnv_kind kind, int rounds)
{
    fnv_params p = params(kind);
    size_t plen = strlen(prefix), n = (size_t)1 << rounds;
    char(*pairs)[2][BLOCK] = xcalloc((size_t)rounds, sizeof *pairs);
    uint32_t *tbl_key = xmalloc(sizeof(uint32_t) << TABLE_BITS);
    uint32_t *tbl_val = xmalloc(sizeof(uint32_t) << TABLE_BITS);
    uint32_t h = feed(p, p.basis, prefix, plen);
    bool ok = true;
    for (int r = 0; r < rounds && ok; r++)
        ok = find_pair(p, &h, tbl_key, tbl_val, pairs[r][0], pairs[r][1]);
    free(tbl_key);
    free(tbl_val);
    char **v = NULL;
    if (ok) {
        v = xcalloc(n + 1, sizeof *v);
        for (size_t i = 0; i < n; i++) {
            char *s = v[i] = xmalloc(plen + (size_t)rounds * BLOCK + 1);
            memcpy(s, prefix, plen);
            for (int r = 0; r < rounds; r++)
                memcpy(s + plen + (size_t)r * BLOCK, pairs[r][(i >> r) & 1], BLOCK);
            s[plen + (size_t)rounds * BLOCK] = '\0';
        }
    }
    free(pairs);
    return v;
}

void fnvflood_free(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}
