/* crawl.c — the chapter's Crawler (crawling.py) without its control flow: add_url,
 * seen_urls, parse_links, the redirect join, FetchStatistic records and --max-pages.
 * The three stages call in here and differ only in how they wait for responses.
 *
 * Deviations from crawling.py, chosen on purpose:
 *  - content_type and encoding are recorded for every non-redirect response that has
 *    a Content-Type (crawling.py fills them only for status 200); links are still
 *    parsed only for status 200 — and for a 304 fed the page an earlier crawl stored
 *    (crawl_fetch_not_modified), whose links a recrawl must follow.
 *  - a redirect whose target is off the site or excluded is recorded, not followed.
 *  - --max-pages N: at most N URLs are ever scheduled (roots included). Once
 *    seen_urls holds N URLs, further URLs are neither added to it nor scheduled;
 *    num_new_urls still counts the page's links that were not in seen_urls.
 *  - with normalize_urls, a page's links are distinct in RFC 3986's normal form
 *    (on_link), as seen_urls compares them: num_urls counts "/%7Euser" and "/~user"
 *    once.
 */
#include "crawl.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "alloc.h"
#include "links.h"
#include "outfile.h"
#include "recstream.h"
#include "log.h"
#include "fpset.h"
#include "seen.h"
#include "trace.h"
#include "url.h"

/* Who is told of records, or of URLs scheduled: called in registration order. */
typedef struct listener {
    union {
        crawl_record_fn record;
        crawl_add_fn add;
        crawl_skip_fn skip;
    } fn;
    void *ctx;
} listener;

typedef struct listeners {
    listener *v;
    size_t n;
} listeners;

static void listeners_add(listeners *l, listener x)
{
    l->v = xreallocarray(l->v, l->n + 1, sizeof *l->v);
    l->v[l->n++] = x;
}

/* Remove every listener of ctx, keeping the others' order. */
static void listeners_remove(listeners *l, const void *ctx)
{
    size_t kept = 0;
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].ctx != ctx)
            l->v[kept++] = l->v[i];
    l->n = kept;
}

struct crawl {
    crawl_options o; /* a copy; o.roots etc. still point at the caller's */
    char *stage;
    url_policy *policy;    /* root_domains + exclude: crawling.py's url_allowed */
    fpset *seen_urls;      /* fingerprints (fpset.h): 8 bytes a URL */
    report *stats;         /* the FetchStatistic records: the text format's, which
                                sorts them at the end; jsonl streams them and keeps none */
    size_t done;           /* records made */
    size_t earlier_done;   /* crawl_set_earlier_runs: distinct URLs done before */
    unsigned earlier_runs; /* and in how many runs */
    bool runs_known;       /* whether it was called */
    FILE *out;
    recstream *stream; /* --format jsonl: each record written as it is made */
    char *failure;     /* crawl_fail's reason, or NULL */
    struct timespec t0;
    tally tally;    /* the records by status class, and their bytes */
    double seconds; /* with ended: the crawl's wall time, fixed by the report */
    bool ended;
    size_t in_flight, peak_in_flight;
    size_t waiting_fd; /* attempts whose transport waits for a descriptor */
    bool max_pages_logged;
    trace *trace;           /* --trace-events, or NULL */
    size_t page_probe;      /* the longest probe in any page's link set so far */
    listeners on_record;    /* told of each record as it is made */
    listeners on_add;       /* told of each URL scheduled */
    crawl_fields_fn fields; /* a crawler's own fields of each record, or NULL */
    void *fields_ctx;
    report_counter *counts; /* a crawler's own counters, for the summary */
    size_t ncounts;
    fpset *skipped;                       /* count_skips: the URLs skipped, each once */
    size_t nskipped[CRAWL_SKIP_NREASONS]; /* by reason */
    listeners on_skip;                    /* told of each URL skipped */
};

/* ---- the links of one page: distinct, in order of first occurrence ---------------- */

/* A string set (seen.h, keyed hash: the hrefs are the page's choice) beside an array
 * in page order, so that each href costs O(1) and its string is stored once.
 * Disallowed hrefs are kept too (allowed = false) so that a repeated href is checked
 * against the policy only once. */
typedef struct link_set {
    seen_set *urls; /* NULL until the page's first link */
    crawl_link *items;
    size_t n, cap;
} link_set;

static void link_set_free(link_set *ls)
{
    seen_free(ls->urls);
    free(ls->items);
    memset(ls, 0, sizeof *ls);
}

/* ---- one fetch attempt -------------------------------------------------------------- */

struct crawl_fetch {
    crawl *c;
    char *url;
    int max_redirect;
    int depth;      /* the request's (crawl_request.h) */
    char *callback; /* the request's, or NULL: a redirect target keeps it */
    http_sink sink;
    bool have_head;
    int status;
    char http_version[12]; /* the head's, "" when it said none */
    char *content_type;    /* media type, lower case, or NULL */
    char *encoding;        /* charset, lower case; NULL when content_type is NULL */
    char *location;        /* raw Location header */
    long long size;        /* body bytes kept: at most --max-size */
    bool over;             /* bytes past --max-size arrived (and were dropped) */
    links_parser *parser;  /* only for a 200 page of a type we parse */
    bool parsed;           /* links_finish was called: links is complete */
    link_set links;
    bool waiting_fd;   /* the transport waits for a descriptor: not in flight */
    bool not_modified; /* crawl_fetch_not_modified: a 304 fed the stored page */
    bool conditional;  /* crawl_fetch_request_fields: the request asked a condition */
    bool keep_body;    /* crawl_fetch_keep_body: the body is kept in body/body_len */
    bool aside;        /* crawl_fetch_aside: not a page (robots.txt) */
    char *post;        /* crawl_fetch_set_post: the request's body (a POST), or NULL */
    size_t post_len;
    char *body;
    size_t body_len, body_cap;
    crawl_wire *wire; /* crawl_fetch_keep_wire: the bytes as they went, or NULL */
    char *headers;    /* every field of the head, "name\0value\0" each, in order */
    size_t headers_len, headers_cap, nheaders;
    /* --trace-events only: the attempt's track, and when each phase began (us) */
    int slot; /* -1 when not traced (or already written) */
    bool connected;
    uint64_t t_start, t_connect, t_head;
    /* the record's fetched_at and elapsed: when the request started (CLOCK_REALTIME),
     * and CLOCK_MONOTONIC then and at the response's last byte so far */
    crawl_times times;
    struct timespec mono_start, mono_last;
};

