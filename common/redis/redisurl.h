/* redisurl.h — a Redis server's URL, redis://[[USER:]PASSWORD@]HOST[:PORT]/NAME, split,
 * and shown without its password.
 *
 * As redis-cli reads it: "redis://secret@h/n" and "redis://:secret@h/n" give the
 * password (AUTH secret); "redis://user:secret@h/n" an ACL user and its password (AUTH
 * user secret). USER and PASSWORD may be percent-encoded ("%40" for '@'). No hiredis
 * here (a library of its own, crawl_redisurl): the command line checks the URL with it,
 * in every crawler, at parse time.
 *
 * A password never appears in a message: every error quotes the URL as
 * redis_url_shown gives it ("redis://user:***@h/n").
 */
#ifndef CRAWL_REDISURL_H
#define CRAWL_REDISURL_H

#include <stdbool.h>
#include <stddef.h>

typedef struct redis_url {
    char host[256]; /* an address or a name; [v6] without its brackets */
    int port;       /* 6379 unless given */
    char name[80];  /* the crawl: letters, digits, '-', '_', '.', 1 to 64 */
    bool auth;      /* a password was given: AUTH [user] password */
    char user[256]; /* "": none (the default user) */
    char password[512];
} redis_url;

/* 0, or -1 with one line in err (quoting the URL, its password masked). */
int redis_url_parse(const char *url, redis_url *u, char *err, size_t errlen);
/* url with its password (if any) replaced by "***", in out. */
void redis_url_shown(const char *url, char *out, size_t outlen);
/* Wipe the password from u. */
void redis_url_forget(redis_url *u);

#endif
