/* jobq.c — see jobq.h; and crawl_request_dup (crawl_request.h).
 *
 * The requests are records packed one after another in a list of chunks, written at
 * the tail and read at the head (a FIFO never needs a record in the middle):
 *
 *   flags      1 byte: JOB_ORIGIN — an origin pointer follows (else the last one's)
 *   origin     sizeof(jobq_origin *) bytes, unaligned (memcpy), when JOB_ORIGIN
 *   max_redirect, depth   zigzag varints (1 byte each for small values)
 *   shared     varint: bytes of the URL the same as the last record's URL
 *   rest       the URL's other bytes, then a NUL
 *
 * The first record of a chunk always writes its origin and shares nothing, so that
 * a chunk is read without the one before it (which is gone by then). The links of a
 * page share their referrer and callback (one origin) and most of their URL (the
 * scheme, host and path's start): a queued link costs a dozen bytes or so where a
 * malloc'ed copy cost its whole URL and about 30 more. */
#include "jobq.h"

#include "alloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum {
    JOB_ORIGIN = 1,
    CHUNK_FIRST = 256,     /* a host's few URLs (the polite Queue has a jobq per host) */
    CHUNK_MAX = 64 * 1024, /* chunks double up to this, or a record's size */
    VARINT_MAX = 10,       /* bytes of a 64-bit varint */
};

struct jobq_chunk {
    jobq_chunk *next;
    size_t size, used, read; /* bytes of data; written; read (read <= used) */
    unsigned char data[];
};

crawl_request *crawl_request_dup(const crawl_request *r)
{
    size_t lu = strlen(r->url) + 1;
    size_t lr = r->referrer ? strlen(r->referrer) + 1 : 0;
    size_t lc = r->callback ? strlen(r->callback) + 1 : 0;
    crawl_request *c = xmalloc(sizeof *c + lu + lr + lc);
    char *p = (char *)(c + 1);
    *c = *r;
    c->url = memcpy(p, r->url, lu);
    c->referrer = lr ? memcpy(p + lu, r->referrer, lr) : NULL;
    c->callback = lc ? memcpy(p + lu + lr, r->callback, lc) : NULL;
    return c;
}

static void origin_release(jobq_origin *o)
{
    if (o && --o->refs == 0)
        free(o);
}

static bool same_text(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* r's referrer and callback as an origin (NULL: neither): the last push's when they
 * are the same. The queue keeps a reference to it as q->last. */
static jobq_origin *origin_of(jobq *q, const crawl_request *r)
{
    if (!r->referrer && !r->callback)
        return NULL;
    jobq_origin *o = q->last;
    if (!o || !same_text(o->referrer, r->referrer) || !same_text(o->callback, r->callback)) {
        size_t lr = r->referrer ? strlen(r->referrer) + 1 : 0;
        size_t lc = r->callback ? strlen(r->callback) + 1 : 0;
        o = xmalloc(sizeof *o + lr + lc);
        o->refs = 1; /* the queue's own, as last */
        o->referrer = lr ? memcpy(o->text, r->referrer, lr) : NULL;
        o->callback = lc ? memcpy(o->text + lr, r->callback, lc) : NULL;
        origin_release(q->last);
        q->last = o;
    }
    return o;
}

/* ---- varints ---- */

static unsigned char *put_varint(unsigned char *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    *p++ = (unsigned char)v;
    return p;
}

static const unsigned char *get_varint(const unsigned char *p, uint64_t *v)
{
    uint64_t x = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        unsigned char b = *p++;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            break;
    }
    *v = x;
    return p;
}

static uint64_t zigzag(int v)
{
    return ((uint64_t)(int64_t)v << 1) ^ (uint64_t)((int64_t)v >> 63);
}

static int unzigzag(uint64_t v)
{
    return (int)(int64_t)((v >> 1) ^ (~(v & 1) + 1));
}

/* ---- the queue ---- */

void jobq_init(jobq *q)
{
    memset(q, 0, sizeof *q);
}

/* Copy n bytes of s, and a NUL, into the buffer *buf of *cap bytes. */
static void keep_url(char **buf, size_t *cap, const char *s, size_t n)
{
    if (n + 1 > *cap) {
        *cap = n + 1 > 2 * *cap ? n + 1 : 2 * *cap;
        *buf = xrealloc(*buf, *cap);
    }
    memcpy(*buf, s, n);
    (*buf)[n] = '\0';
}

