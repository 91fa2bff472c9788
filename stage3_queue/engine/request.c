/* request.c — Request and Response objects; see request.h. */
#include "request.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"
#include "http.h"

request *request_new(const char *url, int max_redirect, unsigned flags)
{
    crawl_request cr = {url, max_redirect, 0, NULL, NULL};
    return request_from(&cr, flags);
}

request *request_from(const crawl_request *cr, unsigned flags)
{
    request *r = xcalloc(1, sizeof *r);
    r->url = xstrdup(cr->url);
    r->max_redirect = cr->max_redirect;
    r->depth = cr->depth;
    r->referrer = cr->referrer ? xstrdup(cr->referrer) : NULL;
    r->callback = cr->callback ? xstrdup(cr->callback) : NULL;
    r->flags = flags;
    return r;
}

crawl_request request_view(const request *r)
{
    return (crawl_request){r->url, r->max_redirect, r->depth, r->referrer, r->callback};
}

request *request_copy(const request *r)
{
    crawl_request cr = request_view(r);
    request *c = request_from(&cr, r->flags);
    if (r->post) {
        c->post = xmalloc(r->post_len + 1);
        memcpy(c->post, r->post, r->post_len + 1);
        c->post_len = r->post_len;
    }
    return c;
}

void request_set_post(request *r, const char *type, const char *body, size_t len)
{
    free(r->post);
    r->post = xmalloc(len + 1);
    memcpy(r->post, body, len);
    r->post[len] = '\0';
    r->post_len = len;
    request_add_header(r, "Content-Type", type);
}

void request_free(request *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->nheaders; i++)
        free(r->headers[i]);
    free(r->headers);
    free(r->url);
    free(r->referrer);
    free(r->callback);
    free(r->post);
    free(r);
}

void request_add_header(request *r, const char *name, const char *value)
{
    r->headers = xreallocarray(r->headers, r->nheaders + 2, sizeof *r->headers);
    r->headers[r->nheaders++] = xasprintf("%s: %s", name, value);
    r->headers[r->nheaders] = NULL;
}

const char *request_header(const request *r, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < r->nheaders; i++)
        if (http_field_name_len(r->headers[i]) == n && strncasecmp(r->headers[i], name, n) == 0)
            return r->headers[i] + n + 2; /* after ": " */
    return NULL;
}

const char *const *request_fields(const request *r)
{
    return (const char *const *)r->headers;
}

response *response_new(const char *url, int status)
{
    response *r = xcalloc(1, sizeof *r);
    r->url = xstrdup(url);
    r->status = status;
    return r;
}

void response_free(response *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->nheaders; i++) {
        free(r->headers[i].name);
        free(r->headers[i].value);
    }
    free(r->headers);
    free(r->body);
    crawl_wire_free(r->wire);
    free(r->stored_at);
    free(r->url);
    free(r);
}

void response_add_header(response *r, const char *name, const char *value)
{
    if (r->nheaders == r->cap_headers) {
        r->cap_headers = r->cap_headers ? 2 * r->cap_headers : 8;
        r->headers = xreallocarray(r->headers, r->cap_headers, sizeof *r->headers);
    }
    r->headers[r->nheaders++] = (header){xstrdup(name), xstrdup(value)};
}

const char *response_header(const response *r, const char *name)
{
    for (size_t i = 0; i < r->nheaders; i++)
        if (strcasecmp(r->headers[i].name, name) == 0)
            return r->headers[i].value;
    return NULL;
}

void response_set_body(response *r, char *body, size_t len)
{
    free(r->body);
    r->body = body;
    r->body_len = len;
}
