/* request.h — parsing one HTTP/1.x request head out of a connection's input buffer. */
#ifndef TESTSITE_REQUEST_H
#define TESTSITE_REQUEST_H

#include <stdbool.h>
#include <stddef.h>

#define REQUEST_MAX_HEAD 65536
#define REQUEST_MAX_BODY 8192 /* a body kept (a form's); a longer one is skipped */

typedef struct request {
    char method[16];
    char *path;              /* malloc'd: the target's path and query ("/a?b") */
    int minor;               /* HTTP/1.<minor> */
    bool keep_alive;         /* whether the connection may stay open afterwards */
    long long body_len;      /* Content-Length of a request body */
    char *body;              /* malloc'd: that body, NUL-terminated, when it is at most
                              * REQUEST_MAX_BODY bytes (conn.c); else NULL (skipped) */
    char *user_agent;        /* malloc'd: the User-Agent header's value, or NULL */
    char *host;              /* malloc'd: the Host header's value, or NULL */
    char *cookie;            /* malloc'd: the Cookie fields' values ("; " between), or NULL */
    char *if_none_match;     /* malloc'd: the If-None-Match values, or NULL */
    char *authorization;     /* malloc'd: the Authorization value, or NULL */
    char *if_modified_since; /* malloc'd: the If-Modified-Since value, or NULL */
} request;

enum {
    REQ_MORE = 0,     /* need more bytes */
    REQ_BAD = -1,     /* malformed: answer 400 and close */
    REQ_TOO_BIG = -2, /* head over REQUEST_MAX_HEAD: answer 431 and close */
    REQ_VERSION = -3, /* not HTTP/1.x: answer 505 and close */
};

/* Look for a complete head at the start of buf. Returns its length (through the empty
 * line) and fills req, or one of the REQ_ codes. Lines may end in CRLF or LF. */
long request_parse(const char *buf, size_t len, request *req);
void request_clear(request *req);
/* The values of every header field named name (case-insensitive) in the head of
 * length len at buf (as request_parse measured it), spaces around each trimmed, joined
 * with ", " (RFC 9110, 5.3); malloc'd, or NULL when there is no such field. */
char *request_field_values(const char *buf, size_t len, const char *name);

#endif
