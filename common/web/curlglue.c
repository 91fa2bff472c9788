/* curlglue.c — libcurl's multi socket interface driven by our selector.
 *
 * Read it as curl's docs/examples/ephiperfifo.c with epoll replaced by selector.h:
 *
 *   libcurl says "watch fd for IN/OUT"   -> sock_cb   -> selector_register/modify/unregister
 *   libcurl says "wake me in N ms"       -> timer_cb  -> one selector timer
 *   the selector says "fd is ready"      -> io_cb     -> curl_multi_socket_action(fd)
 *   the selector timer fires             -> timer_fired -> curl_multi_socket_action(TIMEOUT)
 *   after every socket_action            -> after_action: read finished transfers, call done
 *
 * Requests are not all handed to libcurl at once: they wait in a queue (g->queued),
 * and admit() adds them to the multi handle while fewer than g->cap transfers are in
 * it — at most ADMIT_BATCH per turn of the loop. libcurl does per transfer work that
 * grows with the transfers and connections it has (7.88 scans its message list and
 * pending list on every removal, and the connection cache after each kept-alive
 * transfer), and it makes a socket for each transfer it is given: given a million
 * transfers and twenty thousand descriptors, each of its calls ran for seconds,
 * mostly failing sockets, and a signal waited for the call to end. So g->cap starts
 * at what the descriptors allow (net_fd_budget, and never more than max_conns), and
 * a batch costs one short socket_action.
 *
 * libcurl forbids adding or removing easy handles from inside its own callbacks (the
 * header and write callbacks, where our sinks run). So while a socket_action is running
 * (g->in_action), curl_glue_get only queues new requests and curl_glue_cancel parks
 * cancelled ones on a dead list; after_action settles both as soon as socket_action
 * returns. A cancelled request's callbacks return an abort value at once, so its sink
 * hears nothing more.
 *
 * Out of descriptors anyway (EMFILE/ENFILE: other files, libcurl's resolver), libcurl
 * can only fail a transfer ("Couldn't connect to server"). We make its sockets
 * ourselves (open_socket_cb) to see why one could not be made; such a transfer is not
 * reported but queued again, first in line, and g->cap drops to the transfers that do
 * have descriptors (with none, admission waits 10 ms, doubling up to 1 s); each
 * transfer that ends well raises it by one again, up to what it started at. The
 * caller never knows, but its sink hears on_wait_fd while its request waits.
 *
 * HTTP/2 (curl_glue_set_http2, off by default): offered by ALPN over https, the
 * transfers to one host multiplexed on one connection, a new one waiting for the
 * connection being made (PIPEWAIT) rather than opening its own. libcurl hands the head
 * to header_cb as HTTP/1.x-shaped lines, "HTTP/2 200 " first: once the first line
 * comes, the glue asks which version the connection speaks and tells the head parser
 * (and the decoder), which then take that status line and no other.
 *
 * Each curl_req owns an easy handle, a new one for every request; finished requests go
 * to a free list. Connections live in the multi handle's cache and are reused across
 * requests. Host names live in one DNS cache for every handle of every glue (dns_share
 * below).
 *
 * Many hosts (issue #27 M4: 50,000 hosts took 206.8 s where the raw transport took
 * 7.1 s). Two of libcurl 7.88's caches cost time in proportion to the hosts met, on
 * every transfer, so a crawl of N hosts cost N^2:
 *   - the DNS cache is pruned after every transfer (Curl_hostcache_prune, a walk over
 *     every name younger than CURLOPT_DNS_CACHE_TIMEOUT). We set it to -1 (never
 *     pruned) and expire names ourselves: the share is replaced by a new one every
 *     DNS_SHARE_TTL_S seconds, or once DNS_SHARE_MAX_NAMES connections were made with
 *     it (its hash has 23 chains: a lookup walks a chain), and an old one is freed once
 *     no handle uses it;
 *   - when the connection cache is full, Curl_conncache_extract_oldest closes the
 *     oldest idle connection but leaves its host's empty bundle in the cache's hash,
 *     and walks every bundle the next time: one more per eviction, for good. So
 *     libcurl never has to evict here: a transfer admitted while g->keep connections
 *     are idle (g->conns open, less one per transfer) is told to close its own when
 *     done (CURLOPT_FORBID_REUSE, which closes it the ordinary way, bundle and all),
 *     and the limits leave room for every connection the others may keep. Idle
 *     connections older than CONN_IDLE_MAX_S are closed by libcurl, making room.
 */
#include "curlglue.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "cookiesnap.h"
#include "curlauth.h"
#include "libmem.h"
#include "list.h"
#include "net.h"

const char curl_glue_truncated[] = "body over the size limit";

/* Transfers added to the multi handle per admit() call: one turn of the loop. */
#define ADMIT_BATCH         256
#define DNS_SHARE_TTL_S     60   /* a name looked up is used this long, at most twice */
#define DNS_SHARE_MAX_NAMES 1000 /* connections made with one share: about its names */
#define CONN_IDLE_MAX_S     20   /* an idle connection kept longer is closed */

enum req_state { REQ_FREE, REQ_QUEUED, REQ_ACTIVE, REQ_FINISHING };

struct curl_req {
    curl_glue *g;
    CURL *easy;
    enum req_state state;
    int cancelled;
    int in_dead;      /* on g->dead, waiting to be removed after socket_action */
    const char *fail; /* set when the glue itself failed the request */
    http_sink sink;
    curl_done_fn done;
    void *ctx;
    long long max_size;
    long long body_bytes;
    int truncated;
    bool authed;               /* the request carries the crawl's credentials (curlauth.h) */
    struct curl_slist *fields; /* the caller's extra header fields, or NULL */
    /* The head, line by line through the parser the raw transport uses too; kept
     * across reuse. head_sent: the sink has it. */
    http_head_parser *head;
    int head_sent;
    int head_started; /* header_cb has seen the first line of this try */
    int held;         /* a complete 401 head, not delivered: libcurl may answer it */
    cookie_snap jar;  /* with a jar: its cookies for the host before this head */
    /* The sink archives what went over the wire (on_wire): libcurl does not decode, and
     * the raw transport's parser, fed the same head lines and the body as received,
     * does — framing, gzip, deflate — for on_body. */
    http_parser *decoder;
    int peer_sent;
    char errbuf[CURL_ERROR_SIZE];
    int out_of_fds;  /* the last socket libcurl asked for failed with EMFILE */
    int waiting;     /* queued, and its sink heard on_wait_fd(1) */
    list_node node;  /* in g->live (in flight) or g->free_list */
    list_node qnode; /* REQ_QUEUED: in its lane's queue */
    int lane;        /* CURL_LANE_PAGES or CURL_LANE_SIDE */
    curl_req *link;  /* g->dead */
};

