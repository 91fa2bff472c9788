/* redisglue.c — hiredis's async API on our selector (see redisglue.h).
 *
 * Read it beside curlglue.c and hiredis's own adapters (adapters/libevent.h):
 *
 *   hiredis says "watch for reading/writing" -> add/del hooks -> selector_register/
 *                                               modify/unregister of its one descriptor
 *   the selector says "fd is ready"          -> io_cb -> redisAsyncHandleRead/Write
 *   hiredis says "forget the descriptor"     -> cleanup hook: unregister; the context
 *                                               is gone (hiredis frees it right after)
 *   nothing heard for timeout_ms             -> the glue's own timer: the connection
 *                                               fails (hiredis 0.14 has no timer hook)
 *
 * Lifetimes. hiredis frees its context by itself when the connection fails, and
 * defers a redisAsyncFree asked from inside one of its callbacks until that callback
 * returns. The glue outlives the context: `ac` is NULL once the cleanup hook has run.
 * redis_glue_free only marks the glue (`freeing`) and frees the context; the glue's
 * own memory goes when the context is gone and no call into hiredis is on the stack
 * (`busy`), whichever comes last.
 */
#include "redisglue.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/async.h>

#include "alloc.h"

struct redis_glue {
    selector *s;
    redisAsyncContext *ac; /* NULL once hiredis has let go of the connection */
    int fd;
    int events; /* SEL_READ|SEL_WRITE as registered */
    int timeout_ms;
    sel_timer *timer;    /* the answer timer, while something waits */
    uint64_t last_heard; /* when the server last answered (or the wait began) */
    size_t pending;      /* commands sent, not answered */
    bool connected;
    bool closing;           /* we asked hiredis to free the context */
    bool freeing;           /* redis_glue_free was called */
    int busy;               /* calls into hiredis on the stack */
    char *error;            /* the failure, one line */
    sel_timer *error_timer; /* failed(): close, then tell on_error */
    redis_error_fn on_error;
    void *on_error_data;
    char peer[300];
    size_t max_reply;                   /* bytes a reply may take (REDIS_GLUE_MAX_REPLY) */
    size_t reply_bytes;                 /* the reply being read, so far */
    bool reply_over;                    /* it went past max_reply: the connection fails */
    redisReplyObjectFunctions *base_fn; /* hiredis's own */
};

/* One command in flight: whose callback gets its reply. */
typedef struct {
    redis_glue *g;
    redis_reply_fn fn;
    void *data;
} glue_cmd;

static void free_glue(redis_glue *g)
{
    if (g->timer)
        selector_cancel(g->s, g->timer);
    if (g->error_timer)
        selector_cancel(g->s, g->error_timer);
    free(g->error);
    free(g);
}

/* Free the glue if it was asked for and nothing holds it any more. */
static void maybe_free(redis_glue *g)
{
    if (g->freeing && !g->ac && g->busy == 0)
        free_glue(g);
}

/* Ask hiredis to close the connection (waiting commands get NULL). */
static void close_ac(redis_glue *g)
{
    if (g->ac && !g->closing) {
        g->closing = true;
        g->ac->onDisconnect = NULL;
        g->ac->onConnect = NULL;
        redisAsyncFree(g->ac); /* may run the cleanup hook at once */
    }
}

static void failed_cb(selector *s, void *arg)
{
    (void)s;
    redis_glue *g = arg;
    g->error_timer = NULL;
    g->busy++;
    close_ac(g);
    if (!g->freeing && g->on_error)
        g->on_error(g, g->error, g->on_error_data);
    g->busy--;
    maybe_free(g);
}

/* The connection failed: keep the first reason; close and tell on a later turn. */
static void fail(redis_glue *g, const char *why)
{
    if (g->error)
        return;
    char over[128];
    if (g->reply_over) { /* hiredis says "Out of memory": say what it was */
        snprintf(over, sizeof over, "a reply of more than %zu bytes (is it a Redis server?)",
                 g->max_reply);
        why = over;
    }
    size_t n = strlen(g->peer) + strlen(why) + 16;
    g->error = xmalloc(n);
    snprintf(g->error, n, "redis %s: %s", g->peer, why);
    if (!g->freeing)
        g->error_timer = selector_call_soon(g->s, failed_cb, g);
}

/* ---- the answer timer ---- */

static void timer_cb(selector *s, void *arg)
{
    redis_glue *g = arg;
    g->timer = NULL;
    if (!g->ac || g->error || (g->connected && g->pending == 0))
        return;
    uint64_t now = selector_now_ms(s), due = g->last_heard + (uint64_t)g->timeout_ms;
    if (now < due) {
        g->timer = selector_call_later(s, due - now, timer_cb, g);
        return;
    }
    char why[64];
    snprintf(why, sizeof why, "no answer in %d ms", g->timeout_ms);
    fail(g, why);
}

