/* net.h — the socket plumbing under the raw transport.
 *
 * Name resolution is getaddrinfo, once per host:port, cached. getaddrinfo blocks the
 * whole loop while the resolver works; asyncio and Scrapy move it to a thread pool
 * (loop.getaddrinfo / Twisted's threaded resolver). With one lookup per host that
 * cost is paid once per site, so we keep it simple and say so.
 */
#ifndef CRAWL_NET_H
#define CRAWL_NET_H

#include <stdbool.h>
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

/* The parts, uncached (the threaded resolver, dns.h, uses them too). A numeric
 * IPv4 or IPv6 address: fills *addr (port 0) and *len, true; else false. */
bool net_numeric_host(const char *host, struct sockaddr_storage *addr, socklen_t *len);
/* getaddrinfo: the first IPv4 address, else the first IPv6 (port 0). Returns 0, or -1
 * with "cannot resolve host 'x': ..." in err. Blocks; safe on any thread. */
int net_resolve_name(const char *host, struct sockaddr_storage *addr, socklen_t *len, char *err,
                     size_t errlen);
/* Write port into an IPv4 or IPv6 address. */
void net_set_port(struct sockaddr_storage *addr, int port);

/* How much one recv asks for. The chapter reads 4 KB at a time; a page of a few KB then
 * takes two or three trips through the loop (each behind every other socket that is
 * ready), where 64 KB takes the whole of a typical page, and the parser sees its end
 * (Content-Length) in the same call. */
#define NET_READ_CHUNK 65536

/* A new non-blocking, close-on-exec TCP socket of this address family, or -1 with
 * errno set: EMFILE or ENFILE when out of descriptors (net_out_of_fds). */
int net_socket(int family);
/* Start connecting non-blocking socket fd. Returns 1 when it is connected already
 * (connect() returned 0, or, as on loopback, the handshake finished inside it: send at
 * once), 0 when still in progress (wait for writability, then check
 * net_connect_result), -1 with errno set when it failed at once. */
int net_connect(int fd, const struct sockaddr *addr, socklen_t len);
/* Both: returns the new fd, and sets *connected (when not NULL) to whether it is
 * connected already; or -1 with errno set (EMFILE/ENFILE when out of descriptors). */
int net_connect_start(const struct sockaddr *addr, socklen_t len, bool *connected);
/* EMFILE (this process's open-file limit) or ENFILE (the system's): no descriptor is
 * free now. Not the URL's fault: wait for other fetches to close theirs, try again. */
bool net_out_of_fds(int err);
/* The next wait before trying again for a descriptor, in ms: 10, doubling up to 1000.
 * *ms holds the previous wait; set it to 0 after a success to start again at 10. */
unsigned net_fd_backoff(unsigned *ms);
/* After writability: 0 if connected, else the errno of the failed connect (SO_ERROR). */
int net_connect_result(int fd);
/* Raise the soft limit on open files to the hard limit. Returns the new soft limit. */
long net_raise_nofile(void);

/* Descriptors the process keeps for itself besides its fetches: stdio, the selector,
 * the --output and --trace-events files, libcurl's own. */
#define NET_FD_RESERVE 32
/* How many fetches can hold a descriptor each at once: the open-file limit (soft) less
 * NET_FD_RESERVE, at least 1; -1 when the limit cannot be read. */
long net_fd_budget(void);

#endif
