/* gz.c — see gz.h. Raw deflate (zlib) between a gzip header and trailer written here
 * (RFC 1952: ten bytes, then CRC-32 and the length mod 2^32, little-endian), so that
 * the blocks of a long filler can be repeated, and their CRC combined
 * (crc32_combine) rather than computed over gigabytes. */
#include "gz.h"

#include "alloc.h"
#include "sbuf.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* In place: zlib's state points back at its z_stream. */
static void deflater(z_stream *z)
{
    memset(z, 0, sizeof *z);
    if (deflateInit2(z, 9, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY) != Z_OK)
        alloc_oom(0);
}

/* Deflate n bytes with this flush (Z_FULL_FLUSH or Z_FINISH), all output to b. */
static void deflate_into(z_stream *z, const char *in, size_t n, int flush, sbuf *b)
{
    unsigned char out[16384];
    z->next_in = (unsigned char *)in;
    z->avail_in = (uInt)n;
    do {
        z->next_out = out;
        z->avail_out = sizeof out;
        deflate(z, flush);
        sbuf_add(b, (const char *)out, sizeof out - z->avail_out);
    } while (z->avail_out == 0);
}

static void put_le32(sbuf *b, uint32_t v)
{
    char le[4] = {(char)(v & 0xff), (char)(v >> 8 & 0xff), (char)(v >> 16 & 0xff),
                  (char)(v >> 24 & 0xff)};
    sbuf_add(b, le, 4);
}

static const char GZIP_HEADER[10] = {0x1f, (char)0x8b, 8, 0, 0, 0, 0, 0, 0, (char)0xff};

char *gz_compress(const char *data, size_t len, size_t *out_len)
{
    sbuf b = {0};
    sbuf_add(&b, GZIP_HEADER, sizeof GZIP_HEADER);
    z_stream z;
    deflater(&z);
    deflate_into(&z, data, len, Z_FINISH, &b);
    deflateEnd(&z);
    put_le32(&b, (uint32_t)crc32(0, (const unsigned char *)data, (uInt)len));
    put_le32(&b, (uint32_t)len);
    return sbuf_take(&b, out_len);
}

char *gz_compress_fill(gen_fill_kind kind, uint64_t len, size_t *out_len)
{
    _Static_assert(GZ_BLOCK % GEN_FILL_PERIOD == 0, "every block starts the pattern anew");
    char *block = xmalloc(GZ_BLOCK);
    for (size_t off = 0, avail; off < GZ_BLOCK; off += avail) {
        const char *p = gen_fill(kind, off, &avail);
        if (avail > GZ_BLOCK - off)
            avail = GZ_BLOCK - off;
        memcpy(block + off, p, avail);
    }
    uint64_t whole = len / GZ_BLOCK;
    size_t rest = (size_t)(len % GZ_BLOCK);

    sbuf one = {0}; /* a whole block, decodable on its own */
    z_stream z;
    deflater(&z);
    deflate_into(&z, block, GZ_BLOCK, Z_FULL_FLUSH, &one);
    deflateEnd(&z);
    uLong block_crc = crc32(0, (const unsigned char *)block, GZ_BLOCK);

    sbuf b = {0};
    sbuf_add(&b, GZIP_HEADER, sizeof GZIP_HEADER);
    uLong crc = crc32(0, NULL, 0);
    for (uint64_t i = 0; i < whole; i++) {
        sbuf_add(&b, one.data, one.len);
        crc = crc32_combine(crc, block_crc, GZ_BLOCK);
    }
    deflater(&z); /* the rest, and the last block */
    deflate_into(&z, block, rest, Z_FINISH, &b);
    deflateEnd(&z);
    crc = crc32_combine(crc, crc32(0, (const unsigned char *)block, (uInt)rest), (z_off_t)rest);
    put_le32(&b, (uint32_t)crc);
    put_le32(&b, (uint32_t)len);
    sbuf_free(&one);
    free(block);
    return sbuf_take(&b, out_len);
}
