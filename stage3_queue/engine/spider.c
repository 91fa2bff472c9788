/* spider.c — a spider's outputs (spider.h): requests and items, and the error. */
#include "spider.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "url.h"

static spider_output *push(spider_outputs *out)
{
    if (out->n == out->cap) {
        out->cap = out->cap ? 2 * out->cap : 16;
        out->v = xreallocarray(out->v, out->cap, sizeof *out->v);
    }
    spider_output *o = &out->v[out->n++];
    memset(o, 0, sizeof *o);
    return o;
}

void spider_emit_request(spider_outputs *out, request *req)
{
    spider_output *o = push(out);
    o->kind = SPIDER_REQUEST;
    o->request = req;
}

void spider_emit_item(spider_outputs *out, const char *json)
{
    spider_output *o = push(out);
    o->kind = SPIDER_ITEM;
    o->item = xstrdup(json);
}

bool spider_follow(spider_outputs *out, const spider_response *resp, const char *url,
                   const char *callback)
{
    char *abs = url_resolve(resp->request->url, url);
    bool web = abs && (strncmp(abs, "http://", 7) == 0 || strncmp(abs, "https://", 8) == 0);
    if (web) {
        crawl_request cr = {abs, resp->max_redirect, resp->request->depth + 1, resp->request->url,
                            callback};
        spider_emit_request(out, request_from(&cr, 0));
    }
    free(abs);
    return web;
}

void spider_fail(spider_outputs *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *why = xvasprintf(fmt, ap);
    va_end(ap);
    free(out->error);
    out->error = why;
}

void spider_recover(spider_outputs *out)
{
    free(out->error);
    out->error = NULL;
}

static void output_free(spider_output *o)
{
    request_free(o->request);
    free(o->item);
}

void spider_drop(spider_outputs *out, size_t i)
{
    if (i >= out->n)
        return;
    output_free(&out->v[i]);
    memmove(&out->v[i], &out->v[i + 1], (out->n - i - 1) * sizeof *out->v);
    out->n--;
}

void spider_prepend(spider_outputs *out, spider_outputs *front)
{
    if (front->n == 0)
        return;
    size_t n = out->n + front->n;
    if (n > out->cap) {
        out->cap = n;
        out->v = xreallocarray(out->v, out->cap, sizeof *out->v);
    }
    memmove(&out->v[front->n], out->v, out->n * sizeof *out->v);
    memcpy(out->v, front->v, front->n * sizeof *out->v);
    out->n = n;
    front->n = 0;
}

void spider_outputs_clear(spider_outputs *out)
{
    for (size_t i = 0; i < out->n; i++)
        output_free(&out->v[i]);
    free(out->v);
    free(out->error);
    memset(out, 0, sizeof *out);
}

void spider_follow_links(spider_outputs *out, const spider_response *resp)
{
    const request *req = resp->request;
    for (size_t i = 0; i < resp->nlinks; i++) {
        const char *url = resp->links[i].url;
        if (!resp->links[i].allowed) {
            if (resp->crawl) /* offsite, excluded, or not http(s) */
                crawl_skip(resp->crawl, url, crawl_disallowed_reason(resp->crawl, url), req->url);
            continue;
        }
        crawl_request cr = {resp->links[i].url, resp->max_redirect, req->depth + 1, req->url, NULL};
        spider_emit_request(out, request_from(&cr, 0));
    }
}

static coro *default_parse(void *self, const spider_response *resp, spider_outputs *out)
{
    (void)self;
    spider_follow_links(out, resp);
    return NULL;
}

spider spider_default(void)
{
    return (spider){.name = "follow links", .parse = default_parse};
}

bool spider_is_default(const spider *s)
{
    return s->parse == default_parse;
}
