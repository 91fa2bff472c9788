/* digest.h — HTTP digest access authentication, the server's side (RFC 7616; MD5,
 * qop=auth): the challenge a page with digest=USER:PASSWORD sends, and the check of a
 * request's answer to it. */
#ifndef TESTSITE_DIGEST_H
#define TESTSITE_DIGEST_H

#include <stdbool.h>

#define DIGEST_REALM "testsite"

/* This server's nonce (32 hex digits, random, made once). */
const char *digest_nonce(void);
/* "WWW-Authenticate: Digest realm=..., qop=\"auth\", algorithm=MD5, nonce=..."
 * (malloc'd). */
char *digest_challenge(void);
/* Whether authorization (the request's Authorization value, or NULL) is a digest
 * answer to this server's nonce for userpass ("USER:PASSWORD"), method and uri (the
 * request target as sent). */
bool digest_check(const char *authorization, const char *userpass, const char *method,
                  const char *uri);

#endif
