/* sockio.h — socket coroutines on the shared selector: the chapter's `connect`,
 * `read` and `read_all` (section "Factoring Coroutines With yield from"), plus
 * `write_all`, the send loop the chapter's sketch leaves out, and `getaddrinfo`, the
 * name lookup that stage 3 does in the thread pool.
 *
 * Each returns a new coroutine frame, to be awaited: AWAIT(co, sock_read(fd, t)).
 * deadline_ms is a selector_now_ms() time after which the wait fails with a
 * TimeoutError (0 = no deadline). Errors are OSErrors whose message is the raw
 * transport's one-line text (common/web/rawerr.h), the same words stage 1 records.
 */
#ifndef CRAWL_SOCKIO_H
#define CRAWL_SOCKIO_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "coro.h"
#include "dns.h"
#include "http.h"

/* asyncio.sleep: wait ms milliseconds (a selector timer resolves a Future). */
coro *sock_sleep(uint64_t ms);
/* asyncio's loop.getaddrinfo: host:port through stage 3's threaded resolver (dns.h),
 * into *addr and *len (the caller's, kept until this returns). Raises an OSError whose
 * message is the resolver's line ("cannot resolve host 'x': ...", "DNS lookup of x
 * timed out after N s"). */
coro *sock_getaddrinfo(dns_resolver *dns, const char *host, int port, struct sockaddr_storage *addr,
                       socklen_t *len);
/* Connect non-blocking socket fd (net_socket; the caller keeps it and closes it) to
 * addr; returns {NULL, fd} once connected, at once if the handshake is already done. */
coro *sock_connect(int fd, const struct sockaddr_storage *addr, socklen_t len,
                   uint64_t deadline_ms);
/* Wait until fd is readable and receive one chunk (up to NET_READ_CHUNK, 64 KB);
 * returns {bytes, n},
 * n == 0 at EOF. The bytes stay valid until the coroutine next suspends. */
coro *sock_read(int fd, uint64_t deadline_ms);
/* Send all of buf, waiting for writability whenever the socket buffer is full. */
coro *sock_write_all(int fd, const char *buf, size_t len, uint64_t deadline_ms);
/* Read a whole HTTP response, feeding each chunk to parser as it arrives (the body is
 * never held whole); returns {NULL, total bytes}. Raises the parser's error. */
coro *sock_read_all(int fd, http_parser *parser, uint64_t deadline_ms);
/* The same, but also stop (without error) as soon as full(ctx) is true after a chunk
 * was fed: the caller's sink has all it wants (--max-size). */
coro *sock_read_all_until(int fd, http_parser *parser, uint64_t deadline_ms,
                          bool (*full)(const void *ctx), const void *ctx);

#endif