static double seconds_between(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

/* A byte of the response arrived now. */
static void mark_last_byte(crawl_fetch *f)
{
    clock_gettime(CLOCK_MONOTONIC, &f->mono_last);
}

static bool is_redirect(int status)
{
    return status == 300 || status == 301 || status == 302 || status == 303 || status == 307
        || status == 308;
}

static bool is_space(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
}

static const char *skip_space(const char *p)
{
    while (is_space(*p))
        p++;
    return p;
}

/* Copy [s, s+n) lower-cased; with quoted, also drop the backslash of "\x" pairs. */
static char *copy_lower(const char *s, size_t n, bool quoted)
{
    char *d = xmalloc(n + 1), *q = d;
    for (size_t i = 0; i < n; i++) {
        if (quoted && s[i] == '\\' && i + 1 < n)
            i++;
        char ch = s[i];
        *q++ = (ch >= 'A' && ch <= 'Z') ? (char)(ch - 'A' + 'a') : ch;
    }
    *q = '\0';
    return d;
}

/* Content-Type "Text/HTML; charset=UTF-8" -> "text/html"; NULL when empty. */
static char *media_type_of(const char *ct)
{
    const char *s = skip_space(ct), *e = s;
    while (*e && *e != ';')
        e++;
    while (e > s && is_space(e[-1]))
        e--;
    return e > s ? copy_lower(s, (size_t)(e - s), false) : NULL;
}

/* Scan one parameter value at p (token or "quoted string"); returns the end. */
static const char *scan_value(const char *p, const char **vs, size_t *vn, bool *quoted)
{
    p = skip_space(p);
    *quoted = *p == '"';
    if (*quoted) {
        const char *s = ++p;
        while (*p && *p != '"')
            p += (p[0] == '\\' && p[1]) ? 2 : 1;
        *vs = s;
        *vn = (size_t)(p - s);
        return *p ? p + 1 : p;
    }
    const char *s = p;
    while (*p && *p != ';')
        p++;
    const char *e = p;
    while (e > s && is_space(e[-1]))
        e--;
    *vs = s;
    *vn = (size_t)(e - s);
    return p;
}

/* The charset parameter of a Content-Type, lower case and unquoted, or NULL. */
static char *charset_of(const char *ct)
{
    const char *p = strchr(ct, ';');
    while (p && *p) {
        p = skip_space(p + (*p == ';'));
        const char *name = p;
        while (*p && *p != '=' && *p != ';')
            p++;
        const char *name_end = p;
        while (name_end > name && is_space(name_end[-1]))
            name_end--;
        if (*p != '=')
            continue; /* a parameter without a value: skip it */
        const char *vs;
        size_t vn;
        bool quoted;
        p = scan_value(p + 1, &vs, &vn, &quoted);
        if (name_end - name == 7 && strncasecmp(name, "charset", 7) == 0 && vn > 0)
            return copy_lower(vs, vn, quoted);
        while (*p && *p != ';')
            p++; /* junk after a quoted value */
    }
    return NULL;
}

/* links_fn: one href from the parser, already absolute and without fragment. */
static void on_link(void *ctx, const char *url)
{
    crawl_fetch *f = ctx;
    link_set *ls = &f->links;
    if (!ls->urls)
        ls->urls = seen_new();
    bool added;
    const char *copy;
    char *normal = f->c->o.normalize_urls && strchr(url, '%') ? url_normalize(url) : NULL;
    if (normal && strcmp(normal, url) != 0) {
        /* a duplicate is one in normal form (crawl_url_key): the set holds the normal form
         * for that, and the href as the page first wrote it, which is what the link
         * is (a spelling not in normal form is no other link's normal form) */
        seen_intern(ls->urls, normal, &added);
        free(normal);
        if (!added)
            return; /* another spelling of a link on this page */
        copy = seen_intern(ls->urls, url, &added);
    } else {
        free(normal);
        copy = seen_intern(ls->urls, url, &added);
        if (!added)
            return; /* a duplicate on this page */
    }
    if (ls->n == ls->cap) {
        ls->cap = ls->cap ? 2 * ls->cap : 32;
        ls->items = xreallocarray(ls->items, ls->cap, sizeof *ls->items);
    }
    ls->items[ls->n++] = (crawl_link){copy, url_policy_allowed(f->c->policy, url)};
}

static void clear_head(crawl_fetch *f)
{
    free(f->content_type);
    free(f->encoding);
    free(f->location);
    f->content_type = f->encoding = f->location = NULL;
    if (f->parser)
        links_free(f->parser);
    f->parser = NULL;
    f->parsed = false;
    link_set_free(&f->links);
    f->size = 0;
    f->over = false;
    free(f->body);
    f->body = NULL;
    f->body_len = f->body_cap = 0;
}

static void on_head(void *ctx, const http_head *head)
{
    crawl_fetch *f = ctx;
    if (f->slot >= 0 && !f->have_head)
        f->t_head = trace_now(f->c->trace);
    clear_head(f); /* a second head (should not happen) replaces the first */
    mark_last_byte(f);
    f->have_head = true;
    f->status = head->status;
    snprintf(f->http_version, sizeof f->http_version, "%s", head->version ? head->version : "");
    if (is_redirect(head->status)) {
        f->location = head->location ? xstrdup(head->location) : NULL;
        return;
    }
    if (head->content_type && (f->content_type = media_type_of(head->content_type))) {
        f->encoding = charset_of(head->content_type);
        if (!f->encoding)
            f->encoding = xstrdup("utf-8");
    }
    bool page = head->status == 200 || (head->status == 304 && f->not_modified);
    if (page && f->content_type && links_wanted(f->content_type)) {
        bool xml = strcmp(f->content_type, "application/xml") == 0;
        f->parser = links_new(f->url, f->encoding, xml, on_link, f);
    }
}

/* One field: "name\0value\0" at the end of f->headers. */
static void keep_header_part(crawl_fetch *f, const char *s, size_t n)
{
    xappend(&f->headers, &f->headers_len, &f->headers_cap, s, n);
    xappend(&f->headers, &f->headers_len, &f->headers_cap, "", 1);
}

/* Each field of the head, before on_head: kept for whoever wants the response's
 * headers (an engine gives them to its Response). At most the head's own limit,
 * HTTP_MAX_HEAD bytes, per attempt. */
static void on_header(void *ctx, const char *name, size_t nlen, const char *value, size_t vlen)
{
    crawl_fetch *f = ctx;
    keep_header_part(f, name, nlen);
    keep_header_part(f, value, vlen);
    f->nheaders++;
}

/* Counts and parses at most --max-size bytes; anything past that only marks the fetch
 * full (crawl_fetch_full), so that the raw transport stops reading, as libcurl's glue
 * stops the transfer. */
static void on_body(void *ctx, const char *data, size_t len)
{
    crawl_fetch *f = ctx;
    long long max = f->c->o.max_size;
    if (max > 0 && (long long)len > max - f->size) {
        len = (size_t)(max - f->size);
        f->over = true;
    }
    if (len == 0)
        return;
    mark_last_byte(f);
    f->size += (long long)len;
    if (f->keep_body)
        xappend(&f->body, &f->body_len, &f->body_cap, data, len);
    if (f->parser)
        links_feed(f->parser, data, len);
}

/* An archive's: what went over the wire. The body as received is kept up to --max-size
 * bytes (beyond that it is cut, and said so: wire->truncated). */
static void on_wire(void *ctx, int part, const char *data, size_t len)
{
    crawl_fetch *f = ctx;
    crawl_wire *w = f->wire;
    switch (part) {
    case HTTP_WIRE_PEER: snprintf(w->peer, sizeof w->peer, "%.*s", (int)len, data); break;
    case HTTP_WIRE_REQUEST:
        w->request_len = 0; /* a try's: the last one sent */
        xappend(&w->request, &w->request_len, &w->request_cap, data, len);
        break;
    case HTTP_WIRE_HEAD:
        w->head_len = w->body_len = 0;
        w->truncated = false;
        xappend(&w->head, &w->head_len, &w->head_cap, data, len);
        break;
    case HTTP_WIRE_BODY: {
        long long max = f->c->o.max_size;
        if (max > 0 && (long long)len > max - (long long)w->body_len) {
            len = (size_t)(max - (long long)w->body_len);
            w->truncated = true;
        }
        xappend(&w->body, &w->body_len, &w->body_cap, data, len);
        break;
    }
    default: break;
    }
}

/* The raw parser asks, while it inflates a compressed body. */
static bool is_full(void *ctx)
{
    return ((crawl_fetch *)ctx)->over;
}

/* The transport found no free descriptor and waits to try again (EMFILE): until it has
 * one, this attempt is not in flight — peak_in_flight counts fetches under way — and
 * its span in the timeline starts once it has one. */
static void on_wait_fd(void *ctx, int waiting)
{
    crawl_fetch *f = ctx;
    if (waiting && !f->waiting_fd) {
        f->c->in_flight--;
        f->c->waiting_fd++;
    } else if (!waiting && f->waiting_fd) {
        f->c->waiting_fd--;
        if (++f->c->in_flight > f->c->peak_in_flight)
            f->c->peak_in_flight = f->c->in_flight;
        if (f->slot >= 0)
            f->t_start = trace_now(f->c->trace);
    }
    f->waiting_fd = waiting;
}

/* ---- --trace-events: one span per attempt, with its phases --------------------------- */

/* Set only when tracing: the transport has its connection. */
static void on_connect(void *ctx)
{
    crawl_fetch *f = ctx;
    if (f->slot >= 0 && !f->connected) {
        f->t_connect = trace_now(f->c->trace);
        f->connected = true;
    }
}

/* "http://host:port/a/b?q" -> "/a/b?q" */
static const char *url_path(const char *url)
{
    const char *p = strstr(url, "://");
    p = p ? strchr(p + 3, '/') : NULL;
    return p ? p : "/";
}

/* The attempt ended (error: why it failed, or NULL): write its span on its slot's
 * track, then the phases inside it — connect (until the transport said connected),
 * waiting (for the response head), body (head to end) — and free the slot. */
static void trace_attempt(crawl_fetch *f, const char *error)
{
    trace *t = f->c->trace;
    if (!t || f->slot < 0)
        return;
    int tid = trace_slot_tid(f->slot);
    uint64_t start = f->t_start, end = trace_now(t);
    uint64_t head = f->have_head ? f->t_head : end;
    if (head < start)
        head = start;
    /* connected at; without the signal: still connecting when it failed, else unknown */
    uint64_t conn = f->connected ? f->t_connect : !f->have_head ? end : start;
    if (conn < start)
        conn = start;
    if (conn > head)
        conn = head;
    trace_arg args[4];
    size_t n = 0;
    args[n++] = (trace_arg){"url", f->url, 0};
    if (f->have_head)
        args[n++] = (trace_arg){"status", NULL, f->status};
    if (error)
        args[n++] = (trace_arg){"error", error, 0};
    args[n++] = (trace_arg){"size", NULL, f->size};
    trace_complete(t, tid, url_path(f->url), "fetch", start, end - start, args, n);
    if (f->connected || !f->have_head)
        trace_complete(t, tid, "connect", "phase", start, conn - start, NULL, 0);
    if (f->connected || f->have_head)
        trace_complete(t, tid, "waiting", "phase", conn, head - conn, NULL, 0);
    if (f->have_head)
        trace_complete(t, tid, "body", "phase", head, end - head, NULL, 0);
    if (error)
        trace_instant(t, tid, "error", "fetch", end, args + (f->have_head ? 2 : 1), 1);
    trace_slot_release(t, f->slot);
    f->slot = -1;
}

/* (crawl.h) The URLs the core is given are url_resolve's or url_fix's, in libcurl's
 * normal form already, which only a '%' can leave short of RFC 3986's. */
const char *crawl_url_key(const crawl *c, const char *url, char **owned)
{
    *owned = NULL;
    if (!c->o.normalize_urls || !strchr(url, '%'))
        return url;
    *owned = url_normalize(url);
    return *owned ? *owned : url;
}

static bool seen_has_url(const crawl *c, const char *url)
{
    char *owned;
    bool has = fpset_has(c->seen_urls, crawl_url_key(c, url, &owned));
    free(owned);
    return has;
}

/* ---- add_url and the records ------------------------------------------------------- */

/* crawling.py's add_url: seen_urls.add(url); q.put_nowait((url, max_redirect)), the
 * pair grown into a request (crawl_request.h). Returns whether r was scheduled. */
static bool add_url(crawl *c, const crawl_request *r, crawl_add_fn add, void *ctx)
{
    const char *url = r->url;
    if (c->o.max_pages > 0 && fpset_count(c->seen_urls) >= (size_t)c->o.max_pages) {
        if (!c->max_pages_logged)
            log_info("--max-pages %ld reached: not adding %s and later URLs", c->o.max_pages, url);
        c->max_pages_logged = true;
        crawl_skip(c, url, CRAWL_SKIP_MAX_PAGES, r->referrer);
        return false;
    }
    char *owned;
    bool added = fpset_add(c->seen_urls, crawl_url_key(c, url, &owned));
    free(owned);
    if (!added)
        return false;
    log_debug("adding %s %d", url, r->max_redirect);
    for (size_t i = 0; i < c->on_add.n; i++)
        c->on_add.v[i].fn.add(c->on_add.v[i].ctx, r);
    add(ctx, r);
    return true;
}

/* fetched_at and elapsed of the record of f (NULL: none, the record is made now). */
static void record_times(const crawl_fetch *f, fetch_stat *st)
{
    st->with_times = true;
    st->elapsed = -1;
    if (!f || !f->have_head) {
        clock_gettime(CLOCK_REALTIME, &st->at);
        report_utc_time(&st->at, st->fetched_at, sizeof st->fetched_at);
        return;
    }
    st->at = f->times.started;
    report_utc_time(&st->at, st->fetched_at, sizeof st->fetched_at);
    double e = f->times.elapsed >= 0 ? f->times.elapsed /* crawl_fetch_set_times */
                                     : seconds_between(&f->mono_start, &f->mono_last);
    /* to the microsecond, as the record writes it: the store keeps the same number */
    st->elapsed = e > 0 ? (double)(long long)(e * 1e6 + 0.5) / 1e6 : 0;
}

/* f: the attempt the record comes from, or NULL (a failure without a response). */
static void record(crawl *c, const fetch_stat *given, const crawl_fetch *f)
{
    fetch_stat with = *given;
    const fetch_stat *st = given;
    if (c->o.record_http_version) {
        with.with_http_version = true;
        snprintf(with.http_version, sizeof with.http_version, "%s",
                 f && f->have_head ? f->http_version : "");
        st = &with;
    }
    if (c->o.record_times) {
        record_times(f, &with);
        st = &with;
    }
    char *normal = NULL; /* "url_normalized", when the page wrote another spelling */
    if (c->o.normalize_urls && given->url && strchr(given->url, '%')
        && (normal = url_normalize(given->url)) && strcmp(normal, given->url) != 0) {
        with.url_normalized = normal;
        st = &with;
    }
    if (c->fields) { /* a crawler's own fields (crawl_set_fields) */
        c->fields(c->fields_ctx, &with);
        st = &with;
    }
    c->done++;
    if (c->stream)
        recstream_record(c->stream, st);
    else
        report_add(c->stats, st);
    tally_add(&c->tally, st->status, st->exception, st->size);
    for (size_t i = 0; i < c->on_record.n; i++)
        c->on_record.v[i].fn.record(c->on_record.v[i].ctx, st, f);
    free(normal);
}

/* The redirect branch of crawling.py's fetch, with the redirect join. */
static void finish_redirect(crawl_fetch *f, const char *exception, crawl_add_fn add, void *ctx)
{
    crawl *c = f->c;
    char why[300];
    fetch_stat st = {.url = f->url, .status = f->status, .exception = (char *)exception};
    char *next_url = f->location ? url_resolve(f->url, f->location) : NULL;
    if (next_url && strncmp(next_url, "http://", 7) != 0 && strncmp(next_url, "https://", 8) != 0) {
        free(next_url);
        next_url = NULL;
    }
    if (!next_url && !exception) {
        if (f->location)
            snprintf(why, sizeof why, "redirect to unparseable Location '%.200s'", f->location);
        else
            snprintf(why, sizeof why, "redirect without Location");
        st.exception = why;
    }
    st.next_url = next_url;
    record(c, &st, f);

    if (!next_url)
        return;
    if (seen_has_url(c, next_url))
        log_debug("redirect to %s from %s: already seen", next_url, f->url);
    else if (f->max_redirect <= 0) {
        log_info("redirect limit reached for %s from %s", next_url, f->url);
        crawl_skip(c, next_url,
                   url_policy_allowed(c->policy, next_url) ? CRAWL_SKIP_REDIRECTS
                                                           : crawl_disallowed_reason(c, next_url),
                   f->url);
    } else if (!url_policy_allowed(c->policy, next_url)) {
        log_info("redirect to %s from %s not followed: not allowed", next_url, f->url);
        crawl_skip(c, next_url, crawl_disallowed_reason(c, next_url), f->url);
    } else {
        log_info("redirect to %s from %s", next_url, f->url);
        crawl_request next = {next_url, f->max_redirect - 1, f->depth, f->url, f->callback};
        add_url(c, &next, add, ctx);
    }
    free(next_url);
}

/* The page's links are complete once the parser has had the whole body. */
static void finish_links(crawl_fetch *f)
{
    if (f->parser && !f->parsed)
        links_finish(f->parser); /* the last links arrive through on_link */
    f->parsed = true;
}

/* The page branch: crawling.py's parse_links, then add the new links (unless a spider
 * adds those it wants: add_links false). */
/* The exception of a 304 that answered no condition (crawl_fetch_request_fields). */
static const char unasked_304[] = "304 Not Modified to a request without a condition";

static void finish_page(crawl_fetch *f, const char *exception, bool add_links, crawl_add_fn add,
                        void *ctx)
{
    crawl *c = f->c;
    finish_links(f);
    char *why = NULL;
    if (f->status == 304 && !f->not_modified && !f->conditional) {
        why = exception ? xasprintf("%s; %s", exception, unasked_304) : xstrdup(unasked_304);
        exception = why;
    }

    fetch_stat st = {
        .url = f->url,
        .status = f->status,
        .exception = (char *)exception,
        .size = f->not_modified ? 0 : f->size, /* a 304 brings no body */
        .content_type = f->content_type,
        .encoding = f->encoding,
        .not_modified = f->not_modified,
    };
    /* links - seen_urls is counted before any of them is added. */
    for (size_t i = 0; i < f->links.n; i++) {
        if (!f->links.items[i].allowed)
            continue;
        st.num_urls++;
        if (!seen_has_url(c, f->links.items[i].url))
            st.num_new_urls++;
    }
    record(c, &st, f);
    if (f->parser)
        log_info("got %d distinct urls from %s", st.num_urls, f->url);
    size_t probe = seen_longest_probe(f->links.urls);
    if (probe > c->page_probe)
        c->page_probe = probe;

    for (size_t i = 0; add_links && i < f->links.n; i++) {
        crawl_request link = {f->links.items[i].url, c->o.max_redirect, f->depth + 1, f->url, NULL};
        if (f->links.items[i].allowed)
            add_url(c, &link, add, ctx);
        else
            crawl_skip(c, link.url, crawl_disallowed_reason(c, link.url), f->url);
    }
    free(why);
}

static void finish(crawl_fetch *f, const char *exception, bool add_links, crawl_add_fn add,
                   void *ctx)
{
    trace_attempt(f, exception); /* first: the slot is free for the links added below */
    if (!f->have_head)
        crawl_record_failure(f->c, f->url, exception ? exception : "no response head");
    else if (is_redirect(f->status))
        finish_redirect(f, exception, add, ctx);
    else
        finish_page(f, exception, add_links, add, ctx);
    crawl_fetch_discard(f);
}

/* ---- public API ---------------------------------------------------------------------- */

crawl *crawl_prepare(const crawl_options *o, const char *stage, char *err, size_t errlen)
{
    crawl *c = xcalloc(1, sizeof *c);
    c->o = *o;
    c->out = stdout;
    clock_gettime(CLOCK_MONOTONIC, &c->t0);
    c->stage = xstrdup(stage ? stage : "");
    c->seen_urls = fpset_new();
    c->skipped = fpset_new();
    c->stats = report_new();
    c->policy = url_policy_new(o->strict != 0, o->exclude, err, errlen);
    /* the others --exclude given (the first is o->exclude) */
    for (int i = 1; c->policy && i < o->nexcludes; i++)
        if (url_policy_exclude(c->policy, o->excludes[i], err, errlen) < 0) {
            crawl_free(c);
            return NULL;
        }
    if (!c->policy) {
        crawl_free(c);
        return NULL;
    }
    for (int i = 0; i < o->nroots; i++) {
        char why[256];
        char *root = url_fix(o->roots[i], why, sizeof why);
        if (root)
            url_policy_add_root(c->policy, root);
        free(root);
    }
    return c;
}

int crawl_open_files(crawl *c, char *err, size_t errlen)
{
    const crawl_options *o = &c->o;
    if (o->output && strcmp(o->output, "-") != 0) {
        c->out = o->append_output ? outfile_open_append(o->output, "--output", err, errlen)
                                  : outfile_open(o->output, "--output", err, errlen);
        if (!c->out) {
            c->out = stdout;
            return -1;
        }
    }
    if (o->format && strcmp(o->format, "jsonl") == 0) {
        bool to_stdout = c->out == stdout;
        fflush(c->out);
        c->stream = recstream_new(fileno(c->out), to_stdout ? "the report to" : "--output",
                                  to_stdout ? "stdout" : o->output);
        recstream_set_fetched_by(c->stream, o->fetched_by);
    }
    if (o->trace_events) {
        int pid = o->trace_pid > 0 ? o->trace_pid : 1; /* the process is the stage */
        char name[128];
        snprintf(name, sizeof name, "stage %d: crawl-%s (%s, --max-tasks %d)", pid, c->stage,
                 o->transport ? o->transport : "?", o->max_tasks);
        c->trace = trace_open(o->trace_events, pid, name, err, errlen);
        if (!c->trace)
            return -1;
    }
    return 0;
}

crawl *crawl_new(const crawl_options *o, const char *stage, char *err, size_t errlen)
{
    crawl *c = crawl_prepare(o, stage, err, errlen);
    if (c && crawl_open_files(c, err, errlen) < 0) {
        crawl_free(c);
        return NULL;
    }
    return c;
}

char *crawl_identity(const crawl_options *o)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *m = open_memstream(&buf, &size);
    if (!m)
        alloc_oom(0);
    for (int i = 0; i < o->nroots; i++)
        fprintf(m, "root %s\n", o->roots[i]);
    fprintf(m, "max_redirect %d\nmax_pages %ld\nexclude %s\nstrict %d\n", o->max_redirect,
            o->max_pages, o->exclude ? o->exclude : "", o->strict);
    for (int i = 1; i < o->nexcludes; i++)
        fprintf(m, "exclude %s\n", o->excludes[i]);
    if (fclose(m) != 0)
        alloc_oom(0);
    return buf;
}