/* A lane: its own queue and its own budget of transfers at once (curlglue.h). */
typedef struct glue_lane {
    list_node queued; /* REQ_QUEUED requests, in the order they go to libcurl */
    size_t nqueued;
    size_t active;       /* REQ_ACTIVE: in the multi handle */
    size_t cap, max_cap; /* admit while active < cap; cap never over max_cap */
} glue_lane;

/* One socket libcurl asked us to watch (attached to it with curl_multi_assign). */
typedef struct gsock {
    int fd;
    int events;
    list_node node; /* in g->socks or g->free_socks */
} gsock;

struct curl_glue {
    selector *s;
    CURLM *multi;
    CURLSH *share;    /* dns_share */
    sel_timer *timer; /* the one timer libcurl asked for, or NULL */
    char *cacert;
    char *user_agent;  /* NULL: http_default_user_agent */
    char *proxy;       /* CURLOPT_PROXY, or NULL: libcurl's (its variables) */
    curl_auth *auth;   /* curl_glue_set_auth, or NULL */
    CURLSH *cookies;   /* the cookie store (and DNS cache), or NULL: no cookies */
    CURL *cookie_easy; /* a handle on it, to add and list cookies */
    bool http2;        /* curl_glue_set_http2 */
    bool insecure;     /* curl_glue_set_insecure */
    int in_action;     /* inside curl_multi_socket_action */
    int closing;       /* inside curl_glue_free */
    size_t in_flight;
    list_node live; /* every request started and not yet recycled */
    list_node free_list;
    size_t free_count, free_cap;
    glue_lane lanes[CURL_LANES]; /* the pages', and the side lane (curl_glue_get_lane) */
    size_t active;               /* REQ_ACTIVE: in the multi handle (both lanes) */
    size_t keep;                 /* idle connections the cache may hold (0: as libcurl) */
    long budget;                 /* net_fd_budget() when made */
    size_t conns;                /* connections open now (sockets made, not yet closed) */
    sel_timer *admit_timer;      /* the next admit(): a call_soon, or a backoff's wait */
    unsigned backoff;            /* out of descriptors with none in use: last wait, ms */
    curl_req *dead;              /* cancelled or failed during socket_action */
    list_node socks;             /* watched sockets */
    list_node free_socks;
    char errmsg[CURL_ERROR_SIZE + 128];
    char selerr[256];
};

/* ---- one DNS cache (CURLSH) --------------------------------------------------------
 * The handles of one multi share its DNS cache already; a share object (Scrapy's one
 * resolver for the whole crawler) makes it one cache for every glue in the process —
 * a second glue, for another downloader, finds the names the first one looked up.
 * Every glue runs on the loop thread, so the share needs no lock functions. */

