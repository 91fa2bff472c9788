/* referer.c — the Referer header middleware (referer.h). It answers at once. */
#include "referer.h"
#include "extension.h"

#include <stdbool.h>
#include <string.h>

/* no-referrer-when-downgrade: a referrer, unless it is https and the URL is not. */
static coro *process_request(void *self, request *req, mw_result *out)
{
    (void)self;
    const char *from = req->referrer;
    bool downgrade =
        from && strncmp(from, "https://", 8) == 0 && strncmp(req->url, "https://", 8) != 0;
    if (from && !downgrade && !request_header(req, "Referer"))
        request_add_header(req, "Referer", from);
    mw_continue(out);
    return NULL;
}

downloader_middleware referer_header_middleware(engine *e)
{
    (void)e;
    return (downloader_middleware){.name = "referer", .process_request = process_request};
}

/* ---- the descriptor (extension.h) ---- */

static bool on(const settings *s)
{
    return s->referrer;
}

static int make(engine *e, const settings *s, downloader_middleware *out, char *err, size_t errlen)
{
    (void)s, (void)err, (void)errlen;
    *out = referer_header_middleware(e);
    return 0;
}

/* The descriptor (extension.h): unless --chapter; order 570, after --header,
 * whose Referer would be the user's own. */
const extension referer_extension = {"referer", EXT_DOWNLOADER_MW, 570, on,
                                     .make_middleware = make};
