/* redisqueue.c — the chapter's Queue, "Coordinating Coroutines", with Redis Streams
 * behind put_nowait, get, task_done and join (see redisqueue.h; why the join is right:
 * docs/scale.md).
 *
 * This process's side: the entries it holds (`items`, by URL) — first in `ready`,
 * waiting for a worker, then taken by one until its task_done. get() waits in line as
 * the in-memory Queue's does; a waiting getter with nothing ready makes the queue ask
 * Redis (fill): XREADGROUP for as many entries as there are getters waiting, and when
 * the stream has fewer, XAUTOCLAIM of entries idle in another consumer's hands for
 * longer than --claim-after, then GET of the unfinished counter — zero ends the crawl.
 * With nothing to read and the counter above zero, the next ask waits a little
 * (POLL_MIN_MS doubling to POLL_MAX_MS): other processes still have work in hand, whose
 * links may come. Every --claim-after / 3 the entries this process still holds are
 * claimed again by it (XCLAIM ... JUSTID), which resets their idle time: a slow fetch
 * of a live process is not taken over.
 */
#include "redisqueue.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "alloc.h"
#include "future.h"
#include "hash.h"
#include "list.h"
#include "log.h"
#include "queue.h"
#include "redisglue.h"
#include "redisurl.h"
#include "strmap.h"
#include "url.h"
#include "extension.h"

#define REDIS_TIMEOUT_MS 10000 /* no answer for this long: Redis is gone */
#define POLL_MIN_MS      5
#define POLL_MAX_MS      200
#define POLL_POLITE_MS   50  /* politeness: entries may be waiting out a delay */
#define HEARTBEAT_BATCH  256 /* entry ids per XCLAIM */

static const char GROUP[] = "crawlers";

/* An entry's fields: u (the URL), r (redirects left), x (the rest of the request:
 * depth, referrer, callback — extras_encode below). */

/* put: SADD decides; INCR before XADD, all in one step for every other client. */
static const char PUT_LUA[] =
    "if redis.call('SADD', KEYS[1], ARGV[1]) == 0 then return 0 end\n"
    "redis.call('INCR', KEYS[2])\n"
    "redis.call('XADD', KEYS[3], '*', 'u', ARGV[2], 'r', ARGV[3], 'x', ARGV[4])\n"
    "return 1\n";
/* task_done: only the acknowledgement that took the entry out of the pending list
 * counts it done — a claimed entry acknowledged twice is counted once. */
static const char ACK_LUA[] =
    "if redis.call('XACK', KEYS[1], ARGV[1], ARGV[2]) == 0 then return -1 end\n"
    "redis.call('XDEL', KEYS[1], ARGV[2])\n"
    "return redis.call('DECR', KEYS[2])\n";

/* Politeness across processes (--per-host, --delay with --frontier): each host has, in
 * Redis, its leases (a sorted set of entry ids by expiry: the requests in flight of
 * every process), the time its next request may start, and a line of entries that
 * found it at its cap. admit: may this entry's host start a request now? Yes (0): a
 * lease, and the next start moved on by the delay. No: the entry leaves the stream
 * (acknowledged and deleted, the unfinished counter unchanged) for the host's line
 * (-1: at its cap) or for the delayed set until its next start (the wait, ms); -2:
 * the entry was not this consumer's any more. */
static const char ADMIT_LUA[] =
    "local t = redis.call('TIME')\n"
    "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
    "local base = ARGV[1] .. 'host:' .. ARGV[2]\n"
    "local infl = base .. ':inflight'\n"
    "local cap = tonumber(ARGV[4])\n"
    "local m = ARGV[9] .. ' ' .. #ARGV[10] .. ' ' .. ARGV[10] .. ARGV[8]\n"
    "redis.call('ZREMRANGEBYSCORE', infl, '-inf', now)\n"
    "local function leave()\n"
    "  if redis.call('XACK', KEYS[1], ARGV[7], ARGV[3]) == 0 then return false end\n"
    "  redis.call('XDEL', KEYS[1], ARGV[3])\n"
    "  return true\n"
    "end\n"
    "if cap > 0 and redis.call('ZCARD', infl) >= cap then\n"
    "  if not leave() then return -2 end\n"
    "  redis.call('RPUSH', base .. ':wait', m)\n"
    "  redis.call('SADD', ARGV[1] .. 'waithosts', ARGV[2])\n"
    "  return -1\n"
    "end\n"
    "local nxt = tonumber(redis.call('GET', base .. ':next') or '0')\n"
    "if nxt > now then\n"
    "  if not leave() then return -2 end\n"
    "  redis.call('ZADD', KEYS[2], nxt, m)\n"
    "  return nxt - now\n"
    "end\n"
    "redis.call('ZADD', infl, now + tonumber(ARGV[6]), ARGV[3])\n"
    "local d = tonumber(ARGV[5])\n"
    "if d > 0 then redis.call('SET', base .. ':next', now + d, 'PX', d + 1000) end\n"
    "return 0\n";
/* promote, at each fill: delayed entries whose time has come, and as many of a waiting
 * host's line as it has room for (expired leases — a dead process's — dropped), go
 * back into the stream. Returns how many. A waiting entry is "R XLEN X URL" (admit's
 * m: its r, its x's length, its x, its URL). */