static CURLSH *dns_share;
static int dns_share_users;
static uint64_t dns_share_born; /* monotonic ms */
static size_t dns_share_names;  /* connections made since: names looked up, at most */
static CURLSH **dns_retired;    /* replaced shares some handle may still use */
static size_t dns_nretired;

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static CURLSH *dns_share_new(void)
{
    CURLSH *sh = curl_share_init();
    if (!sh)
        alloc_oom(0);
    curl_share_setopt(sh, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    dns_share_born = mono_ms();
    dns_share_names = 0;
    return sh;
}

/* Free the replaced shares no handle uses any more (libcurl says which). */
static void dns_retired_sweep(void)
{
    size_t kept = 0;
    for (size_t i = 0; i < dns_nretired; i++)
        if (curl_share_cleanup(dns_retired[i]) != CURLSHE_OK)
            dns_retired[kept++] = dns_retired[i];
    dns_nretired = kept;
}

static CURLSH *dns_share_take(void)
{
    if (dns_share_users++ == 0)
        dns_share = dns_share_new();
    return dns_share;
}

/* The share a new transfer uses: the current one, or a new one once it is
 * DNS_SHARE_TTL_S old or holds about DNS_SHARE_MAX_NAMES names (they are then looked
 * up again). */
static CURLSH *dns_share_now(void)
{
    if (dns_share_names >= DNS_SHARE_MAX_NAMES
        || mono_ms() - dns_share_born >= DNS_SHARE_TTL_S * 1000ull) {
        dns_retired = xreallocarray(dns_retired, dns_nretired + 1, sizeof *dns_retired);
        dns_retired[dns_nretired++] = dns_share;
        dns_share = dns_share_new();
        dns_retired_sweep();
    }
    return dns_share;
}

static void dns_share_drop(void)
{
    if (--dns_share_users == 0) {
        dns_retired_sweep(); /* every handle is gone: all of them */
        free(dns_retired);
        dns_retired = NULL;
        dns_nretired = 0;
        curl_share_cleanup(dns_share);
        dns_share = NULL;
    }
}

const char *curl_glue_resolver(void)
{
    const curl_version_info_data *v = curl_version_info(CURLVERSION_NOW);
    if (!(v->features & CURL_VERSION_ASYNCHDNS))
        return "synchronous (each lookup blocks the loop)";
    return v->ares ? "c-ares (asynchronous)" : "threaded (getaddrinfo off the loop)";
}

/* ---- request pool ---------------------------------------------------------------- */

static void req_destroy(curl_req *r)
{
    curl_easy_cleanup(r->easy);
    curl_slist_free_all(r->fields);
    http_head_parser_free(r->head);
    http_parser_free(r->decoder);
    cookie_snap_clear(&r->jar);
    free(r);
}

/* Forget what a try received: its head, its body count, its error. */
static void reset_response(curl_req *r)
{
    r->truncated = r->head_sent = r->head_started = r->held = r->peer_sent = 0;
    cookie_snap_clear(&r->jar);
    r->fail = NULL;
    r->body_bytes = 0;
    http_head_parser_reset(r->head);
    if (r->sink.on_wire)
        http_head_parser_keep_wire(r->head);
    http_parser_free(r->decoder);
    r->decoder = NULL;
    r->errbuf[0] = '\0';
    r->out_of_fds = 0;
}

/* A new easy handle for every request, never curl_easy_reset on an old one: before
 * 8.1, libcurl kept a pointer to the last header of a handle's previous response
 * (state.prevhead, for obs-fold) after freeing it, and a response whose first header
 * line is a continuation line made it read and free that memory again (curl issue
 * #11101) — one space from a server would crash the crawl. */
static CURL *new_easy(void)
{
    CURL *e = curl_easy_init();
    if (!e)
        alloc_oom(0); /* all it can lack is memory */
    return e;
}

static curl_req *req_take(curl_glue *g)
{
    list_node *n = list_pop_front(&g->free_list);
    curl_req *r;
    if (n) {
        r = list_entry(n, curl_req, node);
        g->free_count--;
        curl_easy_cleanup(r->easy);
        r->easy = new_easy();
    } else {
        r = xcalloc(1, sizeof *r);
        r->easy = new_easy();
        r->g = g;
        r->head = http_head_parser_new();
        list_node_init(&r->node);
    }
    r->cancelled = r->in_dead = r->waiting = 0;
    list_node_init(&r->qnode);
    reset_response(r);
    r->link = NULL;
    return r;
}

/* The request is over (done called, or cancelled): back to the pool. */
static void req_recycle(curl_glue *g, curl_req *r)
{
    list_remove(&r->node);
    r->state = REQ_FREE;
    r->sink = (http_sink){0};
    r->done = NULL;
    curl_slist_free_all(r->fields);
    r->fields = NULL;
    http_parser_free(r->decoder);
    r->decoder = NULL;
    if (g->free_count >= g->free_cap) {
        req_destroy(r);
        return;
    }
    http_head_parser_reset(r->head);                /* drops a large head's buffers */
    curl_easy_setopt(r->easy, CURLOPT_SHARE, NULL); /* an old share may go */
    list_push_front(&g->free_list, &r->node);
    g->free_count++;
}

/* ---- response head --------------------------------------------------------------- */

/* The sink's head callbacks, not called once the request is cancelled (a sink may
 * cancel it from any of them). */
static void guarded_header(void *ctx, const char *name, size_t nlen, const char *value, size_t vlen)
{
    curl_req *r = ctx;
    if (!r->cancelled && r->sink.on_header)
        r->sink.on_header(r->sink.ctx, name, nlen, value, vlen);
}

static void guarded_head(void *ctx, const http_head *h)
{
    curl_req *r = ctx;
    if (!r->cancelled && r->sink.on_head)
        r->sink.on_head(r->sink.ctx, h);
}

static void guarded_wire(void *ctx, int part, const char *data, size_t len)
{
    curl_req *r = ctx;
    if (!r->cancelled)
        http_sink_wire(&r->sink, part, data, len);
}

/* Body bytes, decoded, to the sink: at most max_size of them. */
static void give_body(curl_req *r, const char *data, size_t len)
{
    size_t give = len;
    if (r->max_size > 0 && (long long)len > r->max_size - r->body_bytes) {
        give = (size_t)(r->max_size - r->body_bytes);
        r->truncated = 1;
    }
    r->body_bytes += (long long)give;
    if (give && !r->cancelled && r->sink.on_body)
        r->sink.on_body(r->sink.ctx, data, give);
}

static void decoded_body(void *ctx, const char *data, size_t len)
{
    give_body(ctx, data, len);
}

static bool decoded_full(void *ctx)
{
    curl_req *r = ctx;
    return r->truncated || r->cancelled;
}

/* on_wire (an archive): the server's address, once per try, before its head. */
static void send_peer(curl_req *r)
{
    char *ip = NULL;
    if (r->peer_sent || curl_easy_getinfo(r->easy, CURLINFO_PRIMARY_IP, &ip) != CURLE_OK || !ip
        || !*ip)
        return;
    r->peer_sent = 1;
    http_sink_wire(&r->sink, HTTP_WIRE_PEER, ip, strlen(ip));
}

/* The complete head to the sink. */
static void deliver_head(curl_req *r)
{
    const http_sink guarded = {.on_head = guarded_head,
                               .ctx = r,
                               .on_header = guarded_header,
                               .on_wire = r->sink.on_wire ? guarded_wire : NULL};
    r->held = 0;
    r->head_sent = 1;
    http_head_parser_deliver(r->head, &guarded);
}

/* libcurl answered the held 401's challenge (digest): the next response of the same
 * transfer begins, and the 401 is forgotten (its body, which libcurl does not hand on,
 * included), as an interim head is. */
static void next_response(curl_req *r)
{
    r->held = r->head_started = 0;
    http_head_parser_reset(r->head);
    if (r->sink.on_wire)
        http_head_parser_keep_wire(r->head);
    http_parser_free(r->decoder);
    r->decoder = NULL;
    cookie_snap_clear(&r->jar);
}

/* libcurl hands us each line of each response head, status lines included, and the
 * empty line that ends each head; trailers of a chunked body come afterwards. The head
 * lines go to the head parser the raw transport uses too (http_head.h): it skips
 * interim heads, and refuses what breaks its rules in its words — then the transfer
 * stops and the request fails with them.
 *
 * A transfer with credentials (curlauth.h) may hold two responses: a 401 whose
 * challenge (digest, or basic) libcurl answers by itself, then the answer to the
 * request with credentials. So a 401 head is held, not delivered: a status line after
 * it starts the next response (next_response); its first body byte (write_cb) or the
 * transfer's end (finish) says it was the last — libcurl did not answer it (a wrong
 * password) — and it is delivered then. */
static size_t header_cb(char *buf, size_t size, size_t nitems, void *userp)
{
    curl_req *r = userp;
    size_t len = size * nitems;
    if (r->cancelled)
        return 0;
    if (r->held) {
        if (len < 5 || memcmp(buf, "HTTP/", 5) != 0)
            return len; /* a trailer of the 401's body */
        next_response(r);
    }
    if (r->head_sent)
        return len; /* a trailer */
    long version = 0;
    if (!r->head_started) { /* the connection is up: HTTP/2 or not is known */
        r->head_started = 1;
        curl_easy_getinfo(r->easy, CURLINFO_HTTP_VERSION, &version);
        if (version == CURL_HTTP_VERSION_2_0)
            http_head_parser_expect_h2(r->head);
        if (r->g->cookies) { /* before any Set-Cookie of this head (cookiesnap.h) */
            char *url = NULL;
            curl_easy_getinfo(r->easy, CURLINFO_EFFECTIVE_URL, &url);
            cookie_snap_take(&r->jar, r->g->cookie_easy, url);
        }
    }
    if (r->jar.host)
        cookie_snap_saw(&r->jar, buf, len);
    if (r->sink.on_wire) {
        send_peer(r);
        if (!r->decoder) {
            const http_sink inner = {.on_body = decoded_body, .is_full = decoded_full, .ctx = r};
            r->decoder = http_parser_new(&inner);
            if (version == CURL_HTTP_VERSION_2_0)
                http_parser_expect_h2(r->decoder);
        }
        http_parser_feed(r->decoder, buf, len); /* the head parser below judges it */
    }
    size_t used;
    int done = http_head_parser_feed(r->head, buf, len, &used);
    if (done < 0) {
        r->fail = http_head_parser_error(r->head);
        if (r->jar.host) /* a refused head stores no cookie */
            cookie_snap_undo(&r->jar, r->g->cookie_easy);
        return 0;
    }
    if (done > 0) {
        if (r->authed && http_head_parser_head(r->head)->status == 401)
            r->held = 1; /* libcurl may answer it (above) */
        else
            deliver_head(r);
    }
    return r->cancelled ? 0 : len;
}

/* Body bytes: decoded by libcurl (gzip/deflate and chunking undone), or with on_wire
 * as received, archived, then decoded by the raw transport's parser. */
static size_t write_cb(char *data, size_t size, size_t nmemb, void *userp)
{
    curl_req *r = userp;
    size_t len = size * nmemb;
    if (r->cancelled)
        return CURL_WRITEFUNC_ERROR;
    if (r->held) { /* a 401's body: libcurl did not answer it, it is the response */
        deliver_head(r);
        if (r->cancelled)
            return CURL_WRITEFUNC_ERROR;
    }
    if (r->decoder) {
        http_sink_wire(&r->sink, HTTP_WIRE_BODY, data, len);
        if (!r->cancelled && http_parser_feed(r->decoder, data, len) < 0 && !r->truncated) {
            r->fail = http_parser_error(r->decoder);
            return CURL_WRITEFUNC_ERROR;
        }
    } else {
        give_body(r, data, len);
    }
    if (r->truncated || r->cancelled)
        return CURL_WRITEFUNC_ERROR;
    return len;
}

/* on_wire (an archive): the request head as libcurl sent it. */
static int debug_cb(CURL *e, curl_infotype type, char *data, size_t size, void *userp)
{
    (void)e;
    curl_req *r = userp;
    if (type == CURLINFO_HEADER_OUT && !r->cancelled) {
        size_t n = 0;
        char *redacted = r->authed ? curl_auth_redact(data, size, &n) : NULL;
        http_sink_wire(&r->sink, HTTP_WIRE_REQUEST, redacted ? redacted : data,
                       redacted ? n : size);
        free(redacted);
    }
    return 0;
}

#if LIBCURL_VERSION_NUM >= 0x075000 /* CURLOPT_PREREQFUNCTION: libcurl 7.80 */
/* The connection (TCP, and TLS for https) is ready, new or reused, and the request is
 * about to go: the sink's on_connect (--trace-events). Installed only when it has one. */
static int prereq_cb(void *userp, char *primary_ip, char *local_ip, int primary_port,
                     int local_port)
{
    (void)primary_ip, (void)local_ip, (void)primary_port, (void)local_port;
    curl_req *r = userp;
    if (!r->cancelled)
        http_sink_connected(&r->sink);
    return CURL_PREREQFUNC_OK;
}
#endif

/* libcurl needs a socket for a new connection: we make it as libcurl would, and note
 * whether it failed for want of a descriptor (libcurl's error would not say so). */
static curl_socket_t open_socket_cb(void *userp, curlsocktype purpose, struct curl_sockaddr *a)
{
    (void)purpose;
    curl_req *r = userp;
    curl_socket_t fd = socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
    r->out_of_fds = fd == CURL_SOCKET_BAD && net_out_of_fds(errno);
    if (fd != CURL_SOCKET_BAD) {
        r->g->backoff = 0; /* had a descriptor: a later wait starts short again */
        r->g->conns++;
        dns_share_names++; /* a new connection: its name may be new to the share */
    }
    return fd;
}

/* libcurl closes a connection's socket (the glue's, whichever handle made it). */
static int close_socket_cb(void *userp, curl_socket_t fd)
{
    curl_glue *g = userp;
    if (g->conns > 0)
        g->conns--;
    return close(fd);
}

/* ---- finishing ------------------------------------------------------------------- */

static int add_to_multi(curl_glue *g, curl_req *r);
static void finish(curl_glue *g, curl_req *r, CURLcode res);

static void after_action(curl_glue *g);
static void admit(curl_glue *g);

static void admit_fired(selector *s, void *data)
{
    (void)s;
    curl_glue *g = data;
    g->admit_timer = NULL;
    for (int i = 0; i < CURL_LANES; i++)
        if (g->lanes[i].cap == 0 && g->lanes[i].max_cap > 0)
            g->lanes[i].cap = 1; /* the wait with no descriptor is over: try one */
    admit(g);
    after_action(g); /* settles requests that failed to be added */
}

/* Run admit() at the next turn of the loop, or after ms. */
static void admit_later(curl_glue *g, uint64_t ms)
{
    if (!g->admit_timer && !g->closing)
        g->admit_timer = ms ? selector_call_later(g->s, ms, admit_fired, g)
                            : selector_call_soon(g->s, admit_fired, g);
}

/* Into the queue, at its end (a new request) or its front (one to try again); its sink
 * hears that it waits when it cannot be admitted at once. */
static void enqueue(curl_glue *g, curl_req *r, bool front)
{
    glue_lane *l = &g->lanes[r->lane];
    bool must_wait = l->active + l->nqueued >= l->cap;
    r->state = REQ_QUEUED;
    if (front)
        list_push_front(&l->queued, &r->qnode);
    else
        list_push_back(&l->queued, &r->qnode);
    l->nqueued++;
    if (must_wait && !r->waiting) {
        r->waiting = 1;
        http_sink_waiting_fd(&r->sink, 1); /* not in flight meanwhile */
    }
}

static void dequeue(curl_glue *g, curl_req *r)
{
    list_remove(&r->qnode);
    g->lanes[r->lane].nqueued--;
}

/* Its transfer failed because no descriptor was free: first in line again, from the
 * start, and no more transfers at once than now have descriptors. Its sink heard
 * nothing (no connection, so no head, no body), and its done callback is not called:
 * to the caller it is one request, still under way. */
static void wait_for_descriptor(curl_glue *g, curl_req *r)
{
    glue_lane *l = &g->lanes[r->lane];
    reset_response(r);
    l->cap = l->active;
    enqueue(g, r, true);
    if (l->cap == 0) /* none in use: nothing will free one for us; wait */
        admit_later(g, net_fd_backoff(&g->backoff));
}

/* "<curl_easy_strerror>: <errbuf>" on one line; for a failed connect, the system's
 * reason too ("... (Connection refused)"), which libcurl's text leaves out. */
static const char *format_error(curl_glue *g, CURLcode res, const char *errbuf, long os_errno)
{
    if (res == CURLE_PEER_FAILED_VERIFICATION && errbuf[0])
        snprintf(g->errmsg, sizeof g->errmsg, "%s", errbuf); /* "SSL certificate problem: ..." */
    else if (errbuf[0])
        snprintf(g->errmsg, sizeof g->errmsg, "%s: %s", curl_easy_strerror(res), errbuf);
    else
        snprintf(g->errmsg, sizeof g->errmsg, "%s", curl_easy_strerror(res));
    size_t n = strlen(g->errmsg);
    if (res == CURLE_COULDNT_CONNECT && os_errno > 0 && !strstr(g->errmsg, strerror((int)os_errno)))
        snprintf(g->errmsg + n, sizeof g->errmsg - n, " (%s)", strerror((int)os_errno));
    n = strlen(g->errmsg);
    for (size_t i = 0; i < n; i++)
        if (g->errmsg[i] == '\n' || g->errmsg[i] == '\r' || g->errmsg[i] == '\t')
            g->errmsg[i] = ' ';
    while (n && g->errmsg[n - 1] == ' ')
        g->errmsg[--n] = '\0';
    return g->errmsg;
}

/* libcurl checks a few things itself before our header callback sees the line, and it
 * unchunks and decodes bodies itself: what it refuses is said in the words the raw
 * transport uses for the same rule (http_head.h), so that both give the same record.
 * NULL: not one of those; libcurl's own words then. */
static const char *refused_by_libcurl(const curl_req *r, CURLcode res)
{
    bool in_head = !r->head_sent;
    switch (res) {
    case CURLE_WEIRD_SERVER_REPLY: /* "Nul byte in header", "Header without colon" */
        if (in_head)
            return strstr(r->errbuf, "Nul byte") ? http_err_nul : http_err_header_line;
        break;
    case CURLE_BAD_FUNCTION_ARGUMENT: /* its header store: a continuation line first */
        if (in_head)
            return http_err_header_line;
        break;
    case CURLE_UNSUPPORTED_PROTOCOL: /* "Received HTTP/0.9 when not allowed", */
        if (in_head
            && (strstr(r->errbuf, "HTTP/0.9") ||     /* "Unsupported response */
                strstr(r->errbuf, "response code"))) /* code in HTTP response" */
            return http_err_status_line;
        break;
    case CURLE_OUT_OF_MEMORY: /* its cap on one header line, 100 KB: over ours */
        if (in_head)          /* (real lack of memory aborts, alloc.h) */
            return http_err_head_size;
        break;
    case CURLE_BAD_CONTENT_ENCODING: /* its zlib said no */
    case CURLE_WRITE_ERROR:          /* its decoder, for bytes after the stream's end */
        return http_coding_corrupt(http_head_parser_coding(r->head));
    case CURLE_GOT_NOTHING: /* "Empty reply from server" */ return http_err_head_cut;
    case CURLE_RECV_ERROR: /* "... in chunked-encoding" */
        if (strstr(r->errbuf, "chunked-encoding"))
            return http_err_chunked;
        break;
    default: break;
    }
    return NULL;
}

/* The request is out of the multi handle (or was never added): report it and recycle
 * it. */
static void finish(curl_glue *g, curl_req *r, CURLcode res)
{
    if (res != CURLE_OK && r->out_of_fds && !r->fail && !r->cancelled) {
        wait_for_descriptor(g, r);
        return;
    }
    glue_lane *l = &g->lanes[r->lane];
    if (res == CURLE_OK && !r->fail && l->cap < l->max_cap)
        l->cap++;             /* it had a descriptor: perhaps one more will */
    r->state = REQ_FINISHING; /* a cancel from here on only sets r->cancelled */
    g->in_flight--;
    if (res == CURLE_OK && !r->fail && r->held)
        deliver_head(r); /* a 401 without a body, the last response (header_cb) */
    if (res == CURLE_OK && r->authed) {
        char *url = NULL;
        curl_easy_getinfo(r->easy, CURLINFO_EFFECTIVE_URL, &url);
        if (url)
            curl_auth_learn(g->auth, r->easy, url);
    }
    const char *err = NULL;
    if (r->fail)
        err = r->fail;
    else if (r->truncated)
        err = curl_glue_truncated;
    else if (res != CURLE_OK && !(err = refused_by_libcurl(r, res))) {
        long os_errno = 0;
        curl_easy_getinfo(r->easy, CURLINFO_OS_ERRNO, &os_errno);
        err = format_error(g, res, r->errbuf, os_errno);
    } else if (res == CURLE_OK && !r->head_sent) {
        err = http_err_head_cut; /* libcurl took a head that never ended */
    }
    if (!r->cancelled && r->done)
        r->done(r->ctx, err);
    req_recycle(g, r);
}

static int add_to_multi(curl_glue *g, curl_req *r)
{
    if (g->keep) { /* at most g->keep idle: it may add one */
        size_t idle = g->conns > g->active ? g->conns - g->active : 0;
        curl_easy_setopt(r->easy, CURLOPT_FORBID_REUSE, idle <= g->keep ? 0L : 1L);
    }
    CURLMcode mc = curl_multi_add_handle(g->multi, r->easy);
    if (mc != CURLM_OK) {
        r->fail = curl_multi_strerror(mc);
        return -1;
    }
    r->state = REQ_ACTIVE;
    g->active++;
    g->lanes[r->lane].active++;
    return 0;
}

/* Out of the multi handle: one transfer fewer in it. */
static void remove_from_multi(curl_glue *g, curl_req *r)
{
    curl_multi_remove_handle(g->multi, r->easy);
    g->active--;
    g->lanes[r->lane].active--;
}

/* Whether a lane has a request waiting and room for it. */
static bool lane_ready(const glue_lane *l)
{
    return l->nqueued > 0 && l->active < l->cap;
}

/* The next request to hand to libcurl: the first of the pages' lane if it has room,
 * else of the side lane; NULL when neither may take one. */
static list_node *next_admitted(curl_glue *g)
{
    for (int i = 0; i < CURL_LANES; i++)
        if (lane_ready(&g->lanes[i]))
            return list_first(&g->lanes[i].queued);
    return NULL;
}

/* Hand queued requests to libcurl while fewer than their lane's cap transfers are in
 * the multi handle, ADMIT_BATCH at most. Runs once per turn of the loop at most
 * (admit_fired, a call_soon): libcurl connects them all in its next socket_action, and
 * the next batch waits for the next turn, where I/O and a signal are seen first. */
static void admit(curl_glue *g)
{
    size_t added = 0;
    list_node *n;
    while (!g->closing && (n = next_admitted(g))) {
        if (added == ADMIT_BATCH) {
            admit_later(g, 0);
            return;
        }
        curl_req *r = list_entry(n, curl_req, qnode);
        dequeue(g, r);
        bool told = r->waiting;
        r->waiting = 0;
        if (add_to_multi(g, r) == 0) {
            added++;
        } else {
            r->in_dead = 1; /* reported with its error by after_action */
            r->link = g->dead;
            g->dead = r;
            admit_later(g, 0);
        }
        if (told) /* last: the sink may cancel r */
            http_sink_waiting_fd(&r->sink, 0);
    }
}

/* Runs right after each curl_multi_socket_action returns, outside libcurl callbacks,
 * so handles may be added and removed here. */
static void after_action(curl_glue *g)
{
    /* 1. Requests cancelled, or failed by the glue, during socket_action. done callbacks
     * run here may cancel more requests; those already on this list are only marked. */
    while (g->dead) {
        curl_req *r = g->dead;
        g->dead = r->link;
        r->link = NULL;
        r->in_dead = 0;
        if (r->state == REQ_ACTIVE)
            remove_from_multi(g, r); /* drops its queued message too */
        if (r->cancelled)
            req_recycle(g, r);
        else
            finish(g, r, CURLE_OK);
    }

    /* 2. Finished transfers. */
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(g->multi, &left))) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        curl_req *r = NULL;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&r);
        CURLcode res = msg->data.result;
        if (!r || r->state != REQ_ACTIVE)
            continue;
        remove_from_multi(g, r); /* msg is invalid from here */
        finish(g, r, res);
    }

    /* 3. Requests started meanwhile, and those the finished ones made room for: at the
     * next turn. */
    if (lane_ready(&g->lanes[CURL_LANE_PAGES]) || lane_ready(&g->lanes[CURL_LANE_SIDE]))
        admit_later(g, 0);
}

