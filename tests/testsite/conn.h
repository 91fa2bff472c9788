/* conn.h — one client connection: read a request, answer it (delay, drop, drip, reset,
 * raw), keep the connection alive or close it gracefully; one request at a time, with
 * the early bytes of the next one kept in the input buffer. */
#ifndef TESTSITE_CONN_H
#define TESTSITE_CONN_H

#include "server.h"

/* Take over a freshly accepted, non-blocking socket. */
void conn_accepted(server *srv, int fd);
/* Close one connection immediately. */
void conn_close(struct conn *c);
/* Close every connection of srv (at shutdown). */
void conn_close_all(server *srv);

#endif