static const char PROMOTE_LUA[] =
    "local t = redis.call('TIME')\n"
    "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
    "local moved = 0\n"
    "local function back(m)\n"
    "  local r, xl, rest = string.match(m, '^(%S+) (%d+) (.*)$')\n"
    "  if not r then\n" /* an older crawl-queue's "R URL" */
    "    local sp = string.find(m, ' ', 1, true)\n"
    "    r, xl, rest = string.sub(m, 1, sp - 1), 0, string.sub(m, sp + 1)\n"
    "  end\n"
    "  xl = tonumber(xl)\n"
    "  redis.call('XADD', KEYS[1], '*', 'u', string.sub(rest, xl + 1), 'r', r,\n"
    "             'x', string.sub(rest, 1, xl))\n"
    "  moved = moved + 1\n"
    "end\n"
    "for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, 200)) do\n"
    "  redis.call('ZREM', KEYS[2], m)\n"
    "  back(m)\n"
    "end\n"
    "local cap = tonumber(ARGV[2])\n"
    "local wh = ARGV[1] .. 'waithosts'\n"
    "for _, h in ipairs(redis.call('SRANDMEMBER', wh, 100)) do\n"
    "  local base = ARGV[1] .. 'host:' .. h\n"
    "  redis.call('ZREMRANGEBYSCORE', base .. ':inflight', '-inf', now)\n"
    "  local room = cap - redis.call('ZCARD', base .. ':inflight')\n"
    "  while room > 0 do\n"
    "    local m = redis.call('LPOP', base .. ':wait')\n"
    "    if not m then break end\n"
    "    back(m)\n"
    "    room = room - 1\n"
    "  end\n"
    "  if redis.call('LLEN', base .. ':wait') == 0 then redis.call('SREM', wh, h) end\n"
    "end\n"
    "return moved\n";

/* An entry this process holds. */
typedef struct stream_entry {
    crawl_request *req; /* its URL and what travels with it (one allocation) */
    char id[48];        /* the stream entry's id, "1700000000000-0" */
    char *host;         /* politeness: its host, once it holds a lease there */
    strmap_node node;   /* in q->items, by URL */
    list_node link;     /* in q->ready, or q->taken */
} stream_entry;

struct rqueue {
    selector *loop;
    redis_glue *g;
    char *stream, *seen, *unfinished, *fpkey_key, *consumer;
    char *name;                    /* the crawl's NAME */
    char *identity, *identity_key; /* its roots and options, and their key */
    uint8_t fpkey[16];
    char put_sha[41], ack_sha[41], admit_sha[41], promote_sha[41];
    char *prefix, *delayed; /* "crawl:NAME:", and its delayed set */
    int per_host;           /* politeness across processes (rqueue_politeness) */
    double delay;
    bool random_delay, polite;
    uint64_t rng;
    int opening; /* setup replies still to come */
    strmap items;
    list_node ready, taken;
    size_t nready, ntaken;
    list_node getters;
    size_t ngetters;
    bool filling;      /* a fill's commands are out */
    int fill_replies;  /* replies of this fill still to come */
    size_t fill_got;   /* entries it brought */
    long long counter; /* the unfinished counter, as the fill's GET read it */
    sel_timer *poll;   /* the next fill, after an empty one */
    uint64_t poll_ms;
    uint64_t claim_after_ms;
    char claim_cursor[48]; /* XAUTOCLAIM's next start */
    uint64_t last_claim;
    sel_timer *heartbeat;
    bool finished;
    char *error;
    char *error_line; /* "--frontier: " and error: the Frontier interface's */
    future join_future;
    sel_timer *join_wakeup;
    size_t put_new, put_seen; /* put_nowait's answers: new, seen before */
};

static void kick(rqueue *q);

/* ---- failure and the end: wake the joiner ---- */

static void rwake_joiners(selector *s, void *arg)
{
    (void)s;
    rqueue *q = arg;
    q->join_wakeup = NULL;
    future_set_result(&q->join_future, (coro_value){NULL, 0});
}

static void schedule_join_wakeup(rqueue *q)
{
    if (!q->join_wakeup)
        q->join_wakeup = selector_call_soon(q->loop, rwake_joiners, q);
}

static void fail(rqueue *q, const char *msg)
{
    if (q->error)
        return;
    q->error = xstrdup(msg);
    q->error_line = xasprintf("--frontier: %s", msg);
    schedule_join_wakeup(q);
}

static void on_glue_error(redis_glue *g, const char *msg, void *data)
{
    (void)g;
    fail(data, msg);
}

/* A reply that is no reply, or an error reply: the crawl cannot go on. */
static bool bad_reply(rqueue *q, redisReply *r, const char *what)
{
    if (r && r->type != REDIS_REPLY_ERROR)
        return false;
    if (r) {
        char msg[512];
        snprintf(msg, sizeof msg, "redis %s: %s: %s", redis_glue_peer(q->g), what, r->str);
        fail(q, msg);
    } /* NULL: the glue's on_error says why */
    return true;
}

/* ---- the entries this process holds ---- */

/* An entry's x: "DEPTH RLEN CLEN:" then the referrer and the callback, each length -1
 * when absent (lengths, not separators: the strings are any bytes but NUL). */