void crawl_free(crawl *c)
{
    if (!c)
        return;
    recstream_free(c->stream);
    free(c->failure);
    if (c->out && c->out != stdout)
        fclose(c->out);
    trace_close(c->trace, NULL, 0); /* only when the report was never written */
    url_policy_free(c->policy);
    fpset_free(c->seen_urls);
    fpset_free(c->skipped);
    free(c->on_skip.v);
    report_free(c->stats);
    free(c->on_record.v);
    free(c->on_add.v);
    for (size_t i = 0; i < c->ncounts; i++)
        free((char *)c->counts[i].name);
    free(c->counts);
    free(c->stage);
    free(c);
}

const crawl_options *crawl_opts(const crawl *c)
{
    return &c->o;
}
const report *crawl_report(const crawl *c)
{
    return c->stats;
}
size_t crawl_seen_count(const crawl *c)
{
    return fpset_count(c->seen_urls);
}

size_t crawl_longest_probe(const crawl *c)
{
    size_t seen = fpset_longest_probe(c->seen_urls);
    return seen > c->page_probe ? seen : c->page_probe;
}
size_t crawl_in_flight(const crawl *c)
{
    return c->in_flight;
}
size_t crawl_attempts(const crawl *c)
{
    return c->in_flight + c->waiting_fd;
}
size_t crawl_peak_in_flight(const crawl *c)
{
    return c->peak_in_flight;
}
size_t crawl_done_count(const crawl *c)
{
    return c->done;
}
const tally *crawl_tally(const crawl *c)
{
    return &c->tally;
}