/* Empty: the chunks, the URLs kept and the reader's origin go (the last push's
 * origin stays, for the next push to share). */
static void drop_chunks(jobq *q)
{
    free(q->wr_url);
    free(q->rd_url);
    q->wr_url = q->rd_url = NULL;
    q->wr_len = q->wr_cap = q->rd_cap = 0;
    q->wr_origin = NULL;
    jobq_chunk *c = q->head;
    while (c) {
        jobq_chunk *next = c->next;
        free(c);
        c = next;
    }
    q->head = q->tail = NULL;
    origin_release(q->rd_origin);
    q->rd_origin = NULL;
}

void jobq_clear(jobq *q)
{
    crawl_request *r;
    while ((r = jobq_pop(q)))
        free(r);
    drop_chunks(q);
    origin_release(q->last);
    jobq_init(q);
}

/* Bytes of the longest prefix a and b share. */
static size_t shared_prefix(const char *a, size_t na, const char *b, size_t nb)
{
    size_t n = na < nb ? na : nb, i = 0;
    while (i < n && a[i] == b[i])
        i++;
    return i;
}

void jobq_push(jobq *q, const crawl_request *r)
{
    size_t lu = strlen(r->url);
    jobq_origin *o = origin_of(q, r);
    size_t worst = 1 + sizeof o + 4 * VARINT_MAX + lu + 1;
    jobq_chunk *c = q->tail;
    bool fresh = !c || c->size - c->used < worst;
    if (fresh) {
        size_t size = !c ? CHUNK_FIRST : c->size < CHUNK_MAX ? 2 * c->size : CHUNK_MAX;
        if (size < worst)
            size = worst;
        jobq_chunk *n = xmalloc(sizeof *n + size);
        n->next = NULL;
        n->size = size;
        n->used = n->read = 0;
        if (c)
            c->next = n;
        else
            q->head = n;
        q->tail = c = n;
    }
    unsigned char *p = c->data + c->used;
    bool write_origin = fresh || o != q->wr_origin;
    *p++ = write_origin ? JOB_ORIGIN : 0;
    if (write_origin) {
        if (o)
            o->refs++; /* the record's, handed to the reader */
        memcpy(p, &o, sizeof o);
        p += sizeof o;
        q->wr_origin = o;
    }
    p = put_varint(p, zigzag(r->max_redirect));
    p = put_varint(p, zigzag(r->depth));
    size_t same = fresh ? 0 : shared_prefix(q->wr_url, q->wr_len, r->url, lu);
    p = put_varint(p, same);
    memcpy(p, r->url + same, lu - same + 1);
    p += lu - same + 1;
    c->used = (size_t)(p - c->data);
    keep_url(&q->wr_url, &q->wr_cap, r->url, lu);
    q->wr_len = lu;
    q->count++;
}

crawl_request *jobq_pop(jobq *q)
{
    if (q->count == 0)
        return NULL;
    jobq_chunk *c = q->head;
    if (c->read == c->used) { /* this chunk is read: the next has the rest */
        q->head = c->next;
        free(c);
        c = q->head;
    }
    const unsigned char *p = c->data + c->read;
    unsigned flags = *p++;
    if (flags & JOB_ORIGIN) {
        jobq_origin *o;
        memcpy(&o, p, sizeof o);
        p += sizeof o;
        origin_release(q->rd_origin);
        q->rd_origin = o; /* the record's reference, now the reader's */
    }
    uint64_t mr, depth, same;
    p = get_varint(p, &mr);
    p = get_varint(p, &depth);
    p = get_varint(p, &same);
    size_t rest = strlen((const char *)p);
    if (same + rest + 1 > q->rd_cap) {
        q->rd_cap = same + rest + 1 > 2 * q->rd_cap ? same + rest + 1 : 2 * q->rd_cap;
        q->rd_url = xrealloc(q->rd_url, q->rd_cap);
    }
    memcpy(q->rd_url + same, p, rest + 1);
    p += rest + 1;
    c->read = (size_t)(p - c->data);
    jobq_origin *o = q->rd_origin;
    crawl_request view = {q->rd_url, unzigzag(mr), unzigzag(depth), o ? o->referrer : NULL,
                          o ? o->callback : NULL};
    crawl_request *r = crawl_request_dup(&view);
    if (--q->count == 0)
        drop_chunks(q); /* an idle queue (a host's, say) holds nothing but last */
    return r;
}