static void action(curl_glue *g, curl_socket_t fd, int flags)
{
    int running;
    g->in_action++;
    curl_multi_socket_action(g->multi, fd, flags, &running);
    g->in_action--;
    if (!g->in_action)
        after_action(g);
}

/* ---- selector side --------------------------------------------------------------- */

static void io_cb(selector *s, int fd, int events, void *data)
{
    (void)s;
    int flags = 0;
    if (events & SEL_READ)
        flags |= CURL_CSELECT_IN;
    if (events & SEL_WRITE)
        flags |= CURL_CSELECT_OUT;
    action(data, fd, flags);
}

static void timer_fired(selector *s, void *data)
{
    (void)s;
    curl_glue *g = data;
    g->timer = NULL;
    action(g, CURL_SOCKET_TIMEOUT, 0);
}

/* ---- libcurl side ---------------------------------------------------------------- */

/* The selector refused a descriptor (e.g. select backend over FD_SETSIZE). Returning -1
 * to libcurl would abort every transfer, so fail just the one that owns it. */
static void fail_transfer(curl_glue *g, CURL *e)
{
    curl_req *r = NULL;
    curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&r);
    snprintf(g->selerr, sizeof g->selerr, "%s", selector_error(g->s));
    if (!g->selerr[0])
        snprintf(g->selerr, sizeof g->selerr, "selector: %s", strerror(errno));
    if (!r || r->cancelled || r->in_dead || r->state != REQ_ACTIVE)
        return;
    r->fail = g->selerr;
    r->in_dead = 1;
    r->link = g->dead;
    g->dead = r;
}