static char *extras_encode(const crawl_request *r)
{
    long rl = r->referrer ? (long)strlen(r->referrer) : -1;
    long cl = r->callback ? (long)strlen(r->callback) : -1;
    size_t n = 64 + (rl > 0 ? (size_t)rl : 0) + (cl > 0 ? (size_t)cl : 0);
    char *x = xmalloc(n);
    snprintf(x, n, "%d %ld %ld:%s%s", r->depth, rl, cl, r->referrer ? r->referrer : "",
             r->callback ? r->callback : "");
    return x;
}

/* Fill r's depth, referrer and callback from x (the strings point into the returned
 * buffer: free it after use). A malformed or empty x (an entry of an older crawl-queue)
 * leaves depth 0 and no referrer or callback. */
static char *extras_decode(const char *x, crawl_request *r)
{
    int depth, used = 0;
    long rl, cl;
    r->depth = 0;
    r->referrer = r->callback = NULL;
    if (sscanf(x, "%d %ld %ld:%n", &depth, &rl, &cl, &used) != 3 || used == 0 || depth < 0
        || rl < -1 || cl < -1)
        return NULL;
    const char *p = x + used;
    size_t rlen = rl > 0 ? (size_t)rl : 0, clen = cl > 0 ? (size_t)cl : 0;
    if (strlen(p) != rlen + clen)
        return NULL;
    char *buf = xmalloc(rlen + clen + 2);
    memcpy(buf, p, rlen);
    buf[rlen] = '\0';
    memcpy(buf + rlen + 1, p + rlen, clen);
    buf[rlen + 1 + clen] = '\0';
    r->depth = depth;
    r->referrer = rl >= 0 ? buf : NULL;
    r->callback = cl >= 0 ? buf + rlen + 1 : NULL;
    return buf;
}

static void free_stream_entry(stream_entry *it)
{
    free(it->host);
    free(it->req);
    free(it);
}

static void rwake_oldest_getter(rqueue *q)
{
    if (getter_wake_oldest(q->loop, &q->getters))
        q->ngetters--;
}

/* An entry of the stream ([id, [field, value, ...]]): ready for a worker, unless this
 * process holds its URL already (its own entry, claimed back). */
static void take_entry(rqueue *q, const redisReply *e)
{
    if (!e || e->type != REDIS_REPLY_ARRAY || e->elements != 2
        || e->element[0]->type != REDIS_REPLY_STRING || e->element[1]->type != REDIS_REPLY_ARRAY)
        return; /* a deleted entry (nil fields) */
    const redisReply *f = e->element[1];
    crawl_request r = {0};
    const char *x = "";
    for (size_t i = 0; i + 1 < f->elements; i += 2) {
        const redisReply *k = f->element[i], *v = f->element[i + 1];
        if (k->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING)
            continue;
        if (strcmp(k->str, "u") == 0)
            r.url = v->str;
        else if (strcmp(k->str, "r") == 0)
            r.max_redirect = atoi(v->str);
        else if (strcmp(k->str, "x") == 0)
            x = v->str;
    }
    if (!r.url || e->element[0]->len >= sizeof((stream_entry *)0)->id)
        return;
    if (strmap_find(&q->items, r.url))
        return;
    char *extras = extras_decode(x, &r); /* an entry without x: depth 0, no referrer */
    stream_entry *it = xcalloc(1, sizeof *it);
    it->req = crawl_request_dup(&r);
    free(extras);
    memcpy(it->id, e->element[0]->str, e->element[0]->len + 1);
    strmap_add(&q->items, &it->node, it->req->url);
    list_push_back(&q->ready, &it->link);
    q->nready++;
    q->fill_got++;
    rwake_oldest_getter(q);
}

static void take_entries(rqueue *q, const redisReply *list)
{
    if (list && list->type == REDIS_REPLY_ARRAY)
        for (size_t i = 0; i < list->elements; i++)
            take_entry(q, list->element[i]);
}

/* ---- fill: ask Redis for entries while getters wait ---- */

static void poll_cb(selector *s, void *arg)
{
    (void)s;
    rqueue *q = arg;
    q->poll = NULL;
    kick(q);
}

/* Every reply of a fill is in. */
static void fill_done(rqueue *q)
{
    q->filling = false;
    if (q->error)
        return;
    if (q->fill_got > 0) {
        q->poll_ms = 0;
        kick(q);
        return;
    }
    if (q->counter == 0) {
        /* Every entry ever put has been acknowledged, by some process: the crawl is
         * done (docs/scale.md). */
        q->finished = true;
        schedule_join_wakeup(q);
        return;
    }
    q->poll_ms = q->poll_ms ? q->poll_ms * 2 : POLL_MIN_MS;
    if (q->poll_ms > (q->polite ? POLL_POLITE_MS : POLL_MAX_MS))
        q->poll_ms = q->polite ? POLL_POLITE_MS : POLL_MAX_MS;
    if (!q->poll)
        q->poll = selector_call_later(q->loop, q->poll_ms, poll_cb, q);
}

static void fill_reply_done(rqueue *q)
{
    if (--q->fill_replies == 0)
        fill_done(q);
}

