/* warc.c — the WARC/1.1 writer, an item pipeline stage (warc.h; docs/warc.md).
 *
 *   open           open FILE (and the --cdx file) in the pool; the warcinfo record
 *   process_item   a response that came over the wire: its records, built here on the
 *                  loop (SHA-1 digests with OpenSSL's libcrypto), appended to the batch
 *                  waiting for the writer, with the index lines that point at them
 *   the writer     (writer.h) takes what waits; in the pool: a gzip member per record
 *                  for FILE.gz (zlib), the index lines' offsets and lengths, the
 *                  write — so compressing costs the loop nothing
 *   close          the writer writes what is left; the CDXJ index, sorted; close
 *
 * The files (the pool's: open, write and close jobs run one at a time): with --resume,
 * open reads the archive back (warcscan.h), cuts a torn last record and appends, its
 * records indexed again; with --warc-max-size, the writer starts the next file
 * (FILE-00001.warc.gz, ...) before a record would take one past the size. Each file
 * begins with its warcinfo record.
 */
#include "warc.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "alloc.h"
#include "future.h"
#include "http.h"
#include "log.h"
#include "outfile.h"
#include "recstream.h"
#include "state.h"
#include "strmap.h"
#include "threads.h"
#include "url.h"
#include "warcscan.h"
#include "writer.h"
#include "extension.h"

/* A URI an earlier run archived: how many of its fetches this run skips. */
typedef struct had_uri {
    char *uri;
    long long n;
    strmap_node node;
} had_uri;

/* A payload already archived: where a revisit record points. */
typedef struct archived {
    strmap_node node; /* key: the payload digest */
    char *digest, *uri, *date, *id;
} archived;

/* An index line waiting for its record's place in a file (warc_cdx_line). */
typedef struct cdx_pending {
    size_t record;    /* its record, counted in the batch */
    char *url, *mime; /* mime NULL: "unk" */
    char stamp[16], digest[38];
    int status;
} cdx_pending;

/* What the writer takes to the pool in one go: records (uncompressed, one after the
 * other), their lengths, and the index lines that point at them. */
typedef struct batch {
    char *data;
    size_t len, cap;
    size_t *records; /* the length of each record in data */
    size_t nrecords, records_cap;
    cdx_pending *cdx;
    size_t ncdx, cdx_cap;
} batch;

/* The archive file being written (the pool's). */
typedef struct warc_out {
    int fd;
    unsigned no;      /* its number, with --warc-max-size */
    char *path;       /* its path */
    const char *name; /* its last component (warcinfo, index) */
    uint64_t offset;  /* of the next record in it */
    uint64_t fresh;   /* where the warcinfo that began it ends (0: a file
                                 * resumed, that holds earlier runs' records): no
                                 * record after it, no rotation */
} warc_out;

typedef struct warc {
    char *path, *cdx_path; /* path: --warc as given (the base of rotated names) */
    char *state;           /* --resume: --state FILE.db (NULL: none) */
    bool gz, resume;
    bool ignore_robots; /* said in the warcinfo */
    long long max_size; /* --warc-max-size (0: one file) */
    char *info;         /* the warcinfo's fields */
    app *a;
    warc_out out;
    int cdx_fd;
    long long cut; /* --resume: the bytes of a torn record cut, or 0 */
    batch pend;    /* records waiting for the writer */
    char *rec;     /* the record being built */
    size_t rec_len, rec_cap;
    strmap payloads; /* digest -> archived */
    strmap had;      /* --resume: of had_uri, the fetches an earlier run archived and
                      * --state does not count done (so fetched again): not archived twice */
    char **cdx;      /* CDXJ lines, sorted at close */
    size_t ncdx, cdx_cap;
    writer w; /* the background writer (writer.h) */
} warc;

/* ---- digests, ids, dates ---------------------------------------------------------- */

static void base32(const unsigned char *in, size_t n, char *out)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    unsigned buf = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        buf = buf << 8 | in[i];
        bits += 8;
        while (bits >= 5) {
            *out++ = abc[(buf >> (bits - 5)) & 31];
            bits -= 5;
        }
    }
    if (bits > 0)
        *out++ = abc[(buf << (5 - bits)) & 31];
    *out = '\0';
}

typedef struct sha1 {
    EVP_MD_CTX *ctx;
} sha1;

static void sha1_init(sha1 *h)
{
    h->ctx = EVP_MD_CTX_new();
    if (!h->ctx || EVP_DigestInit_ex(h->ctx, EVP_sha1(), NULL) != 1)
        alloc_oom(0); /* all it can lack is memory */
}

static void sha1_update(sha1 *h, const void *data, size_t len)
{
    if (len && EVP_DigestUpdate(h->ctx, data, len) != 1)
        alloc_oom(0);
}

/* "sha1:" + base32 into out (38 bytes), and free the context. */
static void sha1_final(sha1 *h, char out[38])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    if (EVP_DigestFinal_ex(h->ctx, md, &n) != 1)
        alloc_oom(0);
    EVP_MD_CTX_free(h->ctx);
    memcpy(out, "sha1:", 5);
    base32(md, n, out + 5);
}

void warc_sha1_base32(const void *data, size_t len, char out[38])
{
    sha1 h;
    sha1_init(&h);
    sha1_update(&h, data, len);
    sha1_final(&h, out);
}

