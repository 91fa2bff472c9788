/* net.c — socket plumbing for the raw transport: a caching resolver, non-blocking
 * connect, and raising the open-files limit.
 *
 * getaddrinfo blocks the whole event loop while it works. asyncio hands it to a thread
 * pool (loop.getaddrinfo) and Scrapy to Twisted's threaded resolver; we resolve each
 * host once and cache the answer (failures too), so the cost is paid once per site.
 * Numeric addresses skip getaddrinfo altogether (inet_pton).
 *
 * The cache is keyed by host name alone: the port is written into the cached address
 * on the way out, so one site on several ports costs one lookup. Host names come from
 * the pages crawled, so the table hashes them with the keyed hash (hash.h).
 */
#include "net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "alloc.h"
#include "strmap.h"

/* ---- resolver ------------------------------------------------------------------- */

struct entry {
    strmap_node node; /* in the resolver's table, by host */
    char *host;
    char *error;                  /* NULL when the lookup succeeded */
    struct sockaddr_storage addr; /* port 0; the caller's port is set on copy-out */
    socklen_t len;
};

struct resolver {
    strmap hosts;   /* struct entry by host */
    size_t lookups; /* getaddrinfo calls made */
};

resolver *resolver_new(void)
{
    resolver *r = xcalloc(1, sizeof *r);
    strmap_init(&r->hosts);
    return r;
}

static void entry_free(strmap_node *n)
{
    struct entry *e = strmap_entry(n, struct entry, node);
    free(e->host);
    free(e->error);
    free(e);
}

void resolver_free(resolver *r)
{
    if (!r)
        return;
    strmap_clear(&r->hosts, entry_free);
    strmap_free(&r->hosts);
    free(r);
}

size_t resolver_lookups(const resolver *r)
{
    return r ? r->lookups : 0;
}

static struct entry *find(const resolver *r, const char *host)
{
    strmap_node *n = strmap_find(&r->hosts, host);
    return n ? strmap_entry(n, struct entry, node) : NULL;
}

bool net_numeric_host(const char *host, struct sockaddr_storage *addr, socklen_t *len)
{
    struct sockaddr_in *in4 = (struct sockaddr_in *)addr;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)addr;
    memset(addr, 0, sizeof *addr);
    if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
        in4->sin_family = AF_INET;
        *len = sizeof *in4;
        return true;
    }
    if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        *len = sizeof *in6;
        return true;
    }
    return false;
}

/* getaddrinfo; of the results the first IPv4 address wins, else the first IPv6. */
int net_resolve_name(const char *host, struct sockaddr_storage *addr, socklen_t *len, char *err,
                     size_t errlen)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    int rc = getaddrinfo(host, NULL, &hints, &res);
    if (rc != 0) {
        snprintf(err, errlen, "cannot resolve host '%s': %s", host,
                 rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
        return -1;
    }
    const struct addrinfo *pick = NULL;
    for (const struct addrinfo *a = res; a; a = a->ai_next) {
        if (a->ai_family == AF_INET) {
            pick = a;
            break;
        }
        if (a->ai_family == AF_INET6 && !pick)
            pick = a;
    }
    rc = -1;
    if (pick && pick->ai_addrlen <= sizeof *addr) {
        memset(addr, 0, sizeof *addr);
        memcpy(addr, pick->ai_addr, pick->ai_addrlen);
        *len = pick->ai_addrlen;
        rc = 0;
    } else {
        snprintf(err, errlen, "cannot resolve host '%s': no IPv4 or IPv6 address", host);
    }
    freeaddrinfo(res);
    return rc;
}

static struct entry *add_entry(resolver *r, const char *host)
{
    struct entry *e = xcalloc(1, sizeof *e);
    e->host = xstrdup(host);
    if (!net_numeric_host(host, &e->addr, &e->len)) {
        char err[512];
        r->lookups++;
        if (net_resolve_name(host, &e->addr, &e->len, err, sizeof err) < 0)
            e->error = xstrdup(err);
    }
    strmap_add(&r->hosts, &e->node, e->host);
    return e;
}

