/* session.c — crawl-queue's proxy, logins and cookies on the curl transport
 * (session.h). */
#include "session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "cookiejar.h"
#include "log.h"
#include "settings.h"
#include "url.h"

static int add_line(void *ctx, const char *line)
{
    return curl_glue_add_cookie(ctx, line);
}

/* --cookie NAME=VALUE: one cookie per distinct host of the roots. */
static int add_root_cookies(app *a, const settings *s)
{
    const crawl_options *o = &a->opt;
    char **hosts = xcalloc((size_t)o->nroots + 1, sizeof *hosts);
    size_t nhosts = 0;
    int rc = 0;
    for (int i = 0; i < o->nroots; i++) {
        char err[256], *scheme = NULL, *host = NULL, *pq = NULL;
        int port = 0;
        char *fixed = url_fix(o->roots[i], err, sizeof err);
        if (fixed && url_split(fixed, &scheme, &host, &port, &pq) == 0) {
            size_t j = 0;
            while (j < nhosts && strcmp(hosts[j], host) != 0)
                j++;
            if (j == nhosts)
                hosts[nhosts++] = xstrdup(host);
        }
        free(fixed);
        free(scheme);
        free(host);
        free(pq);
    }
    for (size_t j = 0; j < nhosts && rc == 0; j++) {
        for (size_t k = 0; k < s->cookie.n && rc == 0; k++) {
            char *line = cookiejar_host_line(hosts[j], s->cookie.v[k]);
            if (curl_glue_add_cookie(a->curl, line) < 0) {
                fprintf(stderr, "%s: --cookie '%s': libcurl refused it for %s\n", a->prog,
                        s->cookie.v[k], hosts[j]);
                rc = -1;
            }
            free(line);
        }
    }
    for (size_t j = 0; j < nhosts; j++)
        free(hosts[j]);
    free(hosts);
    return rc;
}

/* --user, --netrc: for the roots' origins (as url_fix gives them) only. */
static void set_auth(app *a, const settings *s)
{
    const crawl_options *o = &a->opt;
    char **roots = xcalloc((size_t)o->nroots + 1, sizeof *roots);
    size_t n = 0;
    for (int i = 0; i < o->nroots; i++) {
        char err[256];
        char *fixed = url_fix(o->roots[i], err, sizeof err);
        if (fixed)
            roots[n++] = fixed;
    }
    curl_glue_set_auth(a->curl, s->user, s->netrc, (const char *const *)roots, n);
    for (size_t i = 0; i < n; i++)
        free(roots[i]);
    free(roots);
}

int session_open(app *a)
{
    const settings *s = settings_of(a);
    if (!a->curl)
        return 0;
    if (s->proxy)
        curl_glue_set_proxy(a->curl, s->proxy);
    if (s->user || s->netrc)
        set_auth(a, s);
    if (!s->cookie_file && s->cookie.n == 0)
        return 0;
    curl_glue_use_cookies(a->curl);
    if (s->cookie_file) {
        char err[1024];
        long n = cookiejar_read(s->cookie_file, add_line, a->curl, err, sizeof err);
        if (n < 0) {
            fprintf(stderr, "%s: --cookies %s\n", a->prog, err);
            return -1;
        }
        log_info("%s: --cookies '%s': %ld cookie(s) read", a->prog, s->cookie_file, n);
    }
    return add_root_cookies(a, s);
}

typedef struct {
    char **v;
    size_t n, cap;
} lines;

static void collect(void *ctx, const char *line)
{
    lines *l = ctx;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->v = xreallocarray(l->v, l->cap, sizeof *l->v);
    }
    l->v[l->n++] = xstrdup(line);
}

int session_close(app *a)
{
    const char *file = settings_of(a)->cookie_file;
    if (!a->curl || !file)
        return 0;
    lines l = {0};
    curl_glue_cookies(a->curl, collect, &l);
    char err[1024];
    int rc = cookiejar_write(file, (const char *const *)l.v, l.n, err, sizeof err);
    if (rc < 0)
        fprintf(stderr, "%s: --cookies %s\n", a->prog, err);
    else
        log_info("%s: --cookies '%s': %zu cookie(s) written", a->prog, file, l.n);
    for (size_t i = 0; i < l.n; i++)
        free(l.v[i]);
    free(l.v);
    return rc;
}
