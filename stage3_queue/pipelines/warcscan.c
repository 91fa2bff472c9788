/* warcscan.c — see warcscan.h: walk a WARC file's records, whole ones only. */
#include "warcscan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "alloc.h"

enum { CHUNK = 64 << 10 };

/* The value of field name in the head lines [h, e) ("Name: value\r\n" each), malloc'd;
 * "" when absent. */
static char *field(const char *h, const char *e, const char *name)
{
    size_t nl = strlen(name);
    for (const char *p = h; p < e;) {
        const char *eol = memmem(p, (size_t)(e - p), "\r\n", 2);
        if (!eol)
            eol = e;
        if ((size_t)(eol - p) > nl && strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
            const char *v = p + nl + 1;
            while (v < eol && (*v == ' ' || *v == '\t'))
                v++;
            const char *ve = eol;
            while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
                ve--;
            return xstrndup(v, (size_t)(ve - v));
        }
        p = eol + 2;
    }
    return xstrdup("");
}

/* A record's head in buf[0, n): "WARC/1.x" and its lines up to the empty one. Its
 * length (the empty line's CRLF included) and its Content-Length; false if it is not
 * one (damage, or a head cut short). */
static bool record_head(const char *buf, size_t n, size_t *head_len, uint64_t *block_len)
{
    if (n < 10 || memcmp(buf, "WARC/1.", 7) != 0)
        return false;
    const char *end = memmem(buf, n, "\r\n\r\n", 4);
    if (!end)
        return false;
    *head_len = (size_t)(end - buf) + 4;
    char *cl = field(buf, end + 2, "Content-Length");
    char *stop;
    errno = 0;
    unsigned long long v = strtoull(cl, &stop, 10);
    bool ok = cl[0] >= '0' && cl[0] <= '9' && *stop == '\0' && errno == 0;
    free(cl);
    *block_len = v;
    return ok;
}

char *warc_media_type(const char *ct)
{
    if (!ct)
        return NULL;
    ct += strspn(ct, " \t");
    size_t n = strcspn(ct, ";");
    while (n > 0 && (ct[n - 1] == ' ' || ct[n - 1] == '\t'))
        n--;
    char *m = xstrndup(ct, n);
    for (char *c = m; *c; c++)
        *c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
    return m;
}

/* The status and media type of an HTTP response block's head (block[0, len) holds its
 * first bytes; whole: all of it, so that its end ends the head — a revisit's block may
 * be the head without its empty line), read by the head parser both transports use; 0
 * when the head is not there or not a response head. */
static int response_head(const char *block, size_t len, bool whole, char **mime)
{
    http_head_parser *hp = http_head_parser_new();
    if (len >= 7 && memcmp(block, "HTTP/2 ", 7) == 0)
        http_head_parser_expect_h2(hp);
    size_t used;
    int status = 0, r = http_head_parser_feed(hp, block, len, &used);
    for (int i = 0; r == 0 && whole && i < 2; i++) /* the line's end, then the head's */
        r = http_head_parser_feed(hp, "\r\n", 2, &used);
    if (r == 1) {
        const http_head *h = http_head_parser_head(hp);
        status = h->status;
        *mime = warc_media_type(h->content_type);
    }
    http_head_parser_free(hp);
    return status;
}

/* Call fn with the fields of the whole record whose first bytes are buf[0, n). */
static void found(const char *buf, size_t n, size_t head_len, bool whole, uint64_t offset,
                  uint64_t length, warcscan_fn fn, void *ctx)
{
    const char *he = buf + head_len - 2;
    char *type = field(buf, he, "WARC-Type"), *uri = field(buf, he, "WARC-Target-URI"),
         *date = field(buf, he, "WARC-Date"), *id = field(buf, he, "WARC-Record-ID"),
         *pd = field(buf, he, "WARC-Payload-Digest"), *ct = field(buf, he, "Content-Type");
    warcscan_rec r = {type, uri, date, id, pd, 0, "", offset, length};
    char *mime = NULL;
    const char *block = buf + head_len, *end = buf + n;
    if (strncmp(ct, "application/http", 16) == 0 && strstr(ct, "msgtype=response")) {
        r.status = response_head(block, (size_t)(end - block), whole, &mime);
        r.mime = mime ? mime : "";
    }
    fn(ctx, &r);
    free(mime);
    free(type);
    free(uri);
    free(date);
    free(id);
    free(pd);
    free(ct);
}

static long long read_error(char *err, size_t errlen)
{
    snprintf(err, errlen, "reading it back: %s", strerror(errno));
    return -1;
}

/* Records one after the other: each head read, its block skipped, its "\r\n\r\n"
 * checked. */
