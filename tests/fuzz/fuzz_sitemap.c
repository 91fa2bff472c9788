/* fuzz_sitemap.c — libFuzzer target for the sitemap parser (common/web/sitemap_parser.h).
 *
 * Input: a mode byte (bit 0: small limits — 5 URLs, 24-byte locs, depth 4, 4 KB — else
 * the defaults; bit 1: the payload is gzipped here first, so that the inflating path
 * sees valid streams), then a chunk spec (fuzz_common.h), then the file.
 *
 * Invariants:
 *   - each loc delivered is non-empty, at most max_loc_len bytes, without blanks at its
 *     ends; at most max_urls of them, and sitemap_parser_count says how many;
 *   - once a feed returns -1 every later one does; finish returns -1 exactly when
 *     there is an error line, which is one line;
 *   - fed in one piece and fed in the spec's pieces, the file gives the same locs when
 *     both parses succeed; when one is refused, its locs are the first ones of the
 *     other's (where it stops may depend on the pieces: the unparsed-construct limit
 *     is checked after each piece).
 */
#include "fuzz_common.h"

#include "sitemap_parser.h"

#include <stdbool.h>
#include <zlib.h>

typedef struct run {
    record locs; /* "U loc\n" / "I loc\n" */
    size_t n;
    const sitemap_limits *lim;
} run;

static void on_loc(void *ctx, sitemap_kind kind, const char *loc)
{
    run *r = ctx;
    size_t n = strlen(loc);
    FUZZ_CHECK(n > 0 && n <= r->lim->max_loc_len);
    FUZZ_CHECK(!strchr(" \t\r\n", loc[0]) && !strchr(" \t\r\n", loc[n - 1]));
    FUZZ_CHECK(kind == SITEMAP_URL || kind == SITEMAP_INDEX_ENTRY);
    r->n++;
    FUZZ_CHECK(r->n <= r->lim->max_urls);
    record_adds(&r->locs, kind == SITEMAP_URL ? "U " : "I ");
    record_add(&r->locs, loc, n);
    record_add(&r->locs, "\n", 1);
}

/* One parse; returns finish's result. */
static int parse(const sitemap_limits *lim, const uint8_t *data, size_t size, chunker *c, run *r)
{
    r->lim = lim;
    sitemap_parser *p = sitemap_parser_new(lim, on_loc, r);
    bool refused = false;
    for (size_t off = 0; off < size;) {
        size_t n = c ? chunker_next(c, size - off) : size - off;
        int rc = sitemap_parser_feed(p, data + off, n);
        FUZZ_CHECK(rc == 0 || rc == -1);
        FUZZ_CHECK(!refused || rc == -1);
        refused = rc == -1;
        off += n;
    }
    int rc = sitemap_parser_finish(p);
    FUZZ_CHECK(!refused || rc == -1);
    const char *err = sitemap_parser_error(p);
    FUZZ_CHECK((rc == -1) == (err != NULL));
    FUZZ_CHECK(!err || (*err && !strchr(err, '\n')));
    FUZZ_CHECK(sitemap_parser_count(p) == r->n);
    FUZZ_CHECK(sitemap_parser_finish(p) == rc); /* a second finish changes nothing */
    sitemap_parser_free(p);
    return rc;
}

static bool starts_with(const record *a, const record *b)
{
    return a->len <= b->len && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}

static uint8_t *gzip_payload(const uint8_t *data, size_t size, size_t *out_len)
{
    z_stream zs = {0};
    FUZZ_CHECK(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
    size_t cap = deflateBound(&zs, (uLong)size);
    uint8_t *out = malloc(cap);
    FUZZ_CHECK(out != NULL);
    zs.next_in = (unsigned char *)data;
    zs.avail_in = (uInt)size;
    zs.next_out = out;
    zs.avail_out = (uInt)cap;
    FUZZ_CHECK(deflate(&zs, Z_FINISH) == Z_STREAM_END);
    *out_len = cap - zs.avail_out;
    deflateEnd(&zs);
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    uint8_t mode = data[0];
    data++, size--;
    chunker c = chunker_take(&data, &size);

    sitemap_limits lim;
    sitemap_default_limits(&lim);
    if (mode & 1) {
        lim.max_urls = 5;
        lim.max_loc_len = 24;
        lim.max_depth = 4;
        lim.max_bytes = 4096;
    }
    uint8_t *gz = NULL;
    if (mode & 2) {
        gz = gzip_payload(data, size, &size);
        data = gz;
    }

    run whole = {0}, pieces = {0};
    int rc_whole = parse(&lim, data, size, NULL, &whole);
    int rc_pieces = parse(&lim, data, size, &c, &pieces);
    if (rc_whole == 0 && rc_pieces == 0)
        FUZZ_CHECK(record_equal(&whole.locs, &pieces.locs));
    else if (rc_whole != 0 && rc_pieces == 0)
        FUZZ_CHECK(starts_with(&whole.locs, &pieces.locs));
    else if (rc_pieces != 0 && rc_whole == 0)
        FUZZ_CHECK(starts_with(&pieces.locs, &whole.locs));
    else
        FUZZ_CHECK(starts_with(&whole.locs, &pieces.locs)
                   || starts_with(&pieces.locs, &whole.locs));
    record_free(&whole.locs);
    record_free(&pieces.locs);
    free(gz);
    return 0;
}
