/* site.h — the model of a scenario site: one entry per path, read from a .site file
 * (format: tests/sites/README.md). Loading checks everything and reads the files the
 * site refers to; site_finish then expands {base} and renders the HTML bodies, once the
 * port is known. */
#ifndef TESTSITE_SITE_H
#define TESTSITE_SITE_H

#include <stdbool.h>
#include <stddef.h>

#include "gen.h"

typedef enum body_kind {
    BODY_HTML, /* rendered from link lines, links=N, nest=N (or a default page) */
    BODY_TEXT, /* given: inline block, body=TEXT or body=@file */
    BODY_RAW,  /* a whole response, sent verbatim, then the connection is closed */
    BODY_BYTES /* bytes=N of filler, generated while sending */
} body_kind;

typedef struct site_page {
    char *path;
    int line; /* where the page is defined */
    int status;
    char *type;     /* NULL: no Content-Type header */
    char *charset;  /* NULL: no charset parameter */
    char *location; /* NULL: no Location header */
    char **links;   /* link lines, in order */
    size_t nlinks;
    char **headers; /* extra "Name: value" lines */
    size_t nheaders;
    body_kind kind;
    char *body; /* after site_finish: the final body (or raw response) */
    size_t body_len;
    long long bytes;    /* BODY_BYTES: body size */
    gen_fill_kind fill; /* BODY_BYTES: what the filler is made of (fill=) */
    bool gzip;          /* encoding=gzip: sent compressed (site_finish) */
    long gen_links;     /* links=N */
    char *link_prefix;  /* href prefix of links=N, default "/l/" */
    long nest;          /* nest=N */
    long long delay_ms; /* -1: the server's --delay */
    long drop;          /* drop the first `drop` requests */
    long busy;          /* answer the first `busy` requests with busy_status */
    int busy_status;    /* busy=K/STATUS (429 by default) */
    char *retry_after;  /* retry=VALUE: their Retry-After header, or NULL */
    long requests;      /* requests seen so far (run time) */
    long drip_bytes;    /* 0: no drip */
    long drip_ms;
    long long reset_after; /* -1: none; else RST after this many response bytes */
    char *need_cookie;     /* cookie=NAME=VALUE: without it in Cookie, a 403 */
    char *need_auth;       /* auth=USER:PASSWORD: "Basic " and its base64, else a 401 */
    char *need_digest;     /* digest=USER:PASSWORD: a digest answer for it, else a 401 */
    char *login;           /* login=URL: with cookie=, a 302 there instead of the 403 */
    char *need_form;       /* form=N=V&N=V: a POST with those fields, else a login form */
} site_page;

typedef struct site {
    site_page **pages; /* sorted by path after loading */
    size_t npages;
} site;

/* Read and check a site file. Returns NULL with "FILE:LINE: problem" (or "FILE: ...")
 * in err. */
site *site_load(const char *file, char *err, size_t errlen);
/* The same from memory: len bytes of a site file (no NUL needed at the end). name
 * stands for the file in messages; body=@FILE and raw=@FILE are read relative to dir
 * (absolute names as they are), and refused when dir is NULL. */
site *site_parse_buffer(const char *name, const char *text, size_t len, const char *dir, char *err,
                        size_t errlen);
/* Expand {base} ("http://127.0.0.1:PORT") and render bodies. */
void site_finish(site *s, const char *base);
/* The page for an exact path, or NULL. */
site_page *site_find(const site *s, const char *path);
void site_free(site *s);
/* The reason phrase for a status code ("Not Found"; "Status" when unknown). */
const char *site_reason(int status);

#endif