void net_set_port(struct sockaddr_storage *addr, int port)
{
    if (addr->ss_family == AF_INET)
        ((struct sockaddr_in *)addr)->sin_port = htons((uint16_t)port);
    else
        ((struct sockaddr_in6 *)addr)->sin6_port = htons((uint16_t)port);
}

int resolver_lookup(resolver *r, const char *host, int port, struct sockaddr_storage *addr,
                    socklen_t *len, char *err, size_t errlen)
{
    const char *why = NULL;
    if (!r || !host || !addr || !len)
        why = "bad arguments";
    else if (!*host)
        why = "empty host name";
    else if (port < 0 || port > 65535)
        why = "port out of range";
    if (why) {
        if (err && errlen)
            snprintf(err, errlen, "cannot resolve host '%s': %s", host ? host : "", why);
        return -1;
    }
    struct entry *e = find(r, host);
    if (!e)
        e = add_entry(r, host);
    if (e->error) {
        if (err && errlen)
            snprintf(err, errlen, "%s", e->error);
        return -1;
    }
    memcpy(addr, &e->addr, sizeof *addr);
    net_set_port(addr, port);
    *len = e->len;
    return 0;
}

/* ---- connecting ----------------------------------------------------------------- */

int net_socket(int family)
{
    return socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
}

bool net_out_of_fds(int err)
{
    return err == EMFILE || err == ENFILE;
}

unsigned net_fd_backoff(unsigned *ms)
{
    *ms = *ms == 0 ? 10 : *ms >= 500 ? 1000 : *ms * 2;
    return *ms;
}

int net_connect(int fd, const struct sockaddr *addr, socklen_t len)
{
    if (!addr || len == 0) {
        errno = EINVAL;
        return -1;
    }
    if (connect(fd, addr, len) == 0)
        return 1;
    /* EINTR on a non-blocking connect: it goes on in the background like EINPROGRESS. */
    if (errno != EINPROGRESS && errno != EINTR)
        return -1;
    /* "In progress" may already be out of date: on loopback the kernel runs the whole
     * handshake inside connect(). One poll that does not wait tells; writable with no
     * error or hang-up means connected, and the caller can send at once instead of
     * going round the event loop first. */
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    return poll(&p, 1, 0) == 1 && p.revents == POLLOUT ? 1 : 0;
}

int net_connect_start(const struct sockaddr *addr, socklen_t len, bool *connected)
{
    if (!addr || len == 0) {
        errno = EINVAL;
        return -1;
    }
    int fd = net_socket(addr->sa_family);
    if (fd < 0)
        return -1;
    int r = net_connect(fd, addr, len);
    if (r < 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    if (connected)
        *connected = r == 1;
    return fd;
}

int net_connect_result(int fd)
{
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
        return errno;
    return err;
}

/* The ceiling when the hard limit is "unlimited": the kernel's nr_open, else 2^20. */
static rlim_t nofile_ceiling(void)
{
    rlim_t v = 1048576;
    FILE *f = fopen("/proc/sys/fs/nr_open", "re");
    if (f) {
        unsigned long n;
        if (fscanf(f, "%lu", &n) == 1 && n > 0)
            v = (rlim_t)n;
        fclose(f);
    }
    return v;
}

long net_fd_budget(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return -1;
    rlim_t limit = rl.rlim_cur == RLIM_INFINITY ? nofile_ceiling() : rl.rlim_cur;
    return limit > NET_FD_RESERVE + 1 ? (long)(limit - NET_FD_RESERVE) : 1;
}

long net_raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return -1;
    rlim_t want = rl.rlim_max == RLIM_INFINITY ? nofile_ceiling() : rl.rlim_max;
    if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= want)
        return rl.rlim_cur == RLIM_INFINITY ? (long)want : (long)rl.rlim_cur;
    struct rlimit nrl = {want, rl.rlim_max};
    if (setrlimit(RLIMIT_NOFILE, &nrl) == 0)
        rl.rlim_cur = want;
    return (long)rl.rlim_cur;
}