double crawl_seconds(const crawl *c)
{
    if (c->ended)
        return c->seconds;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - c->t0.tv_sec) + (double)(now.tv_nsec - c->t0.tv_nsec) / 1e9;
}

void crawl_set_earlier_runs(crawl *c, size_t done, unsigned runs)
{
    c->earlier_done = done;
    c->earlier_runs = runs;
    c->runs_known = true;
}

void crawl_add_roots(crawl *c, crawl_add_fn add, void *ctx)
{
    for (int i = 0; i < c->o.nroots; i++) {
        char why[256];
        char *root = url_fix(c->o.roots[i], why, sizeof why);
        if (!root) {
            log_warn("skipping root: %s", why);
            continue;
        }
        crawl_request r = {root, c->o.max_redirect, 0, NULL, NULL};
        add_url(c, &r, add, ctx); /* a duplicate root is seen */
        free(root);
    }
}

/* With host_lanes (a crawler that paces each host) the timeline has lanes per host
 * ("http://h:80" from the URL's scheme://host[:port]), so a host's delays show as the
 * gaps on its own tracks. */
static int host_lane(trace *t, const char *url)
{
    const char *p = strstr(url, "://");
    size_t n = p ? (size_t)(p + 3 - url) + strcspn(p + 3, "/?#") : strlen(url);
    char key[256];
    snprintf(key, sizeof key, "%.*s", (int)(n < 255 ? n : 255), url);
    return trace_lane_acquire(t, key);
}

