/* reply.h — what to answer to one request: routing (/__stats, the generated site, the
 * site file's pages, 404) and the response bytes with the way to send them (delay,
 * drop, drip, reset, close). */
#ifndef TESTSITE_REPLY_H
#define TESTSITE_REPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gen.h"
#include "request.h"
#include "server.h"

typedef struct reply {
    int status;        /* the status line's (0: raw, or none yet) */
    bool counted;      /* a site request (counts in the statistics) */
    bool drop;         /* close the connection without a response */
    bool close;        /* close the connection after the response */
    uint64_t delay_ms; /* wait this long before answering */
    char *head;        /* status line and headers (owned), NULL for raw */
    size_t head_len;
    const char *body; /* body bytes (borrowed or body_owned), unless filler */
    char *body_owned;
    uint64_t body_len; /* bytes of body to send */
    bool filler;       /* the body is gen_fill(fill) bytes */
    gen_fill_kind fill;
    long drip_bytes; /* 0: send as fast as the socket takes it */
    long drip_ms;
    long long reset_after; /* -1, or reset the connection after this many bytes */
} reply;

/* Build the reply to a parsed request. */
void reply_build(server *srv, const request *req, reply *out);
/* A protocol error reply (400, 431, 505), not counted, closing the connection. */
void reply_error(int status, reply *out);
void reply_clear(reply *r);

/* Total bytes of the response (head + body). */
uint64_t reply_total(const reply *r);
/* The response bytes at offset off: returns a pointer, with *avail (> 0) readable
 * bytes there, all part of the response. off must be < reply_total(r). */
const char *reply_bytes(const reply *r, uint64_t off, size_t *avail);

#endif
