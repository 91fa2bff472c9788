/* http_inflate.c — gzip and deflate bodies for the raw transport; see http_inflate.h. */
#include "http_inflate.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "alloc.h"

struct http_inflate {
    z_stream zs;
    http_coding coding;
    bool started;           /* inflateInit2 done (deflate waits for two bytes first) */
    bool ended;             /* the compressed stream is over: more bytes are corrupt */
    unsigned char first[2]; /* deflate: the first bytes, until there are two */
    size_t nfirst;
    char out[16384];
};

/* zlib allocates through alloc.h too: it never sees NULL. */
static voidpf z_alloc(voidpf opaque, uInt items, uInt size)
{
    (void)opaque;
    return xcalloc(items, size);
}

static void z_free(voidpf opaque, voidpf p)
{
    (void)opaque;
    free(p);
}

http_inflate *http_inflate_new(http_coding coding)
{
    http_inflate *z = xcalloc(1, sizeof *z);
    z->coding = coding;
    z->zs.zalloc = z_alloc;
    z->zs.zfree = z_free;
    return z;
}

void http_inflate_free(http_inflate *z)
{
    if (!z)
        return;
    if (z->started)
        inflateEnd(&z->zs);
    free(z);
}

/* gzip: a gzip or zlib header, told apart by zlib (15 + 32). deflate: a zlib stream
 * when the first two bytes are a zlib header (RFC 1950: method 8, a multiple of 31),
 * else bare deflate (-15). */
static int start(http_inflate *z, const unsigned char *two)
{
    int bits = 15 + 32;
    if (z->coding == HTTP_CODING_DEFLATE) {
        bool zlib_header = (two[0] & 0x0f) == 8 && (two[0] * 256 + two[1]) % 31 == 0;
        bits = zlib_header ? 15 : -15;
    }
    z->started = true;
    return inflateInit2(&z->zs, bits) == Z_OK ? 0 : -1;
}

/* Inflate [data, data + len) to out, until the input is used up and zlib has no more
 * output for it, or out says stop (1). */
static int inflate_bytes(http_inflate *z, const unsigned char *data, size_t len,
                         http_inflate_out out, void *ctx)
{
    if (z->ended)
        return -1; /* bytes after the end of the stream */
    z->zs.next_in = (unsigned char *)data;
    z->zs.avail_in = (uInt)len;
    for (;;) {
        z->zs.next_out = (unsigned char *)z->out;
        z->zs.avail_out = sizeof z->out;
        int r = inflate(&z->zs, Z_NO_FLUSH);
        size_t got = sizeof z->out - z->zs.avail_out;
        if (got && !out(ctx, z->out, got))
            return 1;
        if (r == Z_STREAM_END) {
            z->ended = true;
            return z->zs.avail_in > 0 ? -1 : 0;
        }
        if (r == Z_BUF_ERROR) /* nothing more to do: fine once the input is used up */
            return z->zs.avail_in > 0 ? -1 : 0;
        if (r != Z_OK)
            return -1;
        if (z->zs.avail_in == 0 && z->zs.avail_out > 0)
            return 0;
    }
}

int http_inflate_feed(http_inflate *z, const char *data, size_t len, http_inflate_out out,
                      void *ctx)
{
    const unsigned char *p = (const unsigned char *)data;
    if (!z->started && z->coding == HTTP_CODING_DEFLATE) {
        while (z->nfirst < 2 && len > 0)
            z->first[z->nfirst++] = *p++, len--;
        if (z->nfirst < 2)
            return 0;
        if (start(z, z->first) < 0)
            return -1;
        int r = inflate_bytes(z, z->first, 2, out, ctx);
        if (r != 0)
            return r;
    } else if (!z->started && start(z, NULL) < 0) {
        return -1;
    }
    while (len > 0) { /* avail_in is 32 bits */
        size_t n = len < (1u << 30) ? len : (1u << 30);
        int r = inflate_bytes(z, p, n, out, ctx);
        if (r != 0)
            return r;
        p += n;
        len -= n;
    }
    return 0;
}