crawl_fetch *crawl_fetch_new(crawl *c, const crawl_request *r)
{
    const char *url = r->url;
    crawl_fetch *f = xcalloc(1, sizeof *f);
    f->url = xstrdup(url);
    f->c = c;
    f->max_redirect = r->max_redirect;
    f->depth = r->depth;
    f->callback = r->callback ? xstrdup(r->callback) : NULL;
    f->status = -1;
    clock_gettime(CLOCK_REALTIME, &f->times.started);
    clock_gettime(CLOCK_MONOTONIC, &f->mono_start);
    f->mono_last = f->mono_start;
    f->times.elapsed = -1;
    f->sink = (http_sink){.on_head = on_head,
                          .on_body = on_body,
                          .ctx = f,
                          .on_wait_fd = on_wait_fd,
                          .on_header = on_header,
                          .is_full = is_full};
    f->slot = -1;
    if (c->trace) {
        f->sink.on_connect = on_connect;
        f->slot = c->o.host_lanes ? host_lane(c->trace, url) : trace_slot_acquire(c->trace);
        f->t_start = trace_now(c->trace);
    }
    if (++c->in_flight > c->peak_in_flight)
        c->peak_in_flight = c->in_flight;
    return f;
}

void crawl_fetch_times(const crawl_fetch *f, crawl_times *t)
{
    t->started = f->times.started;
    t->elapsed =
        f->times.elapsed >= 0 ? f->times.elapsed : seconds_between(&f->mono_start, &f->mono_last);
}