/* "<urn:uuid:...>": a random (version 4) UUID. */
static void record_id(char out[48])
{
    unsigned char b[16];
    size_t got = 0;
    while (got < sizeof b) {
        ssize_t r = getrandom(b + got, sizeof b - got, 0);
        if (r > 0)
            got += (size_t)r;
        else if (r < 0 && errno != EINTR)
            break;
    }
    if (got < sizeof b) { /* no getrandom: the clock and a counter, still unique */
        static unsigned counter;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        unsigned long long v[2] = {(unsigned long long)ts.tv_sec * 1000000000ULL
                                       + (unsigned long long)ts.tv_nsec,
                                   ((unsigned long long)getpid() << 32) | ++counter};
        memcpy(b, v, sizeof b);
    }
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    snprintf(out, 48,
             "<urn:uuid:%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
             "%02x%02x%02x%02x%02x%02x>",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
}

/* WARC-Date (UTC, "2026-01-02T03:04:05Z") and the index's 14 digits, of t (0: now). */
static void utc_at(time_t t, char date[32], char stamp[16])
{
    if (t == 0)
        t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(date, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
    strftime(stamp, 16, "%Y%m%d%H%M%S", &tm);
}

char *warc_surt(const char *url)
{
    const char *p = strstr(url, "://");
    p = p ? p + 3 : url;
    size_t hl = strcspn(p, "/?#");
    const char *rest = p + hl;
    char *host = xstrndup(p, hl);
    for (char *c = host; *c; c++)
        *c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
    char *port = strrchr(host, ':');
    if (port && strchr(port, ']') == NULL)
        *port++ = '\0';
    else
        port = NULL;
    const char *h = strncmp(host, "www.", 4) == 0 ? host + 4 : host;
    char *out = NULL;
    size_t len = 0, cap = 0;
    for (const char *end = h + strlen(h); end > h;) { /* labels, last first */
        const char *dot = end;
        while (dot > h && dot[-1] != '.')
            dot--;
        if (len)
            xappend(&out, &len, &cap, ",", 1);
        xappend(&out, &len, &cap, dot, (size_t)(end - dot));
        end = dot > h ? dot - 1 : h;
    }
    if (port) {
        xappend(&out, &len, &cap, ":", 1);
        xappend(&out, &len, &cap, port, strlen(port));
    }
    xappend(&out, &len, &cap, ")", 1);
    size_t rl = strcspn(rest, "#");
    if (rl == 0)
        xappend(&out, &len, &cap, "/", 1);
    for (size_t i = 0; i < rl; i++) {
        char c = rest[i];
        c = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
        xappend(&out, &len, &cap, &c, 1);
    }
    xappend(&out, &len, &cap, "", 1);
    free(host);
    return out;
}

/* ---- records ------------------------------------------------------------------------ */

static void put(warc *w, const void *data, size_t len)
{
    xappend(&w->rec, &w->rec_len, &w->rec_cap, data, len);
}

static void putf(warc *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void putf(warc *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = xvasprintf(fmt, ap);
    va_end(ap);
    put(w, s, strlen(s));
    free(s);
}

/* The record in w->rec (headers, block, the two CRLFs) joins the batch; the writer
 * makes it one gzip member for FILE.gz. Returns its number in the batch. */
static size_t seal_record(warc *w)
{
    batch *b = &w->pend;
    xappend(&b->data, &b->len, &b->cap, w->rec, w->rec_len);
    if (b->nrecords == b->records_cap) {
        b->records_cap = b->records_cap ? 2 * b->records_cap : 64;
        b->records = xreallocarray(b->records, b->records_cap, sizeof *b->records);
    }
    b->records[b->nrecords] = w->rec_len;
    w->rec_len = 0;
    return b->nrecords++;
}

static void batch_free(batch *b)
{
    for (size_t i = 0; i < b->ncdx; i++) {
        free(b->cdx[i].url);
        free(b->cdx[i].mime);
    }
    free(b->cdx);
    free(b->records);
    free(b->data);
    memset(b, 0, sizeof *b);
}

/* The named fields every record has; then Content-Type, digests and the block. */
static void record_head(warc *w, const char *type, const char *id, const char *date)
{
    putf(w, "WARC/1.1\r\nWARC-Type: %s\r\nWARC-Record-ID: %s\r\nWARC-Date: %s\r\n", type, id, date);
}

static void record_block(warc *w, const char *content_type, const char *block_digest,
                         const char *head, size_t head_len, const char *body, size_t body_len)
{
    if (block_digest)
        putf(w, "WARC-Block-Digest: %s\r\n", block_digest);
    putf(w, "Content-Type: %s\r\nContent-Length: %zu\r\n\r\n", content_type, head_len + body_len);
    put(w, head, head_len);
    put(w, body, body_len);
    put(w, "\r\n\r\n", 4);
}

/* The warcinfo record's fields (application/warc-fields), the same in every file. */
static char *warcinfo_fields(const warc *w)
{
    const crawl_options *o = &w->a->opt;
    return xasprintf("software: crawlstages/%s (crawl-queue)\r\n"
                     "format: WARC File Format 1.1\r\n"
                     "conformsTo: http://iipc.github.io/warc-specifications/specifications/"
                     "warc-format/warc-1.1/\r\n"
                     "http-header-user-agent: %s\r\n"
                     "robots: %s\r\n",
                     CRAWL_VERSION, o->user_agent ? o->user_agent : http_default_user_agent,
                     w->ignore_robots ? "ignore" : "obey");
}

/* The warcinfo record that begins the file named name (made in the pool, as a file
 * is opened). malloc'd, *len bytes. */
static char *warcinfo_record(const char *fields, const char *name, size_t *len)
{
    char id[48], date[32], stamp[16], digest[38];
    record_id(id);
    utc_at(0, date, stamp);
    warc_sha1_base32(fields, strlen(fields), digest);
    char *rec = xasprintf("WARC/1.1\r\nWARC-Type: warcinfo\r\nWARC-Record-ID: %s\r\n"
                          "WARC-Date: %s\r\nWARC-Filename: %s\r\nWARC-Block-Digest: %s\r\n"
                          "Content-Type: application/warc-fields\r\nContent-Length: %zu\r\n"
                          "\r\n%s\r\n\r\n",
                          id, date, name, digest, strlen(fields), fields);
    *len = strlen(rec);
    return rec;
}

/* The payload: the body with its framing undone (chunked), its coding kept. */
typedef struct payload {
    sha1 h;
    size_t len;
} payload;

static void payload_body(void *ctx, const char *data, size_t len)
{
    payload *p = ctx;
    sha1_update(&p->h, data, len);
    p->len += len;
}

static void payload_digest(const char *head, size_t head_len, const crawl_wire *wr, char out[38],
                           size_t *len)
{
    payload p = {.len = 0};
    sha1_init(&p.h);
    const http_sink sink = {.on_body = payload_body, .ctx = &p};
    http_parser *hp = http_parser_new_framed(&sink);
    http_parser_feed(hp, head, head_len);
    http_parser_feed(hp, wr->body, wr->body_len);
    http_parser_free(hp);
    sha1_final(&p.h, out);
    *len = p.len;
}

char *warc_cdx_line(const char *url, const char *stamp, const char *mime, int status,
                    const char *digest, uint64_t length, uint64_t offset, const char *filename)
{
    if (strncmp(digest, "sha1:", 5) == 0)
        digest += 5;
    char *surt = warc_surt(url);
    char *buf = NULL;
    size_t size = 0;
    FILE *m = open_memstream(&buf, &size);
    if (!m)
        alloc_oom(0);
    fprintf(m, "%s %s {\"url\":", surt, stamp);
    json_write_string(m, url);
    fputs(",\"mime\":", m);
    json_write_string(m, mime && *mime ? mime : "unk");
    fprintf(m,
            ",\"status\":\"%d\",\"digest\":\"%s\",\"length\":\"%llu\",\"offset\":\"%llu\","
            "\"filename\":",
            status, digest, (unsigned long long)length, (unsigned long long)offset);
    json_write_string(m, filename);
    fputs("}\n", m);
    if (fclose(m) != 0)
        alloc_oom(0);
    free(surt);
    return buf;
}

/* The index line of record `record` of the batch, to be made by the writer once it
 * knows the record's file, offset and length (compressed). */
static void cdx_line(warc *w, const char *url, const char *stamp, const char *mime, int status,
                     const char *digest, size_t record)
{
    batch *b = &w->pend;
    if (b->ncdx == b->cdx_cap) {
        b->cdx_cap = b->cdx_cap ? 2 * b->cdx_cap : 64;
        b->cdx = xreallocarray(b->cdx, b->cdx_cap, sizeof *b->cdx);
    }
    cdx_pending *c = &b->cdx[b->ncdx++];
    c->record = record;
    c->url = xstrdup(url);
    c->mime = mime ? xstrdup(mime) : NULL;
    snprintf(c->stamp, sizeof c->stamp, "%s", stamp);
    snprintf(c->digest, sizeof c->digest, "%s", digest);
    c->status = status;
}

/* A 304 that answered --recrawl's conditional request (response.not_modified): a
 * revisit record of profile server-not-modified, pointing at the earlier capture by
 * its URI and date (WARC 1.1, 6.7.3; the earlier record's id is not in the store). No
 * WARC-Payload-Digest: the payload is the earlier one. The block is the 304's head. */
static void not_modified_fields(warc *w, const response *r)
{
    putf(w,
         "WARC-Profile: http://netpreserve.org/warc/1.1/revisit/server-not-modified\r\n"
         "WARC-Refers-To-Target-URI: %s\r\n",
         r->url);
    /* the store's fetched_at, "2026-01-02T03:04:05.678Z", to the second of WARC-Date */
    const char *at = r->stored_at;
    if (at && strlen(at) >= 19 && at[10] == 'T')
        putf(w, "WARC-Refers-To-Date: %.19sZ\r\n", at);
}

/* ---- HTTP/2 written as HTTP/1.1 ----------------------------------------------------
 * An HTTP/2 message has no status line or request line: libcurl writes them as
 * "HTTP/2 200 " and "GET /a HTTP/2". WARC readers expect HTTP/1.x there (some have
 * failed on "HTTP/2": commoncrawl news-crawl #42), so, as StormCrawler and Nutch do,
 * the record says "HTTP/1.1" in that line, and a WARC-Protocol field says "h2"
 * (iipc/warc-specifications #42). The fields and the body are kept as they came
 * (HTTP/2 has no chunked framing), so the payload and its digest are the same. */

/* msg with "HTTP/2" in its first line (the token at the start or end) made "HTTP/1.1",
 * malloc'd (length in *out_len); NULL when that line has no such token. */
static char *h2_as_http1(const char *msg, size_t len, size_t *out_len)
{
    static const char h2[] = "HTTP/2", h1[] = "HTTP/1.1";
    const char *nl = memchr(msg, '\n', len);
    size_t line = nl ? (size_t)(nl - msg) : len;
    if (line && msg[line - 1] == '\r')
        line--;
    size_t at;
    if (line >= 7 && memcmp(msg, "HTTP/2 ", 7) == 0)
        at = 0; /* "HTTP/2 200 " */
    else if (line >= 7 && memcmp(msg + line - 7, " HTTP/2", 7) == 0)
        at = line - 6; /* "GET /a HTTP/2" */
    else
        return NULL;
    char *out = xmalloc(len + sizeof h1 - sizeof h2 + 1);
    memcpy(out, msg, at);
    memcpy(out + at, h1, sizeof h1 - 1);
    size_t rest = at + sizeof h2 - 1;
    memcpy(out + at + sizeof h1 - 1, msg + rest, len - rest);
    *out_len = len + sizeof h1 - sizeof h2;
    return out;
}

/* A response: its response (or revisit) record, then its request record. */
static void archive(warc *w, const item *it)
{
    const response *r = it->response;
    const crawl_wire *wr = r ? r->wire : NULL;
    if (!wr || wr->head_len == 0)
        return; /* no response came: nothing was on the wire to keep */
    strmap_node *hn = w->resume ? strmap_find(&w->had, r->url) : NULL;
    had_uri *had = hn ? strmap_entry(hn, had_uri, node) : NULL;
    if (had && had->n > 0) {
        had->n--; /* an earlier run archived it: a fetch made again after a kill -9 */
        return;
    }
    char resp_id[48], req_id[48], date[32], stamp[16], pdigest[38], bdigest[38];
    record_id(resp_id);
    record_id(req_id);
    utc_at(it->at.tv_sec, date, stamp); /* the store's fetched_at, to the second */
    size_t head_len = wr->head_len, request_len = wr->request_len;
    char *head1 = h2_as_http1(wr->head, wr->head_len, &head_len);
    char *request1 =
        head1 && wr->request_len ? h2_as_http1(wr->request, wr->request_len, &request_len) : NULL;
    const char *head = head1 ? head1 : wr->head;
    const char *req = request1 ? request1 : wr->request;
    const char *protocol = head1 ? "WARC-Protocol: h2\r\n" : "";
    size_t plen = 0;
    bool nm = r->not_modified;
    if (!nm)
        payload_digest(head, head_len, wr, pdigest, &plen);
    strmap_node *seen = plen ? strmap_find(&w->payloads, pdigest) : NULL;

    record_head(w, seen || nm ? "revisit" : "response", resp_id, date);
    putf(w, "WARC-Target-URI: %s\r\n%s", r->url, protocol);
    if (wr->peer[0])
        putf(w, "WARC-IP-Address: %s\r\n", wr->peer);
    if (!nm)
        putf(w, "WARC-Payload-Digest: %s\r\n", pdigest);
    sha1 h;
    sha1_init(&h);
    sha1_update(&h, head, head_len);
    if (nm) {
        not_modified_fields(w, r);
        sha1_final(&h, bdigest);
        record_block(w, "application/http;msgtype=response", bdigest, head, head_len, NULL, 0);
        memcpy(pdigest, bdigest, sizeof pdigest); /* the index's digest: the block's */
    } else if (seen) {
        archived *a = strmap_entry(seen, archived, node);
        putf(w,
             "WARC-Profile: http://netpreserve.org/warc/1.1/revisit/"
             "identical-payload-digest\r\nWARC-Refers-To: %s\r\n"
             "WARC-Refers-To-Target-URI: %s\r\nWARC-Refers-To-Date: %s\r\n",
             a->id, a->uri, a->date);
        sha1_final(&h, bdigest);
        record_block(w, "application/http;msgtype=response", bdigest, head, head_len, NULL, 0);
    } else {
        if (wr->truncated || r->truncated)
            put(w, "WARC-Truncated: length\r\n", 24);
        sha1_update(&h, wr->body, wr->body_len);
        sha1_final(&h, bdigest);
        record_block(w, "application/http;msgtype=response", bdigest, head, head_len, wr->body,
                     wr->body_len);
        if (plen) {
            archived *a = xcalloc(1, sizeof *a);
            a->digest = xstrdup(pdigest);
            a->uri = xstrdup(r->url);
            a->date = xstrdup(date);
            a->id = xstrdup(resp_id);
            strmap_add(&w->payloads, &a->node, a->digest);
        }
    }
    size_t record = seal_record(w);
    if (w->cdx_path) {
        char *mime = seen || nm ? NULL : warc_media_type(response_header(r, "Content-Type"));
        cdx_line(w, r->url, stamp, seen || nm ? "warc/revisit" : mime, r->status, pdigest, record);
        free(mime);
    }

    if (wr->request_len) {
        record_head(w, "request", req_id, date);
        putf(w, "WARC-Target-URI: %s\r\nWARC-Concurrent-To: %s\r\n%s", r->url, resp_id, protocol);
        if (wr->peer[0])
            putf(w, "WARC-IP-Address: %s\r\n", wr->peer);
        warc_sha1_base32(req, request_len, bdigest);
        record_block(w, "application/http;msgtype=request", bdigest, req, request_len, NULL, 0);
        seal_record(w);
    }
    free(head1);
    free(request1);
}

/* ---- files (pool threads) ----------------------------------------------------------- */

static coro_error *file_error(const char *what, const char *path, int e)
{
    return coro_error_new(CORO_ERROR, 0, "%s '%s': %s", what, path, strerror(e));
}

/* Make out the file number no: its path and name. */
static void out_name(warc *w, unsigned no)
{
    warc_out *o = &w->out;
    free(o->path);
    o->no = no;
    o->path = w->max_size ? warc_file_name(w->path, no) : xstrdup(w->path);
    const char *slash = strrchr(o->path, '/');
    o->name = slash ? slash + 1 : o->path;
}

/* One record (n bytes at rec) as a gzip member of its own, at the end of out. */
static void gzip_member(const char *rec, size_t n, char **out, size_t *len, size_t *cap)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        alloc_oom(0);
    size_t bound = deflateBound(&z, (uLong)n);
    if (*cap - *len < bound) {
        *cap = *len + bound + *cap / 2;
        *out = xrealloc(*out, *cap);
    }
    z.next_in = (Bytef *)rec;
    z.avail_in = (uInt)n;
    z.next_out = (Bytef *)*out + *len;
    z.avail_out = (uInt)(*cap - *len);
    if (deflate(&z, Z_FINISH) != Z_STREAM_END)
        alloc_oom(0); /* with deflateBound's room, only memory can fail */
    *len += z.total_out;
    deflateEnd(&z);
}

/* A record as it goes in the file: a gzip member for FILE.gz, else as it is (a
 * malloc'd copy either way), *len bytes. */
static char *file_bytes(const warc *w, const char *rec, size_t n, size_t *len)
{
    if (!w->gz) {
        *len = n;
        return xmemdup(rec, n);
    }
    size_t cap = n / 3 + 4096;
    char *out = xmalloc(cap);
    *len = 0;
    gzip_member(rec, n, &out, len, &cap);
    return out;
}

/* The file's warcinfo record as it goes in the file. */
static char *warcinfo_bytes(const warc *w, size_t *len)
{
    size_t n;
    char *rec = warcinfo_record(w->info, w->out.name, &n);
    char *bytes = file_bytes(w, rec, n, len);
    free(rec);
    return bytes;
}

/* The file's warcinfo record, written at its offset. */
static coro_error *write_warcinfo(warc *w)
{
    size_t len;
    char *bytes = warcinfo_bytes(w, &len);
    coro_error *err = NULL;
    if (write_all(w->out.fd, bytes, len) < 0)
        err = file_error("writing --warc", w->out.path, errno);
    free(bytes);
    /* a file resumed holds the earlier runs' records before it: not fresh */
    w->out.fresh = w->out.offset == 0 ? len : 0;
    w->out.offset += len;
    return err;
}

/* had's count of uri, plus n (made at 0). */
static void had_count(warc *w, const char *uri, long long n)
{
    strmap_node *hn = strmap_find(&w->had, uri);
    had_uri *h = hn ? strmap_entry(hn, had_uri, node) : NULL;
    if (!h) {
        h = xcalloc(1, sizeof *h);
        h->uri = xstrdup(uri);
        strmap_add(&w->had, &h->node, h->uri);
    }
    h->n += n;
}

/* state_done_responses: the fetches of uri --state counts done are not fetched again. */
static void done_responses(void *ctx, const char *uri, long long n)
{
    warc *w = ctx;
    if (strmap_find(&w->had, uri))
        had_count(w, uri, -n);
}

/* --resume: an index line for each response and revisit an earlier run archived, and
 * its payload remembered (for revisits). */
static void scanned(void *ctx, const warcscan_rec *r)
{
    warc *w = ctx;
    bool resp = strcmp(r->type, "response") == 0, rev = strcmp(r->type, "revisit") == 0;
    if (!resp && !rev)
        return;
    had_count(w, r->uri, 1);
    char stamp[16];
    size_t k = 0;
    for (const char *c = r->date; *c && k < 14; c++)
        if (*c >= '0' && *c <= '9')
            stamp[k++] = *c;
    stamp[k] = '\0';
    if (w->cdx_path) {
        if (w->ncdx == w->cdx_cap) {
            w->cdx_cap = w->cdx_cap ? 2 * w->cdx_cap : 64;
            w->cdx = xreallocarray(w->cdx, w->cdx_cap, sizeof *w->cdx);
        }
        w->cdx[w->ncdx++] = warc_cdx_line(r->uri, stamp, rev ? "warc/revisit" : r->mime, r->status,
                                          r->payload_digest, r->length, r->offset, w->out.name);
    }
    char empty[38];
    warc_sha1_base32("", 0, empty);
    if (resp && r->payload_digest[0] && strcmp(r->payload_digest, empty) != 0
        && !strmap_find(&w->payloads, r->payload_digest)) {
        archived *a = xcalloc(1, sizeof *a);
        a->digest = xstrdup(r->payload_digest);
        a->uri = xstrdup(r->uri);
        a->date = xstrdup(r->date);
        a->id = xstrdup(r->id);
        strmap_add(&w->payloads, &a->node, a->digest);
    }
}

/* --resume: open the file out names, read its whole records back and cut what follows
 * them (a record torn by a kill). Its descriptor, positioned at the end. */
static int reopen(warc *w, char *why, size_t whylen)
{
    int fd = outfile_open_fd(w->out.path, O_RDWR | O_CREAT, "--warc", why, whylen);
    struct stat st;
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) == 0 && !S_ISREG(st.st_mode))
        return fd; /* a FIFO, /dev/null: nothing to read back */
    char err[300];
    long long keep = warcscan(fd, w->gz, scanned, w, err, sizeof err);
    if (keep < 0 || (keep < st.st_size && ftruncate(fd, keep) < 0)
        || lseek(fd, keep, SEEK_SET) < 0) {
        snprintf(why, whylen, "--resume: --warc '%s': %s", w->out.path,
                 keep < 0 ? err : strerror(errno));
        close(fd);
        return -1;
    }
    w->cut += (long long)st.st_size - keep;
    w->out.offset = (uint64_t)keep;
    return fd;
}

