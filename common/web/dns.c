/* dns.c — see dns.h. One entry per host name, in a hash table and in a list by age:
 *
 *   pending   a lookup runs in the pool; waiters wait on the entry; a timer holds the
 *             timeout
 *   answered  an address or an error, until `expires`
 *
 * The pool job (struct lookup) owns copies of what it needs, and points back at its
 * entry only while the entry waits for it: an entry that times out, expires, is
 * evicted or freed first lets go of its job (job->entry = NULL), and the job, when it
 * ends, just frees itself.
 */
#include "dns.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "list.h"
#include "strmap.h"
#include "net.h"

typedef struct lookup lookup;

typedef struct entry {
    dns_resolver *r;
    strmap_node node; /* r->hosts, by host */
    list_node by_age; /* r->by_age, oldest first */
    char *host;
    bool pending;
    list_node waiters; /* pending: the dns_waiters */
    sel_timer *timer;  /* pending: the timeout */
    lookup *job;       /* the pool job, while it runs for this entry */
    uint64_t expires;  /* answered */
    struct sockaddr_storage addr;
    socklen_t len;
    char *error; /* answered with a failure */
} entry;

struct lookup {
    entry *entry; /* NULL once the entry let go */
    char *host;
    dns_resolve_fn resolve;
    int rc; /* from here on written on the pool thread */
    struct sockaddr_storage addr;
    socklen_t len;
    char err[256];
};

struct dns_resolver {
    selector *loop;
    threadpool *pool;
    dns_config cfg;
    strmap hosts; /* entry by host */
    list_node by_age;
    size_t lookups;
};

/* ---- the table -------------------------------------------------------------------- */

static entry *find(dns_resolver *r, const char *host)
{
    strmap_node *n = strmap_find(&r->hosts, host);
    return n ? strmap_entry(n, entry, node) : NULL;
}

static void remove_entry(dns_resolver *r, entry *e)
{
    strmap_remove(&r->hosts, &e->node);
    list_remove(&e->by_age);
    if (e->job)
        e->job->entry = NULL;
    if (e->timer)
        selector_cancel(r->loop, e->timer);
    free(e->host);
    free(e->error);
    free(e);
}

/* Make room for one more: the oldest answered entry goes. Pending ones stay (they have
 * waiters); if every entry is pending, the table runs over its size for a while. */
static void evict_oldest(dns_resolver *r)
{
    list_for_each(n, &r->by_age)
    {
        entry *e = list_entry(n, entry, by_age);
        if (!e->pending) {
            remove_entry(r, e);
            return;
        }
    }
}

static entry *add_entry(dns_resolver *r, const char *host)
{
    if (r->hosts.count >= r->cfg.cache_size)
        evict_oldest(r);
    entry *e = xcalloc(1, sizeof *e);
    e->r = r;
    e->host = xstrdup(host);
    list_init(&e->waiters);
    strmap_add(&r->hosts, &e->node, e->host);
    list_push_back(&r->by_age, &e->by_age);
    return e;
}

/* ---- answering -------------------------------------------------------------------- */

static void answer(dns_waiter *w, const struct sockaddr_storage *addr, socklen_t len,
                   const char *error)
{
    if (error) {
        w->done(w, NULL, 0, error);
        return;
    }
    struct sockaddr_storage with_port = *addr;
    net_set_port(&with_port, w->port);
    w->done(w, &with_port, len, NULL);
}

/* The lookup is over (answered, failed or timed out): keep the answer for the TTL and
 * call every waiter. A callback may look up, cancel other waiters or evict this very
 * entry, so the waiters and the answer are taken out of e first, and e is not touched
 * while they are called. */
static void settle(entry *e, const struct sockaddr_storage *addr, socklen_t len, const char *error)
{
    dns_resolver *r = e->r;
    e->pending = false;
    if (e->timer)
        selector_cancel(r->loop, e->timer);
    e->timer = NULL;
    e->expires = selector_now_ms(r->loop) + r->cfg.ttl_ms;
    if (addr) {
        e->addr = *addr;
        e->len = len;
    } else {
        e->error = xstrdup(error);
    }

    list_node waiting;
    list_init(&waiting);
    while (!list_empty(&e->waiters))
        list_push_back(&waiting, list_pop_front(&e->waiters));
    struct sockaddr_storage got = e->addr;
    char *why = e->error ? xstrdup(e->error) : NULL;
    list_node *n;
    while ((n = list_pop_front(&waiting)))
        answer(list_entry(n, dns_waiter, node), &got, len, why);
    free(why);
}

