/* redisglue.h — hiredis's asynchronous API driven by our selector, as curlglue.c drives
 * libcurl: one connection to one Redis server, commands sent without waiting, each
 * reply handed to its callback when it arrives.
 *
 *   redis_glue *g = redis_glue_connect(loop, "127.0.0.1", 6379, 5000, err, sizeof err);
 *   redis_glue_on_error(g, lost, ctx);                 // once, when the connection fails
 *   redis_glue_command(g, got, ctx, "INCR %s", key);   // got(g, reply, ctx) later
 *   selector_run(loop);
 *   redis_glue_free(g);
 *
 * hiredis asks its event library for five things (redisAsyncContext.ev): start and stop
 * watching the socket for reading (addRead/delRead) and writing (addWrite/delWrite),
 * and forget it (cleanup). Here they become selector_register/modify/unregister on one
 * descriptor. The hiredis of Debian 12 (0.14) has no timer hook (later versions ask
 * for one with scheduleTimer to time commands out); the glue keeps that timer itself:
 * when timeout_ms pass with a command (or the connect) unanswered and nothing heard
 * from the server, the connection fails with "no answer in N ms".
 *
 * Every command's callback runs exactly once: with the reply (which may be an error
 * reply, REDIS_REPLY_ERROR, for a command the server refused), or with NULL when the
 * connection failed or was closed first. The reply belongs to hiredis and is freed when
 * the callback returns.
 *
 * When the connection fails — refused, lost, timed out, the server closed it — every
 * command still waiting gets NULL, and the function set with redis_glue_on_error is
 * called once, on a later turn of the loop, with one line ("redis 127.0.0.1:6379:
 * Connection refused"); redis_glue_error gives the same line from then on, and new
 * commands are refused. A callback may free the glue (redis_glue_free) at any time,
 * from any callback, its own reply's included.
 *
 * Allocation: hiredis 0.14 allocates with its own hi_malloc, which aborts on out of
 * memory (its HIREDIS_OOM_HANDLER) — the same policy as alloc.h, though not its
 * one-line message.
 */
#ifndef CRAWL_REDISGLUE_H
#define CRAWL_REDISGLUE_H

#include <stddef.h>

#include <hiredis/hiredis.h>

#include "selector.h"

typedef struct redis_glue redis_glue;
typedef void (*redis_reply_fn)(redis_glue *g, redisReply *reply, void *data);
typedef void (*redis_error_fn)(redis_glue *g, const char *msg, void *data);

/* Start connecting to host:port (host: an address or a name, resolved here, at once).
 * timeout_ms > 0 bounds every wait for the server (connect, each answer); 0 waits
 * forever. Returns the glue, or NULL with one line in err when the connection cannot
 * even be started (a bad address, no socket). A refused connection is reported later,
 * through redis_glue_on_error. */
redis_glue *redis_glue_connect(selector *s, const char *host, int port, int timeout_ms, char *err,
                               size_t errlen);
/* Close the connection (commands still waiting get NULL) and free the glue. */
void redis_glue_free(redis_glue *g);
void redis_glue_on_error(redis_glue *g, redis_error_fn fn, void *data);

/* Queue a command (hiredis's printf-like format — %s a string, %b a binary string and
 * its length, %d, ...: redisvFormatCommand; not printf's, so not checked by gcc) or an argument
 * vector. Returns 0, or -1
 * when the connection has failed or the command cannot be formatted (fn is not
 * called then). */
int redis_glue_command(redis_glue *g, redis_reply_fn fn, void *data, const char *fmt, ...);
int redis_glue_argv(redis_glue *g, redis_reply_fn fn, void *data, int argc, const char **argv,
                    const size_t *argvlen);

/* The most a reply may take: its objects' bytes (strings, element arrays, hiredis's
 * per-object header) and, while a bulk string arrives, the bytes buffered for it. A
 * server answering "$999999999999" and streaming, or "*2000000000", fails the
 * connection ("a reply of more than N bytes") instead of taking the machine's memory.
 * The default is far above any reply the crawler asks for (the largest, XREADGROUP,
 * holds at most --max-tasks entries) and below Redis's own proto-max-bulk-len. */
#define REDIS_GLUE_MAX_REPLY ((size_t)256 << 20)
void redis_glue_set_max_reply(redis_glue *g, size_t bytes);

/* The connection's failure as one line, or NULL while it is fine. */
const char *redis_glue_error(const redis_glue *g);
/* Commands sent and not answered yet. */
size_t redis_glue_pending(const redis_glue *g);
/* "host:port", for messages. */
const char *redis_glue_peer(const redis_glue *g);
/* The connection is established (the connect has completed). */
int redis_glue_connected(const redis_glue *g);

#endif
