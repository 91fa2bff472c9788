/* digest.c — HTTP digest auth for the test server (digest.h), after RFC 7616 3.4.1:
 * response = MD5(MD5(user:realm:password):nonce:nc:cnonce:qop:MD5(method:uri)). */
#include "digest.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"

/* MD5 of s as 32 lower-case hex digits, in out[33]. */
static void md5_hex(const char *s, char out[33])
{
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    if (!EVP_Digest(s, strlen(s), d, &n, EVP_md5(), NULL) || n != 16) {
        fprintf(stderr, "testsite: MD5 not available\n");
        exit(1);
    }
    for (unsigned i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
}

const char *digest_nonce(void)
{
    static char nonce[33];
    if (!nonce[0]) {
        unsigned char r[16];
        if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) { /* then time and pid */
            long long seed = (long long)time(NULL) ^ ((long long)getpid() << 20);
            for (size_t i = 0; i < sizeof r; i++)
                r[i] = (unsigned char)(seed >> (8 * (i % 8)) ^ (long long)i * 77);
        }
        for (size_t i = 0; i < sizeof r; i++)
            snprintf(nonce + 2 * i, 3, "%02x", r[i]);
    }
    return nonce;
}

char *digest_challenge(void)
{
    return xasprintf("WWW-Authenticate: Digest realm=\"" DIGEST_REALM
                     "\", qop=\"auth\", algorithm=MD5, nonce=\"%s\"",
                     digest_nonce());
}

/* The value of parameter name in a digest answer's list (name=token or
 * name="quoted", commas between), unquoted, in out[size]; false when absent or too
 * long. */
static bool param(const char *list, const char *name, char *out, size_t size)
{
    size_t nlen = strlen(name);
    const char *p = list;
    for (int guard = 0; *p && guard < 64; guard++) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        const char *key = p;
        while (*p && *p != '=' && *p != ',' && *p != ' ')
            p++;
        size_t klen = (size_t)(p - key);
        while (*p == ' ')
            p++;
        if (*p != '=')
            continue;
        p++;
        while (*p == ' ')
            p++;
        size_t n = 0;
        bool fits = true;
        if (*p == '"') {
            for (p++; *p && *p != '"'; p++) {
                if (*p == '\\' && p[1])
                    p++;
                if (n + 1 < size)
                    out[n++] = *p;
                else
                    fits = false;
            }
            if (*p == '"')
                p++;
        } else {
            for (; *p && *p != ',' && *p != ' '; p++) {
                if (n + 1 < size)
                    out[n++] = *p;
                else
                    fits = false;
            }
        }
        out[n] = '\0';
        if (klen == nlen && strncasecmp(key, name, nlen) == 0)
            return fits;
    }
    return false;
}

bool digest_check(const char *authorization, const char *userpass, const char *method,
                  const char *uri)
{
    if (!authorization || strncasecmp(authorization, "Digest ", 7) != 0)
        return false;
    const char *list = authorization + 7;
    char user[256], realm[64], nonce[64], got_uri[4096], nc[16], cnonce[128], qop[16], response[64];
    if (!param(list, "username", user, sizeof user) || !param(list, "realm", realm, sizeof realm)
        || !param(list, "nonce", nonce, sizeof nonce)
        || !param(list, "uri", got_uri, sizeof got_uri) || !param(list, "nc", nc, sizeof nc)
        || !param(list, "cnonce", cnonce, sizeof cnonce) || !param(list, "qop", qop, sizeof qop)
        || !param(list, "response", response, sizeof response))
        return false;
    const char *colon = strchr(userpass, ':');
    if (!colon || strlen(user) != (size_t)(colon - userpass)
        || strncmp(user, userpass, (size_t)(colon - userpass)) != 0
        || strcmp(realm, DIGEST_REALM) != 0 || strcmp(nonce, digest_nonce()) != 0
        || strcmp(got_uri, uri) != 0 || strcmp(qop, "auth") != 0)
        return false;
    char ha1[33], ha2[33], want[33];
    char *s = xasprintf("%s:%s:%s", user, realm, colon + 1);
    md5_hex(s, ha1);
    free(s);
    s = xasprintf("%s:%s", method, uri);
    md5_hex(s, ha2);
    free(s);
    s = xasprintf("%s:%s:%s:%s:%s:%s", ha1, nonce, nc, cnonce, qop, ha2);
    md5_hex(s, want);
    free(s);
    return strcasecmp(response, want) == 0;
}