/* Never waits for a FIFO's reader (outfile.h): without one, the crawl does not start.
 * A fresh crawl writes the file claimed empty (app.c refuses one that holds data); a
 * rotated one also finds no next file there. --resume reads every file back, and
 * appends to the last. */
static coro_value open_work(void *arg, coro_error **err)
{
    warc *w = arg;
    char why[1024];
    struct stat st;
    out_name(w, 0);
    why[0] = '\0';
    if (!w->resume) {
        char *next = w->max_size ? warc_file_name(w->path, 1) : NULL;
        if (next && stat(next, &st) == 0)
            snprintf(why, sizeof why,
                     "--warc '%s' holds a crawl already (an earlier "
                     "crawl's archive): only --resume adds to it, or name a new file",
                     next);
        else
            w->out.fd = outfile_open_fd(w->out.path, O_WRONLY | O_CREAT | O_TRUNC, "--warc", why,
                                        sizeof why);
        free(next);
    } else {
        w->out.fd = reopen(w, why, sizeof why);
        while (w->out.fd >= 0 && w->max_size) { /* the files after it */
            char *next = warc_file_name(w->path, w->out.no + 1);
            bool more = stat(next, &st) == 0;
            free(next);
            if (!more)
                break;
            close(w->out.fd);
            out_name(w, w->out.no + 1);
            w->out.fd = reopen(w, why, sizeof why);
        }
        /* what was archived, less what the state counts done: the fetches made again (a
         * URL fetched more than once on purpose, with dont_filter, is counted so) */
        if (w->out.fd >= 0 && w->state
            && state_done_responses(w->state, done_responses, w, why, sizeof why) < 0) {
            close(w->out.fd);
            w->out.fd = -1;
        }
        size_t info = 0;
        if (w->out.fd >= 0 && w->max_size)
            free(warcinfo_bytes(w, &info));
        if (w->out.fd >= 0 && w->max_size && w->out.offset > 0
            && w->out.offset + info > (uint64_t)w->max_size) {
            close(w->out.fd); /* full: the next one */
            out_name(w, w->out.no + 1);
            w->out.offset = 0;
            w->out.fd = outfile_open_fd(w->out.path, O_WRONLY | O_CREAT | O_EXCL, "--warc", why,
                                        sizeof why);
        }
    }
    if (w->out.fd >= 0 && w->cdx_path)
        w->cdx_fd = outfile_open_fd(w->cdx_path, O_WRONLY | O_CREAT | (w->resume ? 0 : O_TRUNC),
                                    "--cdx", why, sizeof why);
    if (w->out.fd < 0 || (w->cdx_path && w->cdx_fd < 0))
        *err = coro_error_new(CORO_ERROR, 0, "%s", why);
    else
        *err = write_warcinfo(w);
    return (coro_value){NULL, 0};
}