/* Something starts waiting for the server. */
static void start_wait(redis_glue *g)
{
    if (g->timeout_ms <= 0)
        return;
    if (g->pending == 0 && g->connected)
        g->last_heard = selector_now_ms(g->s);
    if (!g->timer)
        g->timer = selector_call_later(g->s, (uint64_t)g->timeout_ms, timer_cb, g);
}

/* ---- hiredis's event hooks ---- */

/* ---- the size of a reply ---- */

/* Each object of a reply counts its bytes against max_reply; past it, hiredis is told
 * there is no memory (NULL), which fails the connection. A top-level object (no parent)
 * starts a new reply. */
static bool too_big(const redisReadTask *t, size_t bytes)
{
    redis_glue *g = t->privdata;
    if (!t->parent)
        g->reply_bytes = 0;
    g->reply_bytes += bytes + sizeof(redisReply);
    if (g->reply_bytes > g->max_reply || bytes > g->max_reply)
        g->reply_over = true;
    return g->reply_over;
}

static void *make_string(const redisReadTask *t, char *str, size_t len)
{
    redis_glue *g = t->privdata;
    return too_big(t, len) ? NULL : g->base_fn->createString(t, str, len);
}

static void *make_array(const redisReadTask *t, int n)
{
    redis_glue *g = t->privdata;
    if (n < 0) /* a count past INT_MAX, as hiredis 0.14 stores it */
        g->reply_over = true;
    return n < 0 || too_big(t, (size_t)n * sizeof(redisReply *)) ? NULL
                                                                 : g->base_fn->createArray(t, n);
}

static void *make_integer(const redisReadTask *t, long long v)
{
    redis_glue *g = t->privdata;
    return too_big(t, 0) ? NULL : g->base_fn->createInteger(t, v);
}

static void *make_nil(const redisReadTask *t)
{
    redis_glue *g = t->privdata;
    return too_big(t, 0) ? NULL : g->base_fn->createNil(t);
}

static void free_object(void *obj)
{
    freeReplyObject(obj);
}

static redisReplyObjectFunctions bounded_fn = {make_string, make_array, make_integer, make_nil,
                                               free_object};

/* A bulk string is kept whole in the reader's buffer before it becomes an object:
 * bound the buffer too ("$999999999999" and a stream of bytes). */
static void check_buffer(redis_glue *g)
{
    redisReader *rd = g->ac ? g->ac->c.reader : NULL;
    if (rd && rd->len - rd->pos > g->max_reply && !g->error) {
        g->reply_over = true;
        fail(g, "");
    }
}

static void io_cb(selector *s, int fd, int events, void *data)
{
    (void)s;
    (void)fd;
    redis_glue *g = data;
    g->busy++;
    if ((events & SEL_READ) && g->ac && !g->error) {
        redisAsyncHandleRead(g->ac);
        check_buffer(g);
    }
    if ((events & SEL_WRITE) && g->ac && !g->error)
        redisAsyncHandleWrite(g->ac);
    g->busy--;
    maybe_free(g);
}

static void want(redis_glue *g, int add, int del)
{
    int ev = (g->events | add) & ~del;
    if (ev == g->events)
        return;
    int r;
    if (ev == SEL_NONE)
        r = selector_unregister(g->s, g->fd);
    else if (g->events == SEL_NONE)
        r = selector_register(g->s, g->fd, ev, io_cb, g);
    else
        r = selector_modify(g->s, g->fd, ev, io_cb, g);
    if (r < 0) {
        fail(g, selector_error(g->s)[0] ? selector_error(g->s) : strerror(errno));
        return;
    }
    g->events = ev;
}

static void add_read(void *p)
{
    want(p, SEL_READ, 0);
}
static void del_read(void *p)
{
    want(p, 0, SEL_READ);
}
static void add_write(void *p)
{
    want(p, SEL_WRITE, 0);
}
static void del_write(void *p)
{
    want(p, 0, SEL_WRITE);
}

static void cleanup(void *p)
{
    redis_glue *g = p;
    want(g, 0, SEL_READ | SEL_WRITE);
    g->ac = NULL; /* hiredis frees it when we return */
    if (g->timer)
        selector_cancel(g->s, g->timer);
    g->timer = NULL;
    maybe_free(g);
}

static void on_connect(const redisAsyncContext *ac, int status)
{
    redis_glue *g = ac->data;
    if (status == REDIS_OK) {
        g->connected = true;
        g->last_heard = selector_now_ms(g->s);
    } else {
        fail(g, ac->errstr[0] ? ac->errstr : "connection failed");
    }
}

static void on_disconnect(const redisAsyncContext *ac, int status)
{
    redis_glue *g = ac->data;
    if (status != REDIS_OK || !g->closing)
        fail(g, ac->err && ac->errstr[0] ? ac->errstr : "connection closed");
}

/* ---- commands ---- */