static void got_claimed(redis_glue *g, redisReply *r, void *data)
{
    (void)g;
    rqueue *q = data;
    if (!bad_reply(q, r, "XAUTOCLAIM") && r->type == REDIS_REPLY_ARRAY && r->elements >= 2) {
        const redisReply *cur = r->element[0];
        if (cur->type == REDIS_REPLY_STRING && cur->len < sizeof q->claim_cursor)
            memcpy(q->claim_cursor, cur->str, cur->len + 1);
        size_t before = q->fill_got;
        take_entries(q, r->element[1]);
        if (q->fill_got > before)
            log_info("crawl-queue: took over %zu entr%s idle for %llu ms or more",
                     q->fill_got - before, q->fill_got - before == 1 ? "y" : "ies",
                     (unsigned long long)q->claim_after_ms);
    }
    fill_reply_done(q);
}

static void got_counter(redis_glue *g, redisReply *r, void *data)
{
    (void)g;
    rqueue *q = data;
    if (!bad_reply(q, r, "GET")) {
        if (r->type == REDIS_REPLY_STRING)
            q->counter = strtoll(r->str, NULL, 10);
        else
            q->counter = 0; /* nil: nothing was ever put */
    }
    fill_reply_done(q);
}

static void got_read(redis_glue *g, redisReply *r, void *data)
{
    (void)g;
    rqueue *q = data;
    if (bad_reply(q, r, "XREADGROUP")) {
        fill_reply_done(q);
        return;
    }
    /* [[stream, [entry, ...]]], or nil when nothing new */
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 1 && r->element[0]->type == REDIS_REPLY_ARRAY
        && r->element[0]->elements == 2)
        take_entries(q, r->element[0]->element[1]);
    if (q->fill_got == 0 && !q->error) {
        /* Nothing new: entries idle in other hands, then is anything left at all? */
        uint64_t now = selector_now_ms(q->loop);
        if (now - q->last_claim >= q->claim_after_ms / 2 || q->last_claim == 0) {
            q->last_claim = now;
            char idle[32], count[32];
            snprintf(idle, sizeof idle, "%llu", (unsigned long long)q->claim_after_ms);
            snprintf(count, sizeof count, "%zu", q->ngetters > 0 ? q->ngetters : 1);
            const char *argv[] = {"XAUTOCLAIM", q->stream,       GROUP,   q->consumer,
                                  idle,         q->claim_cursor, "COUNT", count};
            if (redis_glue_argv(q->g, got_claimed, q, 8, argv, NULL) == 0)
                q->fill_replies++;
        }
        if (redis_glue_command(q->g, got_counter, q, "GET %s", q->unfinished) == 0)
            q->fill_replies++;
    }
    fill_reply_done(q);
}

static void got_promote(redis_glue *g, redisReply *r, void *data)
{
    (void)g;
    rqueue *q = data;
    (void)bad_reply(q, r, "promote");
    fill_reply_done(q);
}

/* Getters wait and nothing is ready: ask for entries (politeness: first bring back
 * those whose host may start again). */
static void kick(rqueue *q)
{
    if (q->filling || q->poll || q->finished || q->error || q->opening)
        return;
    if (q->ngetters == 0)
        return;
    char count[32];
    snprintf(count, sizeof count, "%zu", q->ngetters);
    const char *argv[] = {"XREADGROUP", "GROUP",   GROUP,     q->consumer, "COUNT",
                          count,        "STREAMS", q->stream, ">"};
    q->filling = true;
    q->fill_got = 0;
    q->counter = -1;
    q->fill_replies = 1;
    if (q->polite) {
        char cap[16];
        snprintf(cap, sizeof cap, "%d", q->per_host);
        const char *pargv[] = {"EVALSHA",  q->promote_sha, "2", q->stream,
                               q->delayed, q->prefix,      cap};
        if (redis_glue_argv(q->g, got_promote, q, 7, pargv, NULL) == 0)
            q->fill_replies++;
    }
    if (redis_glue_argv(q->g, got_read, q, 9, argv, NULL) < 0) {
        q->filling = false;
        fail(q, redis_glue_error(q->g) ? redis_glue_error(q->g) : "redis: cannot send");
    }
}

/* ---- heartbeat: what this process holds is not idle ---- */

static void ignore_reply(redis_glue *g, redisReply *r, void *data)
{
    (void)g;
    bad_reply(data, r, "XCLAIM");
}

static void heartbeat_cb(selector *s, void *arg)
{
    rqueue *q = arg;
    q->heartbeat = NULL;
    if (q->error || q->finished)
        return;
    list_node *n = q->taken.next;
    const char *argv[6 + HEARTBEAT_BATCH + 1];
    while (n != &q->taken) {
        int argc = 0;
        argv[argc++] = "XCLAIM";
        argv[argc++] = q->stream;
        argv[argc++] = GROUP;
        argv[argc++] = q->consumer;
        argv[argc++] = "0";
        for (; n != &q->taken && argc < 5 + HEARTBEAT_BATCH; n = n->next)
            argv[argc++] = list_entry(n, stream_entry, link)->id;
        argv[argc++] = "JUSTID";
        redis_glue_argv(q->g, ignore_reply, q, argc, argv, NULL);
    }
    q->heartbeat = selector_call_later(s, q->claim_after_ms / 3 + 1, heartbeat_cb, q);
}

/* ---- put_nowait, task_done ---- */

static void got_put(redis_glue *g, redisReply *r, void *data)
{
    (void)g;
    rqueue *q = data;
    if (bad_reply(q, r, "put"))
        return;
    if (r->type == REDIS_REPLY_INTEGER && r->integer == 1)
        q->put_new++;
    else
        q->put_seen++;
}