/* --warc-max-size: the file is done, the next one begins (with its warcinfo). */
static coro_error *rotate(warc *w)
{
    if (close(w->out.fd) < 0) {
        w->out.fd = -1;
        return file_error("writing --warc", w->out.path, errno);
    }
    out_name(w, w->out.no + 1);
    w->out.offset = 0;
    char why[1024];
    w->out.fd =
        outfile_open_fd(w->out.path, O_WRONLY | O_CREAT | O_EXCL, "--warc", why, sizeof why);
    if (w->out.fd < 0)
        return coro_error_new(CORO_ERROR, 0, "%s", why);
    return write_warcinfo(w);
}

typedef struct write_job {
    warc *w; /* its files: the pool's while the writer runs */
    batch b;
    char **lines; /* out: its index lines, complete */
} write_job;

/* Whether a record of len bytes goes in a new file, pending bytes waiting to be
 * written to this one: the file holds a record already besides its warcinfo, and this
 * one would take it past --warc-max-size. */
static bool must_rotate(const warc *w, size_t pending, size_t len)
{
    uint64_t end = w->out.offset + pending;
    return w->max_size && end > w->out.fresh && end + len > (uint64_t)w->max_size;
}

/* On a pool thread: each record compressed (FILE.gz) and placed, in this file or the
 * next (--warc-max-size), its index line made, the bytes written. */
