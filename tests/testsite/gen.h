/* gen.h — generated content: the pages of a --generate site, made on request from the
 * seed and the page number (nothing is kept), and the big synthetic bodies of site files
 * (links=N, nest=N, bytes=N). */
#ifndef TESTSITE_GEN_H
#define TESTSITE_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "sbuf.h"

typedef struct gen_spec {
    long pages; /* page 0 is "/", pages 1..pages-1 are /p/<i> */
    long links; /* links per page (at least the two tree links) */
    long size;  /* body size to pad to, in bytes (about) */
    unsigned long long seed;
    long validators; /* validators=1: each page has an ETag and a Last-Modified, and
                          * a conditional request for it gets a 304 */
    long csschain;   /* csschain=1: each page links the stylesheet /css/0.css, and
                          * /css/<k>.css @imports /css/<k+1>.css, without end */
} gen_spec;

#define GEN_MAX_PAGES 100000000L
#define GEN_MAX_LINKS 100000L
#define GEN_MAX_SIZE  (64L * 1024 * 1024)

/* Parse "pages=N,links=K,size=B,seed=S,validators=V,csschain=C" (any subset, any
 * order) over the defaults pages=100,links=10,size=2000,seed=1,validators=0,
 * csschain=0. Returns 0, or -1 with a message in err. */
int gen_parse_spec(const char *spec, gen_spec *out, char *err, size_t errlen);

/* The page number of a path ("/" -> 0, "/p/7" -> 7), or -1 when it is not a page of
 * the site. The path has no query string. */
long gen_page_index(const gen_spec *g, const char *path);

/* csschain=1: the number of a stylesheet's path ("/css/7.css" -> 7), or -1 when it
 * is none (or csschain is 0). */
long gen_css_index(const gen_spec *g, const char *path);
/* Stylesheet k of the chain: it @imports stylesheet k+1. malloc'd (length in *len). */
char *gen_render_css(long k, size_t *len);

/* Render page i (0 <= i < pages) with absolute links under base ("http://h:p").
 * Returns a malloc'd body (length in *len). */
char *gen_render(const gen_spec *g, const char *base, long i, size_t *len);

/* Append n links <a href="PREFIX<k>">, k = 1..n, one per line. */
void gen_append_links(sbuf *b, const char *prefix, long n);
/* Append n nested <div> elements around a short text. */
void gen_append_nest(sbuf *b, long n);

/* What the filler of bytes=N is made of (fill=): HTML paragraphs (the default), text
 * without a '<', or NUL bytes. Every kind repeats with the period GEN_FILL_PERIOD. */
typedef enum gen_fill_kind { FILL_HTML, FILL_TEXT, FILL_NUL } gen_fill_kind;
#define GEN_FILL_PERIOD 64

/* The filler: a fixed pattern. Returns a pointer to the bytes at `offset` of the
 * endless pattern; at least *avail (>= 4096) bytes are readable there. */
const char *gen_fill(gen_fill_kind kind, uint64_t offset, size_t *avail);
/* gen_fill(FILL_HTML, ...). */
const char *gen_filler(uint64_t offset, size_t *avail);

#endif