/* url's fingerprint in the shared seen set: of its RFC 3986 normal form, as the crawl
 * core's own seen set keys it (crawl_url_key), so that "/%7Euser" put by one process and
 * "/~user" by another are one URL. The URLs put are in libcurl's normal form already,
 * which only a '%' can leave short of RFC 3986's. */
static uint64_t seen_fingerprint(const rqueue *q, const char *url)
{
    char *normal = strchr(url, '%') ? url_normalize(url) : NULL;
    const char *k = normal ? normal : url;
    uint64_t fp = hash_siphash24(k, strlen(k), q->fpkey);
    free(normal);
    return fp;
}

static void rqueue_put_nowait(rqueue *q, const crawl_request *r)
{
    if (q->error)
        return;
    uint64_t fp = seen_fingerprint(q, r->url);
    char fpb[8], redir[16];
    for (int i = 0; i < 8; i++)
        fpb[i] = (char)(fp >> (8 * i));
    snprintf(redir, sizeof redir, "%d", r->max_redirect);
    char *x = extras_encode(r);
    const char *argv[] = {"EVALSHA", q->put_sha, "3",    q->seen, q->unfinished,
                          q->stream, fpb,        r->url, redir,   x};
    size_t lens[10];
    for (int i = 0; i < 10; i++)
        lens[i] = i == 6 ? sizeof fpb : strlen(argv[i]);
    if (redis_glue_argv(q->g, got_put, q, 10, argv, lens) < 0)
        fail(q, redis_glue_error(q->g) ? redis_glue_error(q->g) : "redis: cannot send");
    free(x);
}

static void got_ack(redis_glue *g, redisReply *r, void *data)
{
    (void)g;
    bad_reply(data, r, "task_done");
}

/* The URL got with rqueue_get has been dealt with: its record is written. */
static void rqueue_task_done(rqueue *q, const char *url)
{
    strmap_node *n = strmap_find(&q->items, url);
    if (!n)
        return;
    stream_entry *it = strmap_entry(n, stream_entry, node);
    strmap_remove(&q->items, n);
    list_remove(&it->link);
    q->ntaken--;
    if (!q->error) {
        const char *argv[] = {"EVALSHA", q->ack_sha, "2", q->stream, q->unfinished, GROUP, it->id};
        redis_glue_argv(q->g, got_ack, q, 7, argv, NULL);
        if (it->host) /* politeness: the host's request is over */
            redis_glue_command(q->g, got_ack, q, "ZREM %shost:%s:inflight %s", q->prefix, it->host,
                               it->id);
    }
    free_stream_entry(it);
}

/* ---- get ---- */

typedef struct rget_frame rget_frame;

/* An admit script's reply on its way to a getter (which may be cancelled meanwhile:
 * then f is NULL and the reply is dropped). */
typedef struct admit {
    rget_frame *f;
    rqueue *q;
} admit;

struct rget_frame {
    coro co;
    rqueue *q;
    getter g;
    stream_entry *it; /* the entry being admitted */
    admit *ad;        /* its admit, while out */
};

static void got_admit(redis_glue *g, redisReply *r, void *data)
{
    (void)g;
    admit *ad = data;
    long long n = -3; /* no answer: not this process's entry any more */
    if (!bad_reply(ad->q, r, "admit") && r->type == REDIS_REPLY_INTEGER)
        n = r->integer;
    if (ad->f) {
        ad->f->ad = NULL;
        future_set_result(&ad->f->g.wake, (coro_value){NULL, n});
    }
    free(ad);
}

/* Ask Redis whether f->it's host may start a request now (got_admit answers). */
static int admit_send(rget_frame *f)
{
    rqueue *q = f->q;
    stream_entry *it = f->it;
    url_split(it->req->url, NULL, &it->host, NULL, NULL); /* host stays NULL on failure */
    if (!it->host)
        it->host = xstrdup("");
    double d = q->delay * 1000.0;
    if (q->random_delay)
        d *= hash_jitter(&q->rng);
    char cap[16], delay[32], ttl[32], redir[16];
    snprintf(cap, sizeof cap, "%d", q->per_host);
    snprintf(delay, sizeof delay, "%llu", (unsigned long long)(d + 0.999));
    snprintf(ttl, sizeof ttl, "%llu", (unsigned long long)q->claim_after_ms);
    snprintf(redir, sizeof redir, "%d", it->req->max_redirect);
    char *x = extras_encode(it->req);
    const char *argv[] = {"EVALSHA", q->admit_sha, "2",          q->stream, q->delayed,
                          q->prefix, it->host,     it->id,       cap,       delay,
                          ttl,       GROUP,        it->req->url, redir,     x};
    admit *ad = xcalloc(1, sizeof *ad);
    ad->f = f;
    ad->q = q;
    f->ad = ad;
    int sent = redis_glue_argv(q->g, got_admit, ad, 15, argv, NULL);
    free(x);
    if (sent < 0) {
        f->ad = NULL;
        free(ad);
        fail(q, redis_glue_error(q->g) ? redis_glue_error(q->g) : "redis: cannot send");
        return -1;
    }
    return 0;
}

/* The entry left this process (deferred in Redis, or another's now). */
static void drop_entry(rqueue *q, stream_entry *it)
{
    strmap_remove(&q->items, &it->node);
    free_stream_entry(it);
}