static void on_reply(redisAsyncContext *ac, void *reply, void *priv)
{
    glue_cmd *c = priv;
    redis_glue *g = c->g;
    g->pending--;
    if (reply)
        g->last_heard = selector_now_ms(g->s);
    else if (!g->closing && !g->freeing)
        fail(g, ac->err && ac->errstr[0] ? ac->errstr : "connection closed");
    if (!g->freeing && c->fn) {
        g->busy++;
        c->fn(g, reply, c->data);
        g->busy--;
    }
    free(c);
    /* No maybe_free here: hiredis still holds the context (it calls cleanup later). */
}

static glue_cmd *new_cmd(redis_glue *g, redis_reply_fn fn, void *data)
{
    glue_cmd *c = xmalloc(sizeof *c);
    c->g = g;
    c->fn = fn;
    c->data = data;
    return c;
}

static int sent(redis_glue *g, glue_cmd *c, int r)
{
    if (r != REDIS_OK) {
        free(c);
        return -1;
    }
    start_wait(g);
    g->pending++;
    return 0;
}

int redis_glue_command(redis_glue *g, redis_reply_fn fn, void *data, const char *fmt, ...)
{
    if (!g->ac || g->error || g->closing)
        return -1;
    glue_cmd *c = new_cmd(g, fn, data);
    va_list ap;
    va_start(ap, fmt);
    int r = redisvAsyncCommand(g->ac, on_reply, c, fmt, ap);
    va_end(ap);
    return sent(g, c, r);
}

int redis_glue_argv(redis_glue *g, redis_reply_fn fn, void *data, int argc, const char **argv,
                    const size_t *argvlen)
{
    if (!g->ac || g->error || g->closing)
        return -1;
    glue_cmd *c = new_cmd(g, fn, data);
    return sent(g, c, redisAsyncCommandArgv(g->ac, on_reply, c, argc, argv, argvlen));
}

/* ---- the connection ---- */

redis_glue *redis_glue_connect(selector *s, const char *host, int port, int timeout_ms, char *err,
                               size_t errlen)
{
    char peer[300]; /* host:port, an IPv6 address in brackets */
    if (strchr(host, ':'))
        snprintf(peer, sizeof peer, "[%s]:%d", host, port);
    else
        snprintf(peer, sizeof peer, "%s:%d", host, port);
    redisAsyncContext *ac = redisAsyncConnect(host, port);
    if (!ac) {
        snprintf(err, errlen, "redis %s:%d: cannot make a connection", host, port);
        return NULL;
    }
    if (ac->err) {
        snprintf(err, errlen, "redis %s: %s", peer, ac->errstr);
        redisAsyncFree(ac);
        return NULL;
    }
    redis_glue *g = xcalloc(1, sizeof *g);
    g->s = s;
    g->ac = ac;
    g->fd = ac->c.fd;
    g->timeout_ms = timeout_ms;
    g->max_reply = REDIS_GLUE_MAX_REPLY;
    g->base_fn = ac->c.reader->fn;
    ac->c.reader->fn = &bounded_fn;
    ac->c.reader->privdata = g;
    snprintf(g->peer, sizeof g->peer, "%s", peer);
    ac->data = g;
    ac->ev.data = g;
    ac->ev.addRead = add_read;
    ac->ev.delRead = del_read;
    ac->ev.addWrite = add_write;
    ac->ev.delWrite = del_write;
    ac->ev.cleanup = cleanup;
    redisAsyncSetDisconnectCallback(ac, on_disconnect);
    redisAsyncSetConnectCallback(ac, on_connect); /* watches for writing: the connect */
    g->last_heard = selector_now_ms(s);
    start_wait(g);
    return g;
}

void redis_glue_free(redis_glue *g)
{
    if (!g || g->freeing)
        return;
    g->freeing = true;
    g->on_error = NULL;
    if (g->error_timer)
        selector_cancel(g->s, g->error_timer);
    g->error_timer = NULL;
    if (g->ac) {
        if (g->closing) {
            g->ac->onDisconnect = NULL;
            return; /* hiredis frees it soon; cleanup frees g */
        }
        close_ac(g); /* g may be gone now */
        return;
    }
    maybe_free(g);
}

void redis_glue_on_error(redis_glue *g, redis_error_fn fn, void *data)
{
    g->on_error = fn;
    g->on_error_data = data;
    if (g->error && !g->error_timer && fn)
        g->error_timer = selector_call_soon(g->s, failed_cb, g);
}

void redis_glue_set_max_reply(redis_glue *g, size_t bytes)
{
    g->max_reply = bytes;
}
const char *redis_glue_error(const redis_glue *g)
{
    return g->error;
}
size_t redis_glue_pending(const redis_glue *g)
{
    return g->pending;
}
const char *redis_glue_peer(const redis_glue *g)
{
    return g->peer;
}
int redis_glue_connected(const redis_glue *g)
{
    return g->connected;
}