void crawl_fetch_set_times(crawl_fetch *f, const crawl_times *t)
{
    if (t->started.tv_sec == 0 && t->started.tv_nsec == 0)
        return;
    f->times = *t;
    if (f->times.elapsed < 0)
        f->times.elapsed = 0;
}

const http_sink *crawl_fetch_sink(crawl_fetch *f)
{
    return &f->sink;
}
const char *crawl_fetch_url(const crawl_fetch *f)
{
    return f->url;
}
long long crawl_fetch_size(const crawl_fetch *f)
{
    return f->size;
}
bool crawl_fetch_full(const crawl_fetch *f)
{
    return f->over;
}

void crawl_fetch_done(crawl_fetch *f, crawl_add_fn add, void *ctx)
{
    finish(f, NULL, true, add, ctx);
}

static void truncated_why(const crawl_fetch *f, char *why, size_t n)
{
    snprintf(why, n, "body truncated at %lld bytes (--max-size)", f->size);
}

void crawl_fetch_truncated(crawl_fetch *f, crawl_add_fn add, void *ctx)
{
    char why[80];
    truncated_why(f, why, sizeof why);
    finish(f, why, true, add, ctx);
}

void crawl_fetch_done_by_spider(crawl_fetch *f, bool truncated, const char *error, crawl_add_fn add,
                                void *ctx)
{
    char cut[80] = "";
    if (truncated)
        truncated_why(f, cut, sizeof cut);
    char *why = NULL;
    if (error)
        why = xasprintf("%s%s%s", cut, cut[0] ? "; " : "", error);
    finish(f, why ? why : cut[0] ? cut : NULL, false, add, ctx);
    free(why);
}

const crawl_link *crawl_fetch_links(crawl_fetch *f, size_t *n)
{
    finish_links(f);
    *n = f->links.n;
    return f->links.items;
}