static int rget_body(coro *co)
{
    rget_frame *f = (rget_frame *)co;
    CORO_BEGIN(co);
    for (;;) {
        while (f->q->nready == 0) {
            future_clear(&f->g.wake);
            list_push_back(&f->q->getters, &f->g.link);
            f->q->ngetters++;
            kick(f->q);
            AWAIT_FUTURE(co, &f->g.wake); /* a worker is cancelled here at the end */
        }
        f->it = list_entry(list_pop_front(&f->q->ready), stream_entry, link);
        f->q->nready--;
        list_node_init(&f->it->link);
        if (!f->q->polite)
            break;
        /* Politeness across processes: may its host start now, for the whole crawl?
         * The getter waits for Redis's answer, never for the host. */
        future_clear(&f->g.wake);
        if (admit_send(f) == 0)
            AWAIT_FUTURE(co, &f->g.wake);
        if (!f->q->error && co->value.n == 0)
            break;               /* admitted: a lease is held */
        drop_entry(f->q, f->it); /* deferred: back in Redis, for later */
        f->it = NULL;
    }
    {
        rqueue *q = f->q;
        stream_entry *it = f->it;
        f->it = NULL;
        list_push_back(&q->taken, &it->link);
        q->ntaken++;
        CORO_RETURN(co, crawl_request_dup(it->req), 0);
    }
    CORO_END(co);
}

static void rget_finally(coro *co)
{
    rget_frame *f = (rget_frame *)co;
    if (list_linked(&f->g.link)) {
        list_remove(&f->g.link);
        f->q->ngetters--;
    }
    if (f->ad)
        f->ad->f = NULL; /* its reply is dropped */
    if (f->it) {         /* cancelled while admitting: ready again */
        list_push_front(&f->q->ready, &f->it->link);
        f->q->nready++;
    }
    if (f->g.wakeup) {
        selector_cancel(f->q->loop, f->g.wakeup);
        if (f->q->nready > 0)
            rwake_oldest_getter(f->q);
    }
    future_clear(&f->g.wake);
}

static const coro_def rget_def = {"get", __FILE__, rget_body, rget_finally, sizeof(rget_frame)};

/* Coroutine: {crawl_request * (the caller frees it, with free), 0}, waiting while there
 * is none. */
static coro *rqueue_get(rqueue *q)
{
    rget_frame *f = (rget_frame *)coro_new(&rget_def);
    f->q = q;
    future_init(&f->g.wake);
    list_node_init(&f->g.link);
    return &f->co;
}

/* ---- join ---- */

typedef struct {
    coro co;
    rqueue *q;
} rjoin_frame;

static int rjoin_body(coro *co)
{
    rjoin_frame *f = (rjoin_frame *)co;
    CORO_BEGIN(co);
    while (!f->q->finished && !f->q->error) {
        if (future_done(&f->q->join_future))
            future_clear(&f->q->join_future);
        AWAIT_FUTURE(co, &f->q->join_future);
    }
    CORO_END(co);
}

static const coro_def rjoin_def = {"join", __FILE__, rjoin_body, NULL, sizeof(rjoin_frame)};

/* Coroutine: wait until the whole crawl (every process's) is done, or Redis failed. */
static coro *rqueue_join(rqueue *q)
{
    rjoin_frame *f = (rjoin_frame *)coro_new(&rjoin_def);
    f->q = q;
    return &f->co;
}

/* Entries this process holds: waiting for a worker, and taken and not done. */
static size_t rqueue_qsize(const rqueue *q)
{
    return q->nready;
}
static size_t rqueue_unfinished(const rqueue *q)
{
    return q->nready + q->ntaken;
}

/* ---- open and close ---- */

static void got_setup(redis_glue *g, redisReply *r, void *data)
{
    (void)g;
    rqueue *q = data;
    q->opening--;
    (void)bad_reply(q, r, "setup");
}

/* XGROUP CREATE: BUSYGROUP (another process made it) is fine. */
static void got_group(redis_glue *g, redisReply *r, void *data)
{
    (void)g;
    rqueue *q = data;
    q->opening--;
    if (r && r->type == REDIS_REPLY_ERROR && strncmp(r->str, "BUSYGROUP", 9) == 0)
        return;
    (void)bad_reply(q, r, "XGROUP CREATE");
}

/* The crawl's roots and options as the first process gave them (SET NX, then GET). */
static void got_identity(redis_glue *g, redisReply *r, void *data)
{
    (void)g;
    rqueue *q = data;
    q->opening--;
    if (bad_reply(q, r, "GET"))
        return;
    if (r->type != REDIS_REPLY_STRING || strcmp(r->str, q->identity) != 0) {
        char msg[800];
        snprintf(msg, sizeof msg,
                 "redis %s: crawl '%s' has other roots or options (every "
                 "process of a crawl gives the same roots, --max-redirect, --max-pages, "
                 "--exclude, --strict, --ignore-robots, --per-host, --delay and "
                 "--random-delay; or name another crawl)",
                 redis_glue_peer(q->g), q->name);
        fail(q, msg);
    }
}

static void got_fpkey(redis_glue *g, redisReply *r, void *data)
{
    (void)g;
    rqueue *q = data;
    q->opening--;
    if (bad_reply(q, r, "GET"))
        return;
    if (r->type != REDIS_REPLY_STRING || r->len != sizeof q->fpkey) {
        char msg[512];
        snprintf(msg, sizeof msg, "redis %s: %s is not a 16-byte key", redis_glue_peer(q->g),
                 q->fpkey_key);
        fail(q, msg);
        return;
    }
    memcpy(q->fpkey, r->str, sizeof q->fpkey);
}