static long long scan_plain(int fd, uint64_t size, warcscan_fn fn, void *ctx, char *err,
                            size_t errlen)
{
    char *buf = xmalloc(WARCSCAN_KEEP);
    uint64_t pos = 0;
    while (pos < size) {
        size_t want = size - pos < WARCSCAN_KEEP ? (size_t)(size - pos) : WARCSCAN_KEEP;
        ssize_t n = pread(fd, buf, want, (off_t)pos);
        if (n < 0) {
            free(buf);
            return read_error(err, errlen);
        }
        size_t head_len;
        uint64_t block_len;
        char tail[4];
        if (!record_head(buf, (size_t)n, &head_len, &block_len) || block_len > size - pos - head_len
            || size - pos - head_len - block_len < 4)
            break;
        uint64_t end = pos + head_len + block_len + 4;
        if (pread(fd, tail, 4, (off_t)(end - 4)) != 4 || memcmp(tail, "\r\n\r\n", 4) != 0)
            break;
        size_t kept =
            head_len + block_len < (uint64_t)n ? (size_t)(head_len + block_len) : (size_t)n;
        found(buf, kept, head_len, head_len + block_len <= (uint64_t)n, pos, end - pos, fn, ctx);
        pos = end;
    }
    free(buf);
    return (long long)pos;
}

/* A window on the file: CHUNK bytes from at (len of them), read once for the members
 * that lie in it. */
typedef struct window {
    int fd;
    char *buf;
    uint64_t at;
    size_t len;
} window;

/* The file's bytes from pos (*p), how many the window holds (0: the end of the file),
 * read when pos lies outside it; -1 on a read error. */
static ssize_t window_at(window *w, uint64_t pos, const char **p)
{
    if (pos < w->at || pos >= w->at + w->len) {
        ssize_t n = pread(w->fd, w->buf, CHUNK, (off_t)pos);
        if (n <= 0)
            return n;
        w->at = pos;
        w->len = (size_t)n;
    }
    *p = w->buf + (pos - w->at);
    return (ssize_t)(w->at + w->len - pos);
}

/* One gzip member inflated from pos (z: an inflate stream for gzip, reset here;
 * discard: CHUNK bytes of room for what comes past keep's): its compressed length in
 * *len and its first WARCSCAN_KEEP bytes in keep (*kept of them), *total uncompressed.
 * 1 a whole member, 0 none (cut short, or not gzip), -1 a read error. */
static int inflate_member(window *win, z_stream *z, uint64_t pos, char *discard, char *keep,
                          size_t *kept, uint64_t *total, uint64_t *len)
{
    if (inflateReset(z) != Z_OK)
        return 0;
    uint64_t read_at = pos;
    int r = Z_OK;
    *kept = 0;
    *total = 0;
    z->avail_in = 0;
    while (r != Z_STREAM_END) {
        if (z->avail_in == 0) {
            const char *p;
            ssize_t n = window_at(win, read_at, &p);
            if (n < 0)
                return -1;
            if (n == 0)
                return 0; /* the end of the file inside the member: torn */
            read_at += (uint64_t)n;
            z->next_in = (Bytef *)p;
            z->avail_in = (uInt)n;
        }
        bool keeping = *kept < WARCSCAN_KEEP;
        z->next_out = (Bytef *)(keeping ? keep + *kept : discard);
        z->avail_out = keeping ? (uInt)(WARCSCAN_KEEP - *kept) : CHUNK;
        uInt before = z->avail_out;
        r = inflate(z, Z_NO_FLUSH);
        size_t made = before - z->avail_out;
        if (keeping)
            *kept += made;
        *total += made;
        if (r != Z_OK && r != Z_STREAM_END && r != Z_BUF_ERROR)
            return 0; /* not gzip: damage, or a torn member's garbage */
    }
    *len = read_at - pos - z->avail_in;
    return 1;
}

/* One record per gzip member: each member inflated to its end, its record whole. */
static long long scan_gz(int fd, uint64_t size, warcscan_fn fn, void *ctx, char *err, size_t errlen)
{
    char *discard = xmalloc(CHUNK), *keep = xmalloc(WARCSCAN_KEEP);
    window win = {fd, xmalloc(CHUNK), 0, 0};
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 15 + 16) != Z_OK)
        alloc_oom(0);
    uint64_t pos = 0;
    long long rc = 0;
    while (pos < size) {
        size_t kept, head_len;
        uint64_t total, len, block_len;
        int got = inflate_member(&win, &z, pos, discard, keep, &kept, &total, &len);
        if (got < 0) {
            rc = read_error(err, errlen);
            break;
        }
        if (got == 0 || !record_head(keep, kept, &head_len, &block_len)
            || head_len + block_len + 4 != total)
            break;
        found(keep, kept, head_len, head_len + block_len <= kept, pos, len, fn, ctx);
        pos += len;
    }
    inflateEnd(&z);
    free(win.buf);
    free(discard);
    free(keep);
    return rc < 0 ? rc : (long long)pos;
}

long long warcscan(int fd, bool gz, warcscan_fn fn, void *ctx, char *err, size_t errlen)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return read_error(err, errlen);
    uint64_t size = (uint64_t)st.st_size;
    return gz ? scan_gz(fd, size, fn, ctx, err, errlen)
              : scan_plain(fd, size, fn, ctx, err, errlen);
}