static int sock_cb(CURL *e, curl_socket_t fd, int what, void *userp, void *socketp)
{
    curl_glue *g = userp;
    gsock *gs = socketp;
    if (what == CURL_POLL_REMOVE) {
        if (gs) {
            selector_unregister(g->s, fd);
            list_remove(&gs->node);
            list_push_front(&g->free_socks, &gs->node);
        }
        return 0; /* libcurl forgets the socketp itself */
    }
    int ev = ((what & CURL_POLL_IN) ? SEL_READ : 0) | ((what & CURL_POLL_OUT) ? SEL_WRITE : 0);
    if (!gs) {
        if (selector_register(g->s, fd, ev, io_cb, g) != 0) {
            fail_transfer(g, e);
            return 0;
        }
        list_node *n = list_pop_front(&g->free_socks);
        gs = n ? list_entry(n, gsock, node) : xmalloc(sizeof *gs);
        gs->fd = fd;
        gs->events = ev;
        list_push_front(&g->socks, &gs->node);
        curl_multi_assign(g->multi, fd, gs);
    } else if (gs->events != ev) {
        if (selector_modify(g->s, fd, ev, io_cb, g) != 0)
            fail_transfer(g, e);
        gs->events = ev;
    }
    return 0;
}

/* libcurl wants socket_action(TIMEOUT) in timeout_ms; -1 means no timer. Never call
 * socket_action from here: 0 becomes a call_soon. */
