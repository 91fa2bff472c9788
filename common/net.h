/* net.h — the socket plumbing under the raw transport of stages 1 and 2.
 *
 * Name resolution is getaddrinfo, once per host:port, cached. getaddrinfo blocks the
 * whole loop while the resolver works; asyncio and Scrapy move it to a thread pool
 * (loop.getaddrinfo / Twisted's threaded resolver). With one lookup per host that
 * cost is paid once per site, so we keep it simple and say so.
 */
#ifndef CRAWL_NET_H
#define CRAWL_NET_H

#include <stddef.h>
#include <sys/socket.h>

typedef struct resolver resolver;

resolver *resolver_new(void);
void resolver_free(resolver *r);
/* Look up host:port (cached, including failures). Returns 0 and fills *addr and *len, or
 * -1 with "cannot resolve host 'x': ..." in err. */
int resolver_lookup(resolver *r, const char *host, int port, struct sockaddr_storage *addr,
                    socklen_t *len, char *err, size_t errlen);
/* How many real getaddrinfo calls this resolver has made (numeric hosts and cache hits
 * make none). */
size_t resolver_lookups(const resolver *r);

/* Create a non-blocking, close-on-exec TCP socket and start connecting it. Returns the
 * fd (the connection may still be in progress: wait for writability, then check
 * net_connect_result), or -1 with errno set (EMFILE when out of descriptors). */
int net_connect_start(const struct sockaddr *addr, socklen_t len);
/* After writability: 0 if connected, else the errno of the failed connect (SO_ERROR). */
int net_connect_result(int fd);
/* Raise the soft limit on open files to the hard limit. Returns the new soft limit. */
long net_raise_nofile(void);

#endif
