/* hash.c — SipHash-2-4 (Aumasson and Bernstein, 2012), written from the paper's
 * description, and the process-wide random key. See hash.h. */
#include "hash.h"

#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

static uint64_t load_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* One SipRound over the four state words. */
#define SIPROUND                                                                                   \
    do {                                                                                           \
        v0 += v1;                                                                                  \
        v1 = ROTL(v1, 13);                                                                         \
        v1 ^= v0;                                                                                  \
        v0 = ROTL(v0, 32);                                                                         \
        v2 += v3;                                                                                  \
        v3 = ROTL(v3, 16);                                                                         \
        v3 ^= v2;                                                                                  \
        v0 += v3;                                                                                  \
        v3 = ROTL(v3, 21);                                                                         \
        v3 ^= v0;                                                                                  \
        v2 += v1;                                                                                  \
        v1 = ROTL(v1, 17);                                                                         \
        v1 ^= v2;                                                                                  \
        v2 = ROTL(v2, 32);                                                                         \
    } while (0)

uint64_t hash_siphash24(const void *data, size_t n, const uint8_t key[16])
{
    const uint8_t *p = data;
    uint64_t k0 = load_le64(key), k1 = load_le64(key + 8);
    uint64_t v0 = k0 ^ 0x736f6d6570736575ULL;
    uint64_t v1 = k1 ^ 0x646f72616e646f6dULL;
    uint64_t v2 = k0 ^ 0x6c7967656e657261ULL;
    uint64_t v3 = k1 ^ 0x7465646279746573ULL;

    /* Compression: two rounds per 8-byte little-endian word. */
    size_t whole = n - n % 8;
    for (size_t i = 0; i < whole; i += 8) {
        uint64_t m = load_le64(p + i);
        v3 ^= m;
        SIPROUND;
        SIPROUND;
        v0 ^= m;
    }
    /* The last word: the remaining 0-7 bytes, and the length's low byte on top. */
    uint64_t b = (uint64_t)n << 56;
    for (size_t i = 0; i < n % 8; i++)
        b |= (uint64_t)p[whole + i] << (8 * i);
    v3 ^= b;
    SIPROUND;
    SIPROUND;
    v0 ^= b;

    /* Finalisation: four rounds. */
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

static uint8_t process_key[16];
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static bool key_set;

static void draw_key(void)
{
    if (key_set)
        return;
    size_t got = 0;
    while (got < sizeof process_key) {
        ssize_t r = getrandom(process_key + got, sizeof process_key - got, 0);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    if (got < sizeof process_key) {
        /* No getrandom (very old kernel): still unpredictable enough from outside. */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t a = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)getpid();
        uint64_t b = (uint64_t)(uintptr_t)&ts ^ ((uint64_t)getpid() << 32);
        memcpy(process_key, &a, 8);
        memcpy(process_key + 8, &b, 8);
    }
}

void hash_set_seed(const uint8_t key[16])
{
    memcpy(process_key, key, sizeof process_key);
    key_set = true;
}

uint64_t hash_bytes(const void *p, size_t n)
{
    pthread_once(&key_once, draw_key);
    return hash_siphash24(p, n, process_key);
}

uint64_t hash_str(const char *s)
{
    return hash_bytes(s, strlen(s));
}