static int timer_cb(CURLM *multi, long timeout_ms, void *userp)
{
    (void)multi;
    curl_glue *g = userp;
    if (g->timer) {
        selector_cancel(g->s, g->timer);
        g->timer = NULL;
    }
    if (timeout_ms < 0 || g->closing)
        return 0;
    if (timeout_ms == 0)
        g->timer = selector_call_soon(g->s, timer_fired, g);
    else
        g->timer = selector_call_later(g->s, (uint64_t)timeout_ms, timer_fired, g);
    return 0;
}

/* ---- public API ------------------------------------------------------------------ */

static void set_limits(curl_glue *g);

curl_glue *curl_glue_new(selector *s, int max_conns, const char *cacert, char *err, size_t errlen)
{
    char dummy[1];
    if (!err || !errlen) {
        err = dummy;
        errlen = sizeof dummy;
    }
    err[0] = '\0';
    if (!s) {
        snprintf(err, errlen, "curl glue: no selector");
        return NULL;
    }
    if (max_conns <= 0) {
        snprintf(err, errlen, "curl glue: max connections must be positive (got %d)", max_conns);
        return NULL;
    }
    if (cacert && access(cacert, R_OK) != 0) {
        snprintf(err, errlen, "CA file %s: %s", cacert, strerror(errno));
        return NULL;
    }
    const char *why = libmem_init();
    if (why) {
        snprintf(err, errlen, "curl_global_init: %s", why);
        return NULL;
    }

    curl_glue *g = xcalloc(1, sizeof *g);
    if (!(g->multi = curl_multi_init()))
        alloc_oom(0); /* all it can lack is memory */
    g->share = dns_share_take();
    g->cacert = cacert ? xstrdup(cacert) : NULL;
    list_init(&g->live);
    list_init(&g->free_list);
    list_init(&g->socks);
    list_init(&g->free_socks);
    for (int i = 0; i < CURL_LANES; i++)
        list_init(&g->lanes[i].queued);
    g->s = s;
    long budget = net_fd_budget();
    size_t max_cap = budget > 0 && budget < max_conns ? (size_t)budget : (size_t)max_conns;
    g->lanes[CURL_LANE_PAGES].cap = g->lanes[CURL_LANE_PAGES].max_cap = max_cap;
    g->free_cap = max_cap + 64;
    curl_multi_setopt(g->multi, CURLMOPT_SOCKETFUNCTION, sock_cb);
    curl_multi_setopt(g->multi, CURLMOPT_SOCKETDATA, g);
    curl_multi_setopt(g->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
    curl_multi_setopt(g->multi, CURLMOPT_TIMERDATA, g);
    g->budget = budget;
    set_limits(g);
    /* HTTP/2 (curl_glue_set_http2): the requests to one host share its connection */
    curl_multi_setopt(g->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
    return g;
}

/* libcurl's connection limits for the lanes' caps. Idle connections too hold
 * descriptors. A transfer keeps its connection while fewer than g->keep are idle, so at
 * most g->keep plus one per transfer end up idle beside the transfers' own: the limits
 * leave room for them all, and libcurl never evicts (see the top of this file) — if the
 * descriptors allow; else, as before, libcurl closes the oldest idle connection before
 * it opens another. The side lane's transfers count in the totals, never in the pages'
 * cap. */
static void set_limits(curl_glue *g)
{
    long pages = (long)g->lanes[CURL_LANE_PAGES].max_cap;
    long all = pages + (long)g->lanes[CURL_LANE_SIDE].max_cap;
    long spare = (g->budget > 0 ? g->budget : 4 * all) - 2 * all - 1;
    g->keep = spare >= pages ? (size_t)pages : spare > 0 ? (size_t)spare : 0;
    long total = g->keep ? 2 * all + (long)g->keep + 1 : all;
    curl_multi_setopt(g->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, total);
    curl_multi_setopt(g->multi, CURLMOPT_MAX_HOST_CONNECTIONS, all);
    curl_multi_setopt(g->multi, CURLMOPT_MAXCONNECTS, total);
}

void curl_glue_set_side_lane(curl_glue *g, int max_side)
{
    glue_lane *l = &g->lanes[CURL_LANE_SIDE];
    long room = g->budget > 0 ? g->budget - (long)g->lanes[CURL_LANE_PAGES].max_cap : max_side;
    if (max_side > room) /* what the descriptors leave beside the pages' */
        max_side = (int)room;
    l->cap = l->max_cap = max_side > 0 ? (size_t)max_side : 0;
    g->free_cap = g->lanes[CURL_LANE_PAGES].max_cap + l->max_cap + 64;
    set_limits(g);
}

/* The caller's header fields for CURLOPT_HTTPHEADER, where "Name:" would remove the
 * field: an empty value is written "Name;". NULL when there is none; false when one
 * fails http_field_check. */
static bool make_fields(curl_req *r, const char *const *fields)
{
    for (; fields && *fields; fields++) {
        if (http_field_check(*fields))
            return false;
        const char *f = *fields;
        size_t n = http_field_name_len(f);
        struct curl_slist *l;
        if (f[n + 1 + strspn(f + n + 1, " \t")] == '\0') {
            char *semi = xasprintf("%.*s;", (int)n, f);
            l = curl_slist_append(r->fields, semi);
            free(semi);
        } else {
            l = curl_slist_append(r->fields, f);
        }
        if (!l)
            alloc_oom(0);
        r->fields = l;
    }
    return true;
}

curl_req *curl_glue_get(curl_glue *g, const char *url, const char *const *fields, long timeout_ms,
                        long long max_size, const http_sink *sink, curl_done_fn done, void *ctx)
{
    return curl_glue_get_lane(g, CURL_LANE_PAGES, url, fields, timeout_ms, max_size, sink, done,
                              ctx);
}

curl_req *curl_glue_get_lane(curl_glue *g, int lane, const char *url, const char *const *fields,
                             long timeout_ms, long long max_size, const http_sink *sink,
                             curl_done_fn done, void *ctx)
{
    return curl_glue_post_lane(g, lane, url, fields, NULL, 0, timeout_ms, max_size, sink, done,
                               ctx);
}

curl_req *curl_glue_post_lane(curl_glue *g, int lane, const char *url, const char *const *fields,
                              const char *body, size_t body_len, long timeout_ms,
                              long long max_size, const http_sink *sink, curl_done_fn done,
                              void *ctx)
{
    if (!g || !url || g->closing)
        return NULL;
    if (lane != CURL_LANE_SIDE || g->lanes[CURL_LANE_SIDE].max_cap == 0)
        lane = CURL_LANE_PAGES; /* no side lane: the pages' */
    curl_req *r = req_take(g);
    if (!r)
        return NULL;
    r->lane = lane;
    CURL *e = r->easy;
    if (sink)
        r->sink = *sink;
    else
        memset(&r->sink, 0, sizeof r->sink);
    r->done = done;
    r->ctx = ctx;
    r->max_size = max_size > 0 ? max_size : 0;

    if (curl_easy_setopt(e, CURLOPT_URL, url) != CURLE_OK || !make_fields(r, fields)) {
        req_recycle(g, r);
        return NULL;
    }
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    if (body) { /* a POST: libcurl copies the body (and sends it again after a 401) */
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
        if (curl_easy_setopt(e, CURLOPT_COPYPOSTFIELDS, body) != CURLE_OK)
            alloc_oom(0); /* all it can lack is memory */
    }
    r->authed = g->auth && curl_auth_apply(g->auth, e, url); /* the roots' origins only */
    /* HTTP/2 where the server offers it (ALPN), https only; each new transfer to a
     * host waits for the connection being made to it, to be multiplexed on it */
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION,
                     g->http2 ? (long)CURL_HTTP_VERSION_2TLS : (long)CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(e, CURLOPT_PIPEWAIT, g->http2 ? 1L : 0L);
    /* what both transports decode (http_head.h); libcurl would offer br and zstd too */
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "gzip, deflate");
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout_ms > 0 ? timeout_ms : 0L);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    if (g->cookies) { /* curl_glue_use_cookies: one share for the crawl */
        curl_easy_setopt(e, CURLOPT_SHARE, g->cookies);
        curl_easy_setopt(e, CURLOPT_COOKIEFILE, ""); /* the engine on, no file */
    } else {
        curl_easy_setopt(e, CURLOPT_SHARE, dns_share_now());
        curl_easy_setopt(e, CURLOPT_DNS_CACHE_TIMEOUT, -1L); /* dns_share_now expires */
    }
    if (g->proxy) {
        curl_easy_setopt(e, CURLOPT_PROXY, g->proxy);
        if (g->cacert)
            curl_easy_setopt(e, CURLOPT_PROXY_CAINFO, g->cacert);
        if (g->insecure) { /* an https proxy's certificate is not checked either */
            curl_easy_setopt(e, CURLOPT_PROXY_SSL_VERIFYPEER, 0L);
            curl_easy_setopt(e, CURLOPT_PROXY_SSL_VERIFYHOST, 0L);
        }
    }
    curl_easy_setopt(e, CURLOPT_MAXAGE_CONN, (long)CONN_IDLE_MAX_S);
    curl_easy_setopt(e, CURLOPT_CLOSESOCKETFUNCTION, close_socket_cb);
    curl_easy_setopt(e, CURLOPT_CLOSESOCKETDATA, g);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, g->insecure ? 0L : 1L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, g->insecure ? 0L : 2L);
    if (g->cacert)
        curl_easy_setopt(e, CURLOPT_CAINFO, g->cacert);
    curl_easy_setopt(e, CURLOPT_USERAGENT, g->user_agent ? g->user_agent : http_default_user_agent);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, r->fields);
    curl_easy_setopt(e, CURLOPT_PRIVATE, r);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, r->errbuf);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, header_cb);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, r);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, write_cb);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, open_socket_cb);
    curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, r);
    if (r->sink.on_wire) {
        /* an archive: the bytes as sent, compressed and chunked; decoded here */
        curl_easy_setopt(e, CURLOPT_HTTP_CONTENT_DECODING, 0L);
        curl_easy_setopt(e, CURLOPT_HTTP_TRANSFER_DECODING, 0L);
        curl_easy_setopt(e, CURLOPT_DEBUGFUNCTION, debug_cb);
        curl_easy_setopt(e, CURLOPT_DEBUGDATA, r);
        curl_easy_setopt(e, CURLOPT_VERBOSE, 1L);
        http_head_parser_keep_wire(r->head);
    }
