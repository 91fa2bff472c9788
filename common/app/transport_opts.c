/* transport_opts.c — the curl transport's proxy and cookies, the raw transport's
 * refusal of proxy variables (transport_opts.h). */
#include "transport_opts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "cookiejar.h"
#include "log.h"
#include "url.h"

int transport_refuse_proxy_vars(const app *a)
{
    static const char *const vars[] = {"http_proxy", "all_proxy", "ALL_PROXY", NULL};
    const char *no = getenv("no_proxy") ? getenv("no_proxy") : getenv("NO_PROXY");
    if (!a->raw || (no && strcmp(no, "*") == 0))
        return 0;
    for (size_t i = 0; vars[i]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v) {
            fprintf(stderr,
                    "%s: %s is set, and the raw transport cannot go through a proxy: unset "
                    "it (or set no_proxy='*'), or use --transport curl\n",
                    a->prog, vars[i]);
            return -1;
        }
    }
    return 0;
}

static int add_line(void *ctx, const char *line)
{
    return curl_glue_add_cookie(ctx, line);
}

/* --cookie NAME=VALUE: one cookie per distinct host of the roots. */
static int add_root_cookies(app *a)
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
        for (size_t k = 0; k < o->ncookies && rc == 0; k++) {
            char *line = cookiejar_host_line(hosts[j], o->cookies[k]);
            if (curl_glue_add_cookie(a->curl, line) < 0) {
                fprintf(stderr, "%s: --cookie '%s': libcurl refused it for %s\n", a->prog,
                        o->cookies[k], hosts[j]);
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

int transport_configure(app *a)
{
    const crawl_options *o = &a->opt;
    if (!a->curl)
        return 0;
    if (o->proxy)
        curl_glue_set_proxy(a->curl, o->proxy);
    if (!o->cookie_file && o->ncookies == 0)
        return 0;
    curl_glue_use_cookies(a->curl);
    if (o->cookie_file) {
        char err[1024];
        long n = cookiejar_read(o->cookie_file, add_line, a->curl, err, sizeof err);
        if (n < 0) {
            fprintf(stderr, "%s: %s\n", a->prog, err);
            return -1;
        }
        log_info("%s: --cookies '%s': %ld cookie(s) read", a->prog, o->cookie_file, n);
    }
    return add_root_cookies(a);
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

int transport_save_cookies(app *a)
{
    if (!a->curl || !a->opt.cookie_file)
        return 0;
    lines l = {0};
    curl_glue_cookies(a->curl, collect, &l);
    char err[1024];
    int rc = cookiejar_write(a->opt.cookie_file, (const char *const *)l.v, l.n, err, sizeof err);
    if (rc < 0)
        fprintf(stderr, "%s: %s\n", a->prog, err);
    else
        log_info("%s: --cookies '%s': %zu cookie(s) written", a->prog, a->opt.cookie_file, l.n);
    for (size_t i = 0; i < l.n; i++)
        free(l.v[i]);
    free(l.v);
    return rc;
}