static coro_value write_work(void *arg, coro_error **err)
{
    write_job *j = arg;
    warc *w = j->w;
    batch *b = &j->b;
    j->lines = xcalloc(b->ncdx, sizeof *j->lines);
    char *out = NULL;
    size_t len = 0, cap = 0, at = 0, c = 0;
    for (size_t i = 0; i < b->nrecords && !*err; i++) {
        size_t n;
        char *rec = file_bytes(w, b->data + at, b->records[i], &n);
        at += b->records[i];
        if (must_rotate(w, len, n)) {
            if (write_all(w->out.fd, out, len) < 0)
                *err = file_error("writing --warc", w->out.path, errno);
            else
                *err = rotate(w);
            len = 0;
        }
        if (!*err) {
            for (; c < b->ncdx && b->cdx[c].record == i; c++) {
                const cdx_pending *p = &b->cdx[c];
                j->lines[c] = warc_cdx_line(p->url, p->stamp, p->mime, p->status, p->digest, n,
                                            w->out.offset + len, w->out.name);
            }
            xappend(&out, &len, &cap, rec, n);
        }
        free(rec);
    }
    if (!*err && write_all(w->out.fd, out, len) < 0)
        *err = file_error("writing --warc", w->out.path, errno);
    if (!*err)
        w->out.offset += len;
    free(out);
    return (coro_value){NULL, 0};
}