/* ---- the lookup in the pool ----------------------------------------------------------- */

static void run_lookup(void *arg) /* on a pool thread */
{
    lookup *l = arg;
    l->rc = l->resolve(l->host, &l->addr, &l->len, l->err, sizeof l->err);
}

static void lookup_over(void *arg, bool ran) /* on the loop thread */
{
    lookup *l = arg;
    entry *e = l->entry;
    if (e) {
        e->job = NULL;
        if (!ran)
            settle(e, NULL, 0, "DNS lookup cancelled: the thread pool shut down");
        else
            settle(e, l->rc == 0 ? &l->addr : NULL, l->len, l->err);
    }
    free(l->host);
    free(l);
}

static void lookup_timed_out(selector *s, void *arg)
{
    (void)s;
    entry *e = arg;
    char msg[512];
    e->timer = NULL;
    e->job->entry = NULL; /* its late answer is dropped */
    e->job = NULL;
    snprintf(msg, sizeof msg, "DNS lookup of %s timed out after %g s", e->host,
             (double)e->r->cfg.timeout_ms / 1000.0);
    settle(e, NULL, 0, msg);
}

static void start_lookup(dns_resolver *r, entry *e)
{
    lookup *l = xcalloc(1, sizeof *l);
    l->entry = e;
    l->host = xstrdup(e->host);
    l->resolve = r->cfg.resolve ? r->cfg.resolve : net_resolve_name;
    e->pending = true;
    e->job = l;
    e->timer = selector_call_later(r->loop, r->cfg.timeout_ms, lookup_timed_out, e);
    r->lookups++;
    threadpool_submit(r->pool, run_lookup, lookup_over, l);
}

/* ---- the API -------------------------------------------------------------------------- */

void dns_lookup(dns_resolver *r, dns_waiter *w, const char *host, int port, dns_done_fn done,
                void *data)
{
    *w = (dns_waiter){.port = port, .done = done, .data = data};
    list_node_init(&w->node);
    if (!*host || port < 0 || port > 65535) {
        char msg[512];
        snprintf(msg, sizeof msg, "cannot resolve host '%s': %s", host,
                 *host ? "port out of range" : "empty host name");
        done(w, NULL, 0, msg);
        return;
    }
    struct sockaddr_storage addr;
    socklen_t len;
    if (net_numeric_host(host, &addr, &len)) {
        net_set_port(&addr, port);
        done(w, &addr, len, NULL);
        return;
    }
    entry *e = find(r, host);
    if (e && !e->pending && selector_now_ms(r->loop) >= e->expires) {
        remove_entry(r, e); /* stale */
        e = NULL;
    }
    if (!e) {
        e = add_entry(r, host);
        start_lookup(r, e);
    }
    if (e->pending)
        list_push_back(&e->waiters, &w->node);
    else
        answer(w, &e->addr, e->len, e->error);
}

void dns_cancel(dns_waiter *w)
{
    list_remove(&w->node);
}

size_t dns_lookups(const dns_resolver *r)
{
    return r->lookups;
}

dns_resolver *dns_new(selector *loop, threadpool *pool, const dns_config *cfg)
{
    dns_resolver *r = xcalloc(1, sizeof *r);
    r->loop = loop;
    r->pool = pool;
    r->cfg = *cfg;
    if (r->cfg.cache_size == 0)
        r->cfg.cache_size = 1;
    strmap_init(&r->hosts);
    list_init(&r->by_age);
    return r;
}

void dns_free(dns_resolver *r)
{
    if (!r)
        return;
    list_node *n;
    while ((n = list_first(&r->by_age)))
        remove_entry(r, list_entry(n, entry, by_age));
    strmap_free(&r->hosts);
    free(r);
}