#if LIBCURL_VERSION_NUM >= 0x075000
    if (r->sink.on_connect) {
        curl_easy_setopt(e, CURLOPT_PREREQFUNCTION, prereq_cb);
        curl_easy_setopt(e, CURLOPT_PREREQDATA, r);
    }
#endif

    list_push_front(&g->live, &r->node);
    g->in_flight++;
    enqueue(g, r, false);
    admit_later(g, 0); /* at the next turn, with the others started meanwhile */
    return r;
}

void curl_glue_cancel(curl_glue *g, curl_req *r)
{
    if (!g || !r || r->g != g || r->state == REQ_FREE || r->cancelled)
        return;
    r->cancelled = 1;
    if (r->state == REQ_FINISHING)
        return; /* finish() recycles it when its done returns */
    g->in_flight--;
    if (r->in_dead)
        return; /* after_action recycles it */
    if (r->state == REQ_QUEUED) {
        dequeue(g, r); /* never given to libcurl */
        req_recycle(g, r);
        return;
    }
    if (g->in_action) {
        r->in_dead = 1;
        r->link = g->dead;
        g->dead = r;
        return;
    }
    remove_from_multi(g, r);
    req_recycle(g, r);
    admit_later(g, 0); /* its place is free */
}

size_t curl_glue_in_flight(const curl_glue *g)
{
    return g ? g->in_flight : 0;
}