static void write_job_free(void *arg)
{
    write_job *j = arg;
    if (j->lines)
        for (size_t i = 0; i < j->b.ncdx; i++)
            free(j->lines[i]);
    free(j->lines);
    batch_free(&j->b);
    free(j);
}

static int cmp_line(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The index, sorted (by SURT, then time: the order of the bytes), and both files
 * closed. With --resume the index is written anew: the earlier runs' lines, made again
 * from the archive (open), and this run's. */
static coro_value close_work(void *arg, coro_error **err)
{
    warc *w = arg;
    if (w->cdx_fd >= 0) {
        struct stat st;
        if (w->ncdx)
            qsort(w->cdx, w->ncdx, sizeof *w->cdx, cmp_line);
        if (w->resume && fstat(w->cdx_fd, &st) == 0 && S_ISREG(st.st_mode)
            && ftruncate(w->cdx_fd, 0) < 0)
            *err = file_error("writing --cdx", w->cdx_path, errno);
        for (size_t i = 0; i < w->ncdx && !*err; i++)
            if (write_all(w->cdx_fd, w->cdx[i], strlen(w->cdx[i])) < 0)
                *err = file_error("writing --cdx", w->cdx_path, errno);
        if (close(w->cdx_fd) < 0 && !*err)
            *err = file_error("writing --cdx", w->cdx_path, errno);
        w->cdx_fd = -1;
    }
    if (w->out.fd >= 0) {
        if (close(w->out.fd) < 0 && !*err)
            *err = file_error("writing --warc", w->out.path, errno);
        w->out.fd = -1;
    }
    return (coro_value){NULL, 0};
}

/* ---- what an earlier run archived (state.c, before the crawl) ---------------------- */

typedef struct uris {
    void (*fn)(void *ctx, const char *uri);
    void *ctx;
} uris;

static void archived_uri(void *ctx, const warcscan_rec *r)
{
    const uris *u = ctx;
    if (strcmp(r->type, "response") == 0 || strcmp(r->type, "revisit") == 0)
        u->fn(u->ctx, r->uri);
}

int warc_archived(const warc_config *cfg, void (*fn)(void *ctx, const char *uri), void *ctx,
                  char *err, size_t errlen)
{
    size_t n = strlen(cfg->path);
    bool gz = n > 3 && strcmp(cfg->path + n - 3, ".gz") == 0;
    uris u = {fn, ctx};
    for (unsigned no = 0;; no++) {
        char *path = cfg->max_size ? warc_file_name(cfg->path, no) : xstrdup(cfg->path);
        int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        struct stat st;
        char why[300];
        long long r = 0;
        if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
            r = warcscan(fd, gz, archived_uri, &u, why, sizeof why);
        if (r < 0)
            snprintf(err, errlen, "--warc '%s': %s", path, why);
        if (fd >= 0)
            close(fd);
        free(path);
        if (r < 0)
            return -1;
        if (fd < 0 || !cfg->max_size)
            return 0;
    }
}

/* ---- the writer's operations (writer.h) ------------------------------------------- */

/* What waits goes in one job: the writer takes whatever gathered while it wrote. */
static void *take(void *self, bool closing)
{
    (void)closing;
    warc *w = self;
    if (!w->pend.len)
        return NULL;
    write_job *j = xcalloc(1, sizeof *j);
    j->w = w;
    j->b = w->pend;
    memset(&w->pend, 0, sizeof w->pend);
    return j;
}

/* Written: its index lines join the rest. */
static void written(void *self, void *job)
{
    warc *w = self;
    write_job *j = job;
    if (!j->b.ncdx)
        return;
    if (w->ncdx + j->b.ncdx > w->cdx_cap) {
        w->cdx_cap = 2 * (w->ncdx + j->b.ncdx);
        w->cdx = xreallocarray(w->cdx, w->cdx_cap, sizeof *w->cdx);
    }
    memcpy(w->cdx + w->ncdx, j->lines, j->b.ncdx * sizeof *j->lines);
    w->ncdx += j->b.ncdx;
    free(j->lines);
    j->lines = NULL;
}

/* WARC_MAX_PENDING bytes wait for the disk already. */
static bool full(const void *self)
{
    return ((const warc *)self)->pend.len >= WARC_MAX_PENDING;
}

/* --resume: what was cut, for -v. */
static void opened(void *self)
{
    warc *w = self;
    if (w->cut > 0)
        log_info("--resume: --warc '%s': a torn last record cut (%lld bytes)", w->out.path, w->cut);
}

static const writer_ops warc_ops = {
    .name = "warc_writer",
    .open = open_work,
    .opened = opened,
    .take = take,
    .write = write_work,
    .written = written,
    .job_free = write_job_free,
    .full = full,
    .close = close_work,
};

/* ---- the pipeline stage ------------------------------------------------------------- */

static coro *warc_open(void *self, engine *e)
{
    warc *w = self;
    w->a = engine_app(e);
    w->info = warcinfo_fields(w);
    return writer_open(&w->w, e);
}

static coro *warc_process_item(void *self, item *it, bool *drop)
{
    (void)drop;
    warc *w = self;
    if (!writer_error(&w->w))
        archive(w, it);
    if (w->pend.len)
        writer_wake(&w->w);
    return writer_room(&w->w);
}

/* A download of the engine's own (robots.txt): archived as a response is, though it
 * is no record of the crawl. */
static void warc_process_download(void *self, const request *req, const response *resp)
{
    (void)req;
    warc *w = self;
    item it = {.response = resp, .output_end = -1};
    if (!writer_error(&w->w))
        archive(w, &it);
    if (w->pend.len)
        writer_wake(&w->w);
}

static coro *warc_close(void *self)
{
    return writer_close(&((warc *)self)->w);
}

static void drop_archived(strmap_node *n)
{
    archived *a = strmap_entry(n, archived, node);
    free(a->digest);
    free(a->uri);
    free(a->date);
    free(a->id);
    free(a);
}

static void drop_had(strmap_node *n)
{
    had_uri *h = strmap_entry(n, had_uri, node);
    free(h->uri);
    free(h);
}

static void warc_free(void *self)
{
    warc *w = self;
    writer_clear(&w->w);
    if (w->out.fd >= 0)
        close(w->out.fd);
    if (w->cdx_fd >= 0)
        close(w->cdx_fd);
    strmap_clear(&w->payloads, drop_archived);
    strmap_free(&w->payloads);
    strmap_clear(&w->had, drop_had);
    strmap_free(&w->had);
    for (size_t i = 0; i < w->ncdx; i++)
        free(w->cdx[i]);
    free(w->cdx);
    batch_free(&w->pend);
    free(w->rec);
    free(w->info);
    free(w->out.path);
    free(w->path);
    free(w->cdx_path);
    free(w->state);
    free(w);
}

char *warc_file_name(const char *base, unsigned n)
{
    static const char *const ends[] = {".warc.gz", ".warc", ".gz"};
    size_t len = strlen(base);
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++) {
        size_t e = strlen(ends[i]);
        if (len > e && strcmp(base + len - e, ends[i]) == 0)
            return xasprintf("%.*s-%05u%s", (int)(len - e), base, n, ends[i]);
    }
    return xasprintf("%s-%05u", base, n);
}