bool crawl_fetch_is_redirect(const crawl_fetch *f)
{
    return f->have_head && is_redirect(f->status);
}

void crawl_set_fields(crawl *c, crawl_fields_fn fn, void *ctx)
{
    c->fields = fn;
    c->fields_ctx = ctx;
}

void crawl_count(crawl *c, const char *name, long long n)
{
    size_t i = 0;
    while (i < c->ncounts && strcmp(c->counts[i].name, name) != 0)
        i++;
    if (i == c->ncounts) {
        c->counts = xreallocarray(c->counts, c->ncounts + 1, sizeof *c->counts);
        c->counts[c->ncounts++] = (report_counter){xstrdup(name), 0};
    }
    c->counts[i].n += n;
}

long long crawl_counted(const crawl *c, const char *name)
{
    for (size_t i = 0; i < c->ncounts; i++)
        if (strcmp(c->counts[i].name, name) == 0)
            return c->counts[i].n;
    return 0;
}

void crawl_fetch_fail(crawl_fetch *f, const char *error)
{
    if (f)
        trace_attempt(f, error ? error : "error");
    crawl_fetch_discard(f);
}

void crawl_fetch_release(crawl_fetch *f)
{
    trace_attempt(f, NULL);
    crawl_fetch_discard(f);
}

void crawl_fetch_discard(crawl_fetch *f)
{
    if (!f)
        return;
    trace_attempt(f, "abandoned"); /* only if not written yet */
    clear_head(f);
    free(f->headers);
    crawl_wire_free(f->wire);
    if (!f->waiting_fd)
        f->c->in_flight--;
    else
        f->c->waiting_fd--;
    free(f->url);
    free(f->callback);
    free(f->post);
    free(f);
}

void crawl_record_failure(crawl *c, const char *url, const char *error)
{
    fetch_stat st = {.url = (char *)url, .status = -1, .exception = (char *)error};
    record(c, &st, NULL);
}

long long crawl_output_end(const crawl *c)
{
    return c->stream ? recstream_end(c->stream) : -1;
}

bool crawl_write_failed(const crawl *c, char *err, size_t errlen)
{
    return c->stream && recstream_failed(c->stream, err, errlen);
}

void crawl_fail(crawl *c, const char *reason)
{
    if (!c->failure)
        c->failure = xstrdup(reason);
}

void crawl_add_record_listener(crawl *c, crawl_record_fn fn, void *ctx)
{
    listeners_add(&c->on_record, (listener){.fn.record = fn, .ctx = ctx});
}

void crawl_add_add_listener(crawl *c, crawl_add_fn fn, void *ctx)
{
    listeners_add(&c->on_add, (listener){.fn.add = fn, .ctx = ctx});
}

void crawl_remove_listeners(crawl *c, const void *ctx)
{
    if (!ctx)
        return; /* no owner named: a listener without one stays */
    listeners_remove(&c->on_record, ctx);
    listeners_remove(&c->on_add, ctx);
    listeners_remove(&c->on_skip, ctx);
}

/* ---- skipped URLs ---- */

_Static_assert(CRAWL_SKIP_NREASONS == REPORT_SKIP_REASONS, "one list of reasons");

const char *crawl_skip_name(crawl_skip_reason why)
{
    return why < CRAWL_SKIP_NREASONS ? report_skip_names[why] : "?";
}

crawl_skip_reason crawl_disallowed_reason(const crawl *c, const char *url)
{
    if (url_policy_excluded(c->policy, url))
        return CRAWL_SKIP_EXCLUDED;
    if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)
        return CRAWL_SKIP_SCHEME; /* url_resolve's form: the scheme in lower case */
    return CRAWL_SKIP_OFFSITE;
}

void crawl_skip(crawl *c, const char *url, crawl_skip_reason why, const char *referrer)
{
    if (!c->o.count_skips || why >= CRAWL_SKIP_NREASONS || !url)
        return;
    /* robots.txt forbids a URL that was scheduled; any other reason: one that was not */
    char *owned;
    const char *key = crawl_url_key(c, url, &owned);
    bool skip =
        (why == CRAWL_SKIP_ROBOTS || !fpset_has(c->seen_urls, key)) && fpset_add(c->skipped, key);
    free(owned);
    if (!skip)
        return; /* scheduled after all, or skipped already */
    c->nskipped[why]++;
    log_info("skipped %s (%s)%s%s", url, report_skip_names[why], referrer ? ", linked from " : "",
             referrer ? referrer : "");
    for (size_t i = 0; i < c->on_skip.n; i++)
        c->on_skip.v[i].fn.skip(c->on_skip.v[i].ctx, url, why, referrer);
}

size_t crawl_skipped(const crawl *c, crawl_skip_reason why)
{
    return why < CRAWL_SKIP_NREASONS ? c->nskipped[why] : 0;
}

void crawl_add_skip_listener(crawl *c, crawl_skip_fn fn, void *ctx)
{
    listeners_add(&c->on_skip, (listener){.fn.skip = fn, .ctx = ctx});
}

bool crawl_mark_seen(crawl *c, const char *url)
{
    char *owned;
    bool added = fpset_add(c->seen_urls, crawl_url_key(c, url, &owned));
    free(owned);
    return added;
}

bool crawl_allowed(const crawl *c, const char *url)
{
    return url_policy_allowed(c->policy, url);
}

bool crawl_schedule(crawl *c, const crawl_request *r, crawl_add_fn add, void *ctx)
{
    if (!crawl_allowed(c, r->url)) {
        crawl_skip(c, r->url, crawl_disallowed_reason(c, r->url), r->referrer);
        return false;
    }
    return add_url(c, r, add, ctx);
}

bool crawl_schedule_root(crawl *c, const crawl_request *r, crawl_add_fn add, void *ctx)
{
    return add_url(c, r, add, ctx);
}