static void got_sha(redis_glue *g, redisReply *r, void *data, char *sha)
{
    (void)g;
    rqueue *q = data;
    q->opening--;
    if (!bad_reply(q, r, "SCRIPT LOAD") && r->type == REDIS_REPLY_STRING && r->len == 40)
        memcpy(sha, r->str, 41);
}

static void got_put_sha(redis_glue *g, redisReply *r, void *data)
{
    got_sha(g, r, data, ((rqueue *)data)->put_sha);
}

static void got_ack_sha(redis_glue *g, redisReply *r, void *data)
{
    got_sha(g, r, data, ((rqueue *)data)->ack_sha);
}

static void got_admit_sha(redis_glue *g, redisReply *r, void *data)
{
    got_sha(g, r, data, ((rqueue *)data)->admit_sha);
}

static void got_promote_sha(redis_glue *g, redisReply *r, void *data)
{
    got_sha(g, r, data, ((rqueue *)data)->promote_sha);
}

static void got_auth(redis_glue *g, redisReply *r, void *data)
{
    (void)g;
    rqueue *q = data;
    q->opening--;
    (void)bad_reply(q, r, "AUTH");
}

static char *key(const char *name, const char *what)
{
    size_t n = strlen(name) + strlen(what) + 8;
    char *k = xmalloc(n);
    snprintf(k, n, "crawl:%s:%s", name, what);
    return k;
}

/* Run the loop until every setup reply is in. Bounded: the glue fails the connection
 * after REDIS_TIMEOUT_MS of silence. 0, or -1 with q->error set. */
static int wait_opening(rqueue *q)
{
    while (q->opening > 0 && !q->error && !redis_glue_error(q->g))
        if (selector_run_once(q->loop, 100) < 0)
            fail(q, selector_error(q->loop));
    if (!q->error && redis_glue_error(q->g))
        fail(q, redis_glue_error(q->g));
    return q->error ? -1 : 0;
}

static void rqueue_free(rqueue *q);

rqueue *rqueue_new(selector *loop, const char *url, const char *identity, double claim_after,
                   const char *consumer, char *err, size_t errlen)
{
    redis_url u;
    if (redis_url_parse(url, &u, err, errlen) < 0)
        return NULL;
    const char *name = u.name;
    redis_glue *g = redis_glue_connect(loop, u.host, u.port, REDIS_TIMEOUT_MS, err, errlen);
    if (!g) {
        redis_url_forget(&u);
        return NULL;
    }
    rqueue *q = xcalloc(1, sizeof *q);
    q->loop = loop;
    q->g = g;
    q->name = xstrdup(name);
    q->identity = xstrdup(identity);
    q->identity_key = key(name, "crawl");
    q->stream = key(name, "stream");
    q->seen = key(name, "seen");
    q->unfinished = key(name, "unfinished");
    q->fpkey_key = key(name, "fpkey");
    q->prefix = key(name, "");
    q->delayed = key(name, "delayed");
    q->rng = hash_str(consumer) | 1;
    q->consumer = xstrdup(consumer);
    q->claim_after_ms = (uint64_t)(claim_after * 1000);
    if (q->claim_after_ms < 1)
        q->claim_after_ms = 1;
    strcpy(q->claim_cursor, "0-0");
    strmap_init(&q->items);
    list_init(&q->ready);
    list_init(&q->taken);
    list_init(&q->getters);
    future_init(&q->join_future);
    redis_glue_on_error(g, on_glue_error, q);

    /* First: who we are (AUTH), and whether this is the crawl Redis has under NAME —
     * a refused process changes nothing else of it. */
    q->opening = 2;
    if (u.auth) {
        q->opening++;
        if (u.user[0])
            redis_glue_command(g, got_auth, q, "AUTH %s %s", u.user, u.password);
        else
            redis_glue_command(g, got_auth, q, "AUTH %s", u.password);
    }
    redis_url_forget(&u);
    redis_glue_command(g, got_setup, q, "SET %s %s NX", q->identity_key, q->identity);
    redis_glue_command(g, got_identity, q, "GET %s", q->identity_key);
    if (wait_opening(q) == 0) {
        /* The crawl's fingerprint key: the first process's random one. */
        uint8_t mine[16];
        if (getrandom(mine, sizeof mine, 0) != (ssize_t)sizeof mine)
            for (size_t i = 0; i < sizeof mine; i++)
                mine[i] = (uint8_t)(hash_str(consumer) >> (i % 8 * 8)) ^ (uint8_t)i;
        q->opening = 8;
        redis_glue_command(g, got_setup, q, "SET %s %b NX", q->fpkey_key, mine, sizeof mine);
        redis_glue_command(g, got_fpkey, q, "GET %s", q->fpkey_key);
        redis_glue_command(g, got_group, q, "XGROUP CREATE %s %s 0 MKSTREAM", q->stream, GROUP);
        redis_glue_command(g, got_setup, q, "XGROUP CREATECONSUMER %s %s %s", q->stream, GROUP,
                           q->consumer);
        redis_glue_command(g, got_put_sha, q, "SCRIPT LOAD %s", PUT_LUA);
        redis_glue_command(g, got_ack_sha, q, "SCRIPT LOAD %s", ACK_LUA);
        redis_glue_command(g, got_admit_sha, q, "SCRIPT LOAD %s", ADMIT_LUA);
        redis_glue_command(g, got_promote_sha, q, "SCRIPT LOAD %s", PROMOTE_LUA);
        wait_opening(q);
    }
    if (q->error) {
        snprintf(err, errlen, "%s", q->error);
        rqueue_free(q);
        return NULL;
    }
    q->heartbeat = selector_call_later(loop, q->claim_after_ms / 3 + 1, heartbeat_cb, q);
    return q;
}

