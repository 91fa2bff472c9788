/* recrawl.c — the conditional-recrawl downloader middleware (recrawl.h;
 * docs/recrawl.md):
 *
 *   made             the known pages of OLD.db, read once: URL -> row id and validators
 *   process_request  a known URL gets If-None-Match and/or If-Modified-Since
 *   process_response a 304 to a known URL: its stored row, read in the thread pool,
 *                    becomes the Response (status 304, not_modified)
 */
#include "recrawl.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"
#include "http.h"
#include "log.h"
#include "recrawl_db.h"
#include "strmap.h"
#include "threads.h"
#include "extension.h"

/* A page OLD.db holds: its last usable row and the validators it was served with. */
typedef struct known {
    strmap_node node; /* key: url */
    char *url;
    int64_t id;
    char *etag, *last_modified; /* either may be NULL, not both */
} known;

typedef struct recrawl {
    app *a;
    char *path;
    old_db *old;
    strmap known;
} recrawl;

/* A stored value we may send back: one a transport can put in a header field. */
static char *validator(const char *name, const char *value)
{
    char *field = xasprintf("%s: %s", name, value);
    bool ok = *value && !http_field_check(field);
    free(field);
    return ok ? xstrdup(value) : NULL;
}

static void take_validators(void *ctx, const char *name, const char *value)
{
    known *k = ctx;
    if (!k->etag && strcasecmp(name, "ETag") == 0)
        k->etag = validator("If-None-Match", value);
    else if (!k->last_modified && strcasecmp(name, "Last-Modified") == 0)
        k->last_modified = validator("If-Modified-Since", value);
}

static void known_free(known *k)
{
    free(k->url);
    free(k->etag);
    free(k->last_modified);
    free(k);
}

static void drop_known(strmap_node *n)
{
    known_free(strmap_entry(n, known, node));
}

/* A known page, if it has a validator to send. */
static void add_known(void *ctx, int64_t id, const char *url, const char *headers)
{
    recrawl *r = ctx;
    if (strmap_find(&r->known, url))
        return;
    known *k = xcalloc(1, sizeof *k);
    k->id = id;
    stored_fields_each(headers, take_validators, k);
    if (!k->etag && !k->last_modified) {
        known_free(k); /* nothing to ask with: fetched as usual */
        return;
    }
    k->url = xstrdup(url);
    strmap_add(&r->known, &k->node, k->url);
}

static known *find(const recrawl *r, const char *url)
{
    strmap_node *n = strmap_find(&r->known, url);
    return n ? strmap_entry(n, known, node) : NULL;
}

/* ---- process_request: ask "changed since?" ---- */

static coro *process_request(void *self, request *req, mw_result *out)
{
    const known *k = find(self, req->url);
    mw_continue(out);
    if (!k)
        return NULL;
    /* A field the request has already (--header) is the user's: kept. */
    if (k->etag && !request_header(req, "If-None-Match"))
        request_add_header(req, "If-None-Match", k->etag);
    if (k->last_modified && !request_header(req, "If-Modified-Since"))
        request_add_header(req, "If-Modified-Since", k->last_modified);
    return NULL;
}

/* ---- process_response: a 304 is the stored page ---- */

/* One row read in the pool. */
typedef struct page_job {
    old_db *old; /* a reference */
    int64_t id;
    stored_page page;
} page_job;

static coro_value read_page(void *arg, coro_error **err)
{
    (void)err; /* a failure is the page's error: an IgnoreRequest */
    page_job *j = arg;
    old_db_read(j->old, j->id, &j->page);
    return (coro_value){NULL, 0};
}

static void page_job_free(void *arg)
{
    page_job *j = arg;
    stored_page_clear(&j->page);
    old_db_release(j->old);
    free(j);
}

/* Fields a 304 may carry that describe its own message, not the stored page's: never
 * copied over the stored ones (RFC 9111, 3.2). */
static bool own_field(const char *name)
{
    static const char *const own[] = {"Content-Length", "Transfer-Encoding", "Connection",
                                      "Keep-Alive"};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        if (strcasecmp(name, own[i]) == 0)
            return true;
    return false;
}

typedef struct merge {
    response *to;
    const response *fresh; /* the 304 */
} merge;

