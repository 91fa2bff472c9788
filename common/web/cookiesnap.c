/* cookiesnap.c — the jar's cookies of a host before a response head, put back when the
 * head is refused (cookiesnap.h). */
#include "cookiesnap.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"

/* Field k (0-based, tab-separated) of a jar line: its start, its length in *len. */
static const char *field(const char *line, int k, size_t *len)
{
    if (strncmp(line, "#HttpOnly_", 10) == 0)
        line += 10;
    for (; k > 0; k--) {
        const char *tab = strchr(line, '\t');
        if (!tab)
            return NULL;
        line = tab + 1;
    }
    *len = strcspn(line, "\t");
    return line;
}

int cookie_snap_line_matches(const char *line, const char *host, const char **name, size_t *nlen)
{
    size_t dlen, hlen = strlen(host);
    const char *d = field(line, 0, &dlen);
    if (!d || !(*name = field(line, 5, nlen)))
        return 0;
    if (dlen > 0 && d[0] == '.')
        d++, dlen--;
    if (dlen == 0 || dlen > hlen || strncasecmp(host + hlen - dlen, d, dlen) != 0)
        return 0;
    return dlen == hlen || host[hlen - dlen - 1] == '.';
}

static bool has_name(const cookie_snap *s, const char *name, size_t len)
{
    for (size_t i = 0; i < s->nnames; i++)
        if (strlen(s->names[i]) == len && memcmp(s->names[i], name, len) == 0)
            return true;
    return false;
}

static bool has_line(char *const *lines, size_t n, const char *line)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(lines[i], line) == 0)
            return true;
    return false;
}

static void free_lines(char **lines, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(lines[i]);
    free(lines);
}

/* The jar's lines (through jar) for host, copied; *n of them. */
static char **host_lines(CURL *jar, const char *host, size_t *n)
{
    struct curl_slist *list = NULL;
    char **out = NULL;
    *n = 0;
    if (curl_easy_getinfo(jar, CURLINFO_COOKIELIST, &list) != CURLE_OK)
        return NULL;
    for (struct curl_slist *l = list; l; l = l->next) {
        const char *name;
        size_t nlen;
        if (!cookie_snap_line_matches(l->data, host, &name, &nlen))
            continue;
        out = xreallocarray(out, *n + 1, sizeof *out);
        out[(*n)++] = xstrdup(l->data);
    }
    curl_slist_free_all(list);
    return out;
}

/* The host of url, lower case, malloc'd; NULL if it has none. */
static char *host_of(const char *url)
{
    CURLU *u = curl_url();
    char *h = NULL, *out = NULL;
    if (u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK
        && curl_url_get(u, CURLUPART_HOST, &h, 0) == CURLUE_OK && h) {
        out = xstrdup(h);
        for (char *c = out; *c; c++)
            *c = (char)tolower((unsigned char)*c);
    }
    curl_free(h);
    curl_url_cleanup(u);
    return out;
}

void cookie_snap_take(cookie_snap *s, CURL *jar, const char *url)
{
    cookie_snap_clear(s);
    if (!url || !(s->host = host_of(url)))
        return;
    s->lines = host_lines(jar, s->host, &s->n);
}

void cookie_snap_saw(cookie_snap *s, const char *line, size_t len)
{
    static const char set[] = "Set-Cookie:";
    if (!s->host || len < sizeof set - 1 || strncasecmp(line, set, sizeof set - 1) != 0)
        return;
    size_t i = sizeof set - 1;
    while (i < len && (line[i] == ' ' || line[i] == '\t'))
        i++;
    size_t end = i;
    while (end < len && line[end] != '=' && line[end] != ';' && line[end] != '\r'
           && line[end] != '\n')
        end++;
    while (end > i && (line[end - 1] == ' ' || line[end - 1] == '\t'))
        end--;
    if (has_name(s, line + i, end - i))
        return;
    s->names = xreallocarray(s->names, s->nnames + 1, sizeof *s->names);
    s->names[s->nnames++] = xstrndup(line + i, end - i);
}

/* line with its expiry (field 4) set to 1, long past: libcurl drops the cookie. */
static char *expired(const char *line)
{
    size_t len;
    const char *e = field(line, 4, &len);
    if (!e)
        return NULL;
    return xasprintf("%.*s1%s", (int)(e - line), line, e + len);
}

void cookie_snap_undo(cookie_snap *s, CURL *jar)
{
    if (!s->host || s->nnames == 0)
        return;
    size_t n;
    char **now = host_lines(jar, s->host, &n);
    for (size_t i = 0; i < n; i++) { /* added or changed by the head */
        const char *name;
        size_t nlen;
        if (!cookie_snap_line_matches(now[i], s->host, &name, &nlen) || !has_name(s, name, nlen)
            || has_line(s->lines, s->n, now[i]))
            continue;
        char *gone = expired(now[i]);
        if (gone)
            curl_easy_setopt(jar, CURLOPT_COOKIELIST, gone);
        free(gone);
    }
    for (size_t i = 0; i < s->n; i++) { /* replaced by it: back */
        const char *name;
        size_t nlen;
        if (cookie_snap_line_matches(s->lines[i], s->host, &name, &nlen) && has_name(s, name, nlen)
            && !has_line(now, n, s->lines[i]))
            curl_easy_setopt(jar, CURLOPT_COOKIELIST, s->lines[i]);
    }
    free_lines(now, n);
}

void cookie_snap_clear(cookie_snap *s)
{
    free(s->host);
    free_lines(s->lines, s->n);
    free_lines(s->names, s->nnames);
    *s = (cookie_snap){0};
}

bool cookie_snap_expired(const char *line, time_t now)
{
    size_t len;
    const char *e = field(line, 4, &len);
    if (!e || len == 0 || len > 20)
        return false;
    char num[24];
    memcpy(num, e, len);
    num[len] = '\0';
    long long t = strtoll(num, NULL, 10);
    return t > 0 && t < (long long)now;
}