bool crawl_schedule_any_host(crawl *c, const crawl_request *r, crawl_add_fn add, void *ctx)
{
    bool web = strncmp(r->url, "http://", 7) == 0 || strncmp(r->url, "https://", 8) == 0;
    if (!web || url_policy_excluded(c->policy, r->url)) {
        crawl_skip(c, r->url, web ? CRAWL_SKIP_EXCLUDED : CRAWL_SKIP_SCHEME, r->referrer);
        return false;
    }
    return add_url(c, r, add, ctx);
}

void crawl_fetch_keep_body(crawl_fetch *f)
{
    f->keep_body = true;
}

void crawl_fetch_aside(crawl_fetch *f)
{
    f->aside = true;
}

bool crawl_fetch_is_aside(const crawl_fetch *f)
{
    return f->aside;
}
void crawl_fetch_request_fields(crawl_fetch *f, const char *const *fields)
{
    static const char *const conditions[] = {"If-None-Match:", "If-Modified-Since:"};
    for (size_t i = 0; fields && fields[i]; i++)
        for (size_t k = 0; k < sizeof conditions / sizeof conditions[0]; k++)
            if (strncasecmp(fields[i], conditions[k], strlen(conditions[k])) == 0)
                f->conditional = true;
}

void crawl_fetch_set_post(crawl_fetch *f, const char *body, size_t len)
{
    free(f->post);
    f->post = NULL;
    f->post_len = 0;
    if (body) {
        f->post = xmalloc(len + 1);
        memcpy(f->post, body, len);
        f->post[len] = '\0';
        f->post_len = len;
    }
}

const char *crawl_fetch_post(const crawl_fetch *f, size_t *len)
{
    *len = f->post_len;
    return f->post;
}

void crawl_fetch_not_modified(crawl_fetch *f)
{
    f->not_modified = true;
}

void crawl_fetch_keep_wire(crawl_fetch *f)
{
    if (!f->wire)
        f->wire = xcalloc(1, sizeof *f->wire);
    f->sink.on_wire = on_wire;
}

crawl_wire *crawl_fetch_take_wire(crawl_fetch *f)
{
    crawl_wire *w = f->wire;
    f->wire = NULL;
    f->sink.on_wire = NULL;
    return w;
}

static char *dup_bytes(const char *s, size_t n, size_t *cap)
{
    *cap = n;
    return s ? xmemdup(s, n) : NULL;
}

crawl_wire *crawl_wire_dup(const crawl_wire *w)
{
    if (!w)
        return NULL;
    crawl_wire *d = xmalloc(sizeof *d);
    *d = *w;
    d->request = dup_bytes(w->request, w->request_len, &d->request_cap);
    d->head = dup_bytes(w->head, w->head_len, &d->head_cap);
    d->body = dup_bytes(w->body, w->body_len, &d->body_cap);
    return d;
}

void crawl_wire_free(crawl_wire *w)
{
    if (!w)
        return;
    free(w->request);
    free(w->head);
    free(w->body);
    free(w);
}
char *crawl_fetch_take_body(crawl_fetch *f, size_t *len)
{
    char *body = f->body;
    *len = f->body_len;
    f->body = NULL;
    f->body_len = f->body_cap = 0;
    return body;
}
int crawl_fetch_status(const crawl_fetch *f)
{
    return f->have_head ? f->status : -1;
}
const char *crawl_fetch_headers(const crawl_fetch *f, size_t *n)
{
    *n = f->nheaders;
    return f->headers;
}
const char *crawl_fetch_location(const crawl_fetch *f)
{
    return f->location;
}
const char *crawl_fetch_content_type(const crawl_fetch *f)
{
    return f->content_type;
}
const char *crawl_fetch_encoding(const crawl_fetch *f)
{
    return f->encoding;
}

int crawl_write_report(crawl *c, size_t todo, const char *transport, const char *selector,
                       bool interrupted, char *err, size_t errlen)
{
    c->seconds = crawl_seconds(c);
    c->ended = true;
    report_summary sum = {
        .seconds = c->seconds,
        .max_tasks = c->o.max_tasks,
        .todo = todo,
        .stage = c->stage,
        .transport = transport,
        .selector = selector,
        .tally = &c->tally,
        .peak_in_flight = c->peak_in_flight,
        .interrupted = interrupted,
        .crawl_done = c->earlier_done + c->done,
        .runs = c->runs_known ? c->earlier_runs + 1 : 0,
        .counts = c->counts,
        .ncounts = c->ncounts,
        .skipped = c->o.count_skips ? c->nskipped : NULL,
    };
    char write_err[512];
    if (crawl_write_failed(c, write_err, sizeof write_err))
        crawl_fail(c, write_err); /* for the trace; the summary cannot follow it */
    sum.error = c->failure;
    sum.interrupted |= c->failure != NULL;
    char report_err[512] = "", trace_err[512] = "";
    int r;
    if (c->stream) /* the records are written already: the summary ends the file */
        r = recstream_summary(c->stream, c->done, &sum, report_err, sizeof report_err);
    else {
        report_write_text(c->stats, &sum, c->out);
        r = c->out == stdout
            ? outfile_flush(c->out, "the report to", "stdout", report_err, sizeof report_err)
            : outfile_flush(c->out, "--output", c->o.output, report_err, sizeof report_err);
    }
    if (c->trace) {
        trace_arg args[] = {
            {"urls", NULL, (long long)c->done},
            {"ms", NULL, (long long)(sum.seconds * 1000 + 0.5)},
            {"max_tasks", NULL, c->o.max_tasks},
            {"peak_in_flight", NULL, (long long)c->peak_in_flight},
            {"transport", transport ? transport : "", 0},
            {"selector", selector ? selector : "", 0},
            {"interrupted", NULL, sum.interrupted},
        };
        trace_instant(c->trace, -1, "crawl finished", "crawl", trace_now(c->trace), args,
                      sizeof args / sizeof args[0]);
        if (trace_close(c->trace, trace_err, sizeof trace_err) < 0)
            r = -1;
        c->trace = NULL;
    }
    if (r < 0)
        snprintf(err, errlen, "%s%s%s", report_err, report_err[0] && trace_err[0] ? "; " : "",
                 trace_err);
    return r;
}