static void keep_stored(void *ctx, const char *name, const char *value)
{
    merge *m = ctx;
    if (own_field(name) || !response_header(m->fresh, name))
        response_add_header(m->to, name, value);
}

/* The stored page as the answer: its headers updated by the 304's, its body, the 304's
 * wire bytes (an archive's revisit record). */
static response *stored_response(const response *fresh, stored_page *p)
{
    response *r = response_new(fresh->url, 304);
    r->not_modified = true;
    merge m = {r, fresh};
    stored_fields_each(p->headers, keep_stored, &m);
    for (size_t i = 0; i < fresh->nheaders; i++)
        if (!own_field(fresh->headers[i].name))
            response_add_header(r, fresh->headers[i].name, fresh->headers[i].value);
    response_set_body(r, p->body, p->body_len);
    p->body = NULL;
    r->stored_at = p->fetched_at;
    p->fetched_at = NULL;
    r->wire = crawl_wire_dup(fresh->wire);
    r->times = fresh->times; /* the 304's request */
    return r;
}

typedef struct {
    coro co;
    const response *resp; /* the engine's, alive while it awaits us */
    mw_result *out;
    page_job *job;
    future *fut;
} revalidated_frame;

static int revalidated_body(coro *co)
{
    revalidated_frame *f = (revalidated_frame *)co;
    CORO_BEGIN(co);
    AWAIT_FUTURE(co, f->fut);
    if (f->job->page.error)
        mw_ignore(f->out, "--recrawl: a 304 for %s, whose stored page cannot be read: %s",
                  f->resp->url, f->job->page.error);
    else
        mw_respond(f->out, stored_response(f->resp, &f->job->page));
    CORO_END(co);
}

static void revalidated_finally(coro *co)
{
    revalidated_frame *f = (revalidated_frame *)co;
    defer_release(f->fut, page_job_free);
}

static const coro_def revalidated_def = {"recrawl_304", __FILE__, revalidated_body,
                                         revalidated_finally, sizeof(revalidated_frame)};

static coro *process_response(void *self, request *req, const response *resp, mw_result *out)
{
    recrawl *r = self;
    const known *k = resp->status == 304 && !resp->not_modified ? find(r, req->url) : NULL;
    mw_continue(out);
    if (!k)
        return NULL; /* a page that changed, a new one, or no stored copy */
    page_job *j = xcalloc(1, sizeof *j);
    j->old = r->old;
    old_db_ref(r->old);
    j->id = k->id;
    revalidated_frame *f = (revalidated_frame *)coro_new(&revalidated_def);
    f->resp = resp;
    f->out = out;
    f->job = j;
    f->fut = defer_to_thread(r->a->pool, read_page, j);
    return &f->co;
}

/* ---- made and freed ---- */

static void recrawl_free(void *self)
{
    recrawl *r = self;
    strmap_clear(&r->known, drop_known);
    strmap_free(&r->known);
    old_db_release(r->old);
    free(r->path);
    free(r);
}

downloader_middleware recrawl_middleware(engine *e, const char *old_path)
{
    recrawl *r = xcalloc(1, sizeof *r);
    r->a = engine_app(e);
    r->path = xstrdup(old_path);
    strmap_init(&r->known);
    char why[1024];
    r->old = old_db_open(r->path, why, sizeof why);
    if (!r->old || old_db_each_page(r->old, add_known, r, why, sizeof why) < 0) {
        /* checked at the command line, then changed: a crawl, not a recrawl, and said */
        log_error("crawl-queue: %s", why);
        crawl_fail(r->a->crawl, why);
    } else {
        log_info("--recrawl '%s': %zu known pages asked with a condition", r->path, r->known.count);
    }
    return (downloader_middleware){.name = "recrawl",
                                   .self = r,
                                   .process_request = process_request,
                                   .process_response = process_response,
                                   .free = recrawl_free};
}

/* ---- the descriptor (extension.h) ---- */

static bool on(const settings *s)
{
    return s->recrawl != NULL;
}

static int make(engine *e, const settings *s, downloader_middleware *out, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    *out = recrawl_middleware(e, s->recrawl);
    return 0;
}

/* The descriptor (extension.h): --recrawl, order 560: after --header, whose
 * If-None-Match would be the user's own. */
const extension recrawl_extension = {"recrawl", EXT_DOWNLOADER_MW, 560, on,
                                     .make_middleware = make};
