/* headers.c — the default-headers downloader middleware (headers.h), after Scrapy's
 * DefaultHeadersMiddleware: process_request gives the request each header it lacks
 * (Scrapy's headers.setdefault) and lets the chain go on. It answers at once — no
 * coroutine, nothing to wait for — and it has no other method.
 */
#include "headers.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "http.h"
#include "extension.h"

typedef struct headers {
    header *fields; /* name and value each, as the request will send them */
    size_t n;
} headers;

static coro *process_request(void *self, request *req, mw_result *out)
{
    const headers *mw = self;
    for (size_t i = 0; i < mw->n; i++)
        if (!request_header(req, mw->fields[i].name))
            request_add_header(req, mw->fields[i].name, mw->fields[i].value);
    mw_continue(out);
    return NULL;
}

static void headers_free(void *self)
{
    headers *mw = self;
    for (size_t i = 0; i < mw->n; i++) {
        free(mw->fields[i].name);
        free(mw->fields[i].value);
    }
    free(mw->fields);
    free(mw);
}

/* "Name:  value " -> {"Name", "value"}: the spaces around a value are not part of it
 * (RFC 9110, 5.5). */
static header split_field(const char *field)
{
    size_t n = http_field_name_len(field);
    const char *v = field + n + 1;
    v += strspn(v, " \t");
    size_t len = strlen(v);
    while (len > 0 && (v[len - 1] == ' ' || v[len - 1] == '\t'))
        len--;
    return (header){xstrndup(field, n), xstrndup(v, len)};
}

downloader_middleware headers_middleware(const char *const *fields, size_t n)
{
    headers *mw = xcalloc(1, sizeof *mw);
    mw->fields = xcalloc(n ? n : 1, sizeof *mw->fields);
    for (mw->n = 0; mw->n < n; mw->n++)
        mw->fields[mw->n] = split_field(fields[mw->n]);
    return (downloader_middleware){.name = "headers",
                                   .self = mw,
                                   .all_requests = true,
                                   .process_request = process_request,
                                   .free = headers_free};
}

/* ---- the descriptor (extension.h) ---- */

static bool on(const settings *s)
{
    return s->header.n > 0;
}

/* Each field checked by the command line. */
static int make(engine *e, const settings *s, downloader_middleware *out, char *err, size_t errlen)
{
    (void)e, (void)err, (void)errlen;
    *out = headers_middleware(s->header.v, s->header.n);
    return 0;
}

/* The descriptor (extension.h): --header, order 550. */
const extension headers_extension = {"headers", EXT_DOWNLOADER_MW, 550, on,
                                     .make_middleware = make};