item_pipeline warc_pipeline(const warc_config *cfg)
{
    warc *w = xcalloc(1, sizeof *w);
    w->path = xstrdup(cfg->path);
    w->cdx_path = cfg->cdx_path ? xstrdup(cfg->cdx_path) : NULL;
    w->max_size = cfg->max_size;
    w->resume = cfg->resume;
    strmap_init(&w->had);
    w->state = cfg->resume && cfg->state ? xstrdup(cfg->state) : NULL;
    w->ignore_robots = cfg->ignore_robots;
    size_t n = strlen(cfg->path);
    w->gz = n > 3 && strcmp(cfg->path + n - 3, ".gz") == 0;
    w->out.fd = w->cdx_fd = -1;
    strmap_init(&w->payloads);
    writer_init(&w->w, &warc_ops, w, NULL);
    return (item_pipeline){
        .name = "warc",
        .self = w,
        .wants_wire = true,
        .open = warc_open,
        .process_item = warc_process_item,
        .process_download = warc_process_download,
        .close = warc_close,
        .free = warc_free,
    };
}

/* ---- the descriptor (extension.h) ---- */

warc_config warc_config_of(const settings *s)
{
    return (warc_config){.path = s->warc_base, /* rotated: the names derive from it */
                         .cdx_path = s->cdx,
                         .max_size = s->warc_max_size,
                         .resume = s->resume,
                         .ignore_robots = s->ignore_robots,
                         .state = s->state};
}

static bool on(const settings *s)
{
    return s->warc != NULL;
}

static int make(engine *e, const settings *s, item_pipeline *out, char *err, size_t errlen)
{
    (void)e, (void)err, (void)errlen;
    warc_config cfg = warc_config_of(s);
    *out = warc_pipeline(&cfg);
    return 0;
}

/* The descriptor (extension.h): --warc, order 500. */
const extension warc_extension = {"warc", EXT_PIPELINE, 500, on, .make_pipeline = make};
