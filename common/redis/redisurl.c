/* redisurl.c — see redisurl.h. */
#include "redisurl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where the user information of url starts and its '@' is (NULL: none). Names never
 * hold an '@', so the last one ends the user information, whatever the password
 * holds ('/' included). */
static const char *userinfo(const char *url, const char **start)
{
    const char *scheme = strstr(url, "://");
    *start = scheme ? scheme + 3 : url;
    return strrchr(*start, '@');
}

void redis_url_shown(const char *url, char *out, size_t outlen)
{
    const char *start, *at = userinfo(url, &start);
    if (!at) {
        snprintf(out, outlen, "%s", url);
        return;
    }
    const char *colon = memchr(start, ':', (size_t)(at - start));
    const char *keep = colon ? colon + 1 : start;
    snprintf(out, outlen, "%.*s***%s", (int)(keep - url), url, at);
}

void redis_url_forget(redis_url *u)
{
    explicit_bzero(u->password, sizeof u->password);
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0'
        : c >= 'a' && c <= 'f'  ? c - 'a' + 10
        : c >= 'A' && c <= 'F'  ? c - 'A' + 10
                                : -1;
}

/* [s, e) percent-decoded into out. -1 when it does not fit or has a bad escape. */
static int decode(const char *s, const char *e, char *out, size_t outlen)
{
    size_t n = 0;
    for (; s < e; s++) {
        char c = *s;
        if (c == '%') {
            int hi = e - s >= 3 ? hexval(s[1]) : -1;
            int lo = hi >= 0 ? hexval(s[2]) : -1;
            if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) /* no NUL inside */
                return -1;
            c = (char)(hi * 16 + lo);
            s += 2;
        }
        if (n + 1 >= outlen)
            return -1;
        out[n++] = c;
    }
    out[n] = '\0';
    return 0;
}

static int url_error(char *err, size_t errlen, const char *url, const char *why)
{
    char shown[600];
    redis_url_shown(url, shown, sizeof shown);
    snprintf(err, errlen, "'%s': %s", shown, why);
    return -1;
}

int redis_url_parse(const char *url, redis_url *u, char *err, size_t errlen)
{
    memset(u, 0, sizeof *u);
    if (strncmp(url, "redis://", 8) != 0)
        return url_error(err, errlen, url,
                         "give redis://HOST:PORT/NAME (or "
                         "redis://[USER:]PASSWORD@HOST:PORT/NAME)");
    const char *start, *at = userinfo(url, &start);
    const char *p = start;
    if (at) {
        const char *colon = memchr(start, ':', (size_t)(at - start));
        const char *pw = colon ? colon + 1 : start;
        if (colon && decode(start, colon, u->user, sizeof u->user) < 0)
            return url_error(err, errlen, url,
                             "the user name is too long or has a bad "
                             "%-escape");
        if (decode(pw, at, u->password, sizeof u->password) < 0)
            return url_error(err, errlen, url,
                             "the password is too long or has a bad "
                             "%-escape");
        if (!u->password[0]) {
            redis_url_forget(u);
            return url_error(err, errlen, url,
                             "an empty password (give "
                             "redis://[USER:]PASSWORD@HOST:PORT/NAME)");
        }
        u->auth = true;
        p = at + 1;
    }
    const char *h = p, *he;
    if (*p == '[') {
        h = p + 1;
        he = strchr(h, ']');
        if (!he) {
            redis_url_forget(u);
            return url_error(err, errlen, url, "no ']' after the IPv6 address");
        }
        p = he + 1;
    } else {
        he = p + strcspn(p, ":/");
        p = he;
    }
    if (he == h || (size_t)(he - h) >= sizeof u->host) {
        redis_url_forget(u);
        return url_error(err, errlen, url, he == h ? "no host" : "too long a host");
    }
    memcpy(u->host, h, (size_t)(he - h));
    u->host[he - h] = '\0';
    u->port = 6379;
    if (*p == ':') {
        char *end;
        errno = 0;
        long v = strtol(p + 1, &end, 10);
        if (end == p + 1 || errno || v < 1 || v > 65535) {
            redis_url_forget(u);
            return url_error(err, errlen, url, "the port is not a number in 1..65535");
        }
        u->port = (int)v;
        p = end;
    }
    if (*p != '/' || !p[1]) {
        redis_url_forget(u);
        return url_error(err, errlen, url, "no crawl name (redis://HOST:PORT/NAME)");
    }
    p++;
    size_t n = strlen(p);
    if (n > 64 || n >= sizeof u->name
        || strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") != n) {
        redis_url_forget(u);
        return url_error(err, errlen, url,
                         "the crawl name is 1 to 64 letters, digits, '-', '_' or '.'");
    }
    memcpy(u->name, p, n + 1);
    return 0;
}