void curl_glue_free(curl_glue *g)
{
    if (!g)
        return;
    g->closing = 1;
    list_node *n;
    while ((n = list_pop_front(&g->live))) {
        curl_req *r = list_entry(n, curl_req, node);
        if (r->state == REQ_ACTIVE)
            remove_from_multi(g, r);
        req_destroy(r);
    }
    while ((n = list_pop_front(&g->free_list)))
        req_destroy(list_entry(n, curl_req, node));
    /* Closes the cached connections; libcurl reports their removal to sock_cb. */
    curl_multi_cleanup(g->multi);
    dns_share_drop(); /* after the last handle that used it */
    if (g->cookie_easy)
        curl_easy_cleanup(g->cookie_easy);
    if (g->cookies)
        curl_share_cleanup(g->cookies);
    while ((n = list_pop_front(&g->socks))) { /* anything libcurl did not report */
        gsock *gs = list_entry(n, gsock, node);
        selector_unregister(g->s, gs->fd);
        free(gs);
    }
    while ((n = list_pop_front(&g->free_socks)))
        free(list_entry(n, gsock, node));
    if (g->timer)
        selector_cancel(g->s, g->timer);
    if (g->admit_timer)
        selector_cancel(g->s, g->admit_timer);
    free(g->cacert);
    free(g->user_agent);
    free(g->proxy);
    curl_auth_free(g->auth);
    free(g);
}

void curl_glue_set_user_agent(curl_glue *g, const char *user_agent)
{
    free(g->user_agent);
    g->user_agent = user_agent ? xstrdup(user_agent) : NULL;
}

/* ---- proxy and cookies (curlglue.h) ---------------------------------------------- */

const char *curl_glue_proxy_check(const char *url)
{
    static const char *const schemes[] = {"http",   "https",   "socks4", "socks4a",
                                          "socks5", "socks5h", NULL};
    CURLU *u = curl_url();
    char *scheme = NULL, *host = NULL, *path = NULL, *query = NULL;
    const char *why = NULL;
    if (!u)
        alloc_oom(0);
    if (!url || !*url || curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK)
        why = "not a URL (give SCHEME://HOST:PORT, e.g. http://proxy.example:3128)";
    else if (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK
             || curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK || !*host)
        why = "no host";
    else if ((curl_url_get(u, CURLUPART_PATH, &path, 0) == CURLUE_OK && *path && strcmp(path, "/"))
             || curl_url_get(u, CURLUPART_QUERY, &query, 0) == CURLUE_OK)
        why = "a proxy URL has no path or query";
    else {
        why = "its scheme is not one of http, https, socks4, socks4a, socks5, socks5h";
        for (size_t i = 0; schemes[i]; i++)
            if (strcasecmp(scheme, schemes[i]) == 0)
                why = NULL;
        const curl_version_info_data *v = curl_version_info(CURLVERSION_NOW);
        if (!why && strcasecmp(scheme, "https") == 0 && !(v->features & CURL_VERSION_HTTPS_PROXY))
            why = "this libcurl cannot speak TLS to a proxy (https)";
    }
    curl_free(scheme);
    curl_free(host);
    curl_free(path);
    curl_free(query);
    curl_url_cleanup(u);
    return why;
}

void curl_glue_set_proxy(curl_glue *g, const char *proxy)
{
    free(g->proxy);
    g->proxy = proxy ? xstrdup(proxy) : NULL;
}

void curl_glue_set_auth(curl_glue *g, const char *userpwd, bool netrc, const char *const *roots,
                        size_t n)
{
    curl_auth_free(g->auth);
    g->auth = curl_auth_new(userpwd, netrc, roots, n);
}

/* The cookie store: a share of its own, which holds the DNS cache too (a handle has one
 * share), for the whole crawl — never replaced as dns_share is, or its cookies would
 * go with it. Every handle runs on the loop thread: no lock functions. */
void curl_glue_use_cookies(curl_glue *g)
{
    if (g->cookies)
        return;
    if (!(g->cookies = curl_share_init()) || !(g->cookie_easy = curl_easy_init()))
        alloc_oom(0);
    curl_share_setopt(g->cookies, CURLSHOPT_SHARE, CURL_LOCK_DATA_COOKIE);
    curl_share_setopt(g->cookies, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl_easy_setopt(g->cookie_easy, CURLOPT_SHARE, g->cookies);
    curl_easy_setopt(g->cookie_easy, CURLOPT_COOKIEFILE, "");
}

int curl_glue_add_cookie(curl_glue *g, const char *line)
{
    static const char *const commands[] = {"ALL", "SESS", "FLUSH", "RELOAD", NULL};
    for (size_t i = 0; line && commands[i]; i++)
        if (strcasecmp(line, commands[i]) == 0)
            return -1; /* COOKIELIST's commands (the whole line) are not cookies */
    if (!g->cookies || !line)
        return -1;
    return curl_easy_setopt(g->cookie_easy, CURLOPT_COOKIELIST, line) == CURLE_OK ? 0 : -1;
}

size_t curl_glue_cookies(curl_glue *g, void (*each)(void *ctx, const char *line), void *ctx)
{
    struct curl_slist *list = NULL;
    size_t n = 0;
    if (!g->cookies || curl_easy_getinfo(g->cookie_easy, CURLINFO_COOKIELIST, &list) != CURLE_OK)
        return 0;
    time_t now = time(NULL);
    for (struct curl_slist *l = list; l; l = l->next) {
        if (cookie_snap_expired(l->data, now))
            continue; /* one a refused head set, undone (cookiesnap.h), not yet dropped */
        each(ctx, l->data);
        n++;
    }
    curl_slist_free_all(list);
    return n;
}

void curl_glue_set_http2(curl_glue *g, bool http2)
{
    g->http2 = http2;
}

void curl_glue_set_insecure(curl_glue *g, bool insecure)
{
    g->insecure = insecure;
}