void rqueue_politeness(rqueue *q, int per_host, double delay, bool random_delay)
{
    q->per_host = per_host;
    q->delay = delay;
    q->random_delay = random_delay;
    q->polite = per_host > 0 || delay > 0;
}

static void drop_item(strmap_node *n)
{
    free_stream_entry(strmap_entry(n, stream_entry, node));
}

/* Send what is still waiting to be sent (task_done's acknowledgements), then close.
 * No coroutine may be waiting in get or join. */
static void rqueue_free(rqueue *q)
{
    if (!q)
        return;
    if (q->poll)
        selector_cancel(q->loop, q->poll);
    if (q->heartbeat)
        selector_cancel(q->loop, q->heartbeat);
    if (q->join_wakeup)
        selector_cancel(q->loop, q->join_wakeup);
    q->poll = q->heartbeat = q->join_wakeup = NULL;
    /* What task_done sent must reach Redis: run the loop until it is answered, also
     * after an interruption — for REDIS_TIMEOUT_MS at most, by the clock (a second
     * signal makes every turn of the loop return at once). */
    if (!q->error && redis_glue_pending(q->g) > 0) {
        selector_uninterrupt(q->loop);
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        while (redis_glue_pending(q->g) > 0 && !redis_glue_error(q->g)) {
            if (selector_run_once(q->loop, 100) < 0)
                break;
            clock_gettime(CLOCK_MONOTONIC, &t);
            if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000
                > REDIS_TIMEOUT_MS)
                break;
        }
    }
    log_info("crawl-queue: %zu URL(s) put in the shared frontier, %zu already seen there",
             q->put_new, q->put_seen);
    redis_glue_free(q->g);
    strmap_clear(&q->items, drop_item);
    strmap_free(&q->items);
    future_clear(&q->join_future);
    free(q->stream);
    free(q->seen);
    free(q->unfinished);
    free(q->fpkey_key);
    free(q->name);
    free(q->identity);
    free(q->identity_key);
    free(q->prefix);
    free(q->delayed);
    free(q->consumer);
    free(q->error);
    free(q->error_line);
    free(q);
}

/* ---- behind the Frontier interface ---- */

static void fr_put_nowait(void *self, const crawl_request *r)
{
    rqueue_put_nowait(self, r);
}

static coro *fr_get(void *self)
{
    return rqueue_get(self);
}
static void fr_task_done(void *self, const char *url)
{
    rqueue_task_done(self, url);
}
static coro *fr_join(void *self)
{
    return rqueue_join(self);
}
static size_t fr_qsize(const void *self)
{
    return rqueue_qsize(self);
}
static size_t fr_unfinished(const void *self)
{
    return rqueue_unfinished(self);
}
static const char *fr_error(const void *self)
{
    return ((const rqueue *)self)->error_line;
}
static void fr_free(void *self)
{
    rqueue_free(self);
}

static const frontier_ops redis_ops = {
    .name = "redis",
    .put_nowait = fr_put_nowait,
    .get = fr_get,
    .task_done = fr_task_done,
    .join = fr_join,
    .qsize = fr_qsize,
    .unfinished = fr_unfinished,
    .error = fr_error,
    .free = fr_free,
};

frontier rqueue_frontier(rqueue *q)
{
    return (frontier){&redis_ops, q};
}

/* ---- the descriptor (extension.h) ---- */

/* What makes the processes of a --frontier crawl one crawl: what --state keeps
 * (crawl_identity), and what the engine and the shared politeness change. */
static char *frontier_identity(const crawl_options *o, const settings *s)
{
    char *base = crawl_identity(o);
    char *id = xasprintf("%signore_robots %d\nper_host %d\ndelay %g\nrandom_delay %d\n", base,
                         s->ignore_robots, s->per_host, s->delay, s->random_delay);
    free(base);
    return id;
}

static bool on(const settings *s)
{
    return s->frontier != NULL;
}

/* The Queue on Redis, politeness across processes in Redis. */
static int make(app *a, const settings *s, frontier *out, char *err, size_t errlen)
{
    char why[1024];
    char *id = frontier_identity(&a->opt, s);
    rqueue *rq =
        rqueue_new(a->loop, s->frontier, id, s->claim_after, a->opt.fetched_by, why, sizeof why);
    free(id);
    if (!rq) {
        snprintf(err, errlen, "--frontier: %s", why);
        return -1;
    }
    rqueue_politeness(rq, s->per_host, s->delay, s->random_delay);
    *out = rqueue_frontier(rq);
    return 0;
}

/* The descriptor (extension.h): --frontier redis://..., order 100. */
const extension redis_extension = {"redis", EXT_FRONTIER, 100, on, .make_frontier = make};
