/* broken.c — --fail-on-broken's stage (broken.h). It answers at once. */
#include "broken.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "extension.h"

typedef struct broken {
    app *a;
    size_t network, server; /* failures of each kind */
    char **shown;           /* the first BROKEN_SHOWN, as printed */
    size_t nshown;
} broken;

/* A record without a status that is a failure of the host, not a decision of ours. */
static bool network_failure(const char *exception)
{
    static const char ignore[] = "IgnoreRequest: ";
    if (!exception)
        return false;
    if (strncmp(exception, ignore, sizeof ignore - 1) != 0)
        return strncmp(exception, "rescheduled as ", 15) != 0;
    const char *why = exception + sizeof ignore - 1;
    return strncmp(why, "host could not be reached", 25) == 0
        || strncmp(why, "host gave up", 12) == 0;
}

static coro *broken_open(void *self, engine *e)
{
    ((broken *)self)->a = engine_app(e);
    return NULL;
}

static coro *broken_process_item(void *self, item *it, bool *drop)
{
    (void)drop;
    broken *b = self;
    const fetch_stat *r = &it->record;
    bool server = r->status >= 400, network = r->status < 0 && network_failure(r->exception);
    if (!server && !network)
        return NULL;
    b->server += server;
    b->network += network;
    if (b->nshown < BROKEN_SHOWN) {
        const char *from = it->request ? it->request->referrer : NULL;
        char status[16];
        snprintf(status, sizeof status, "%d", r->status);
        b->shown[b->nshown++] =
            xasprintf("  %-6s %s%s%s%s%s", server ? status : "failed", r->url, network ? ": " : "",
                      network ? r->exception : "", from ? "  <- " : "", from ? from : "");
    }
    return NULL;
}

static coro *broken_close(void *self)
{
    broken *b = self;
    if (!b->a || (b->server == 0 && b->network == 0))
        return NULL;
    fprintf(stderr,
            "%s: --fail-on-broken: %zu page(s) answered 4xx or 5xx, %zu fetch(es) failed "
            "on the network%s\n",
            b->a->prog, b->server, b->network,
            b->nshown ? " (status, URL, <- the page that links to it):" : "");
    for (size_t i = 0; i < b->nshown; i++)
        fprintf(stderr, "%s\n", b->shown[i]);
    if (b->server + b->network > b->nshown)
        fprintf(stderr, "  ... and %zu more (the report has every one)\n",
                b->server + b->network - b->nshown);
    b->a->exit_status = b->network ? BROKEN_EXIT_NETWORK : BROKEN_EXIT_SERVER;
    return NULL;
}

static void broken_free(void *self)
{
    broken *b = self;
    for (size_t i = 0; i < b->nshown; i++)
        free(b->shown[i]);
    free(b->shown);
    free(b);
}

item_pipeline broken_pipeline(void)
{
    broken *b = xcalloc(1, sizeof *b);
    b->shown = xcalloc(BROKEN_SHOWN, sizeof *b->shown);
    return (item_pipeline){.name = "broken",
                           .self = b,
                           .open = broken_open,
                           .process_item = broken_process_item,
                           .close = broken_close,
                           .free = broken_free};
}

/* ---- the descriptor (extension.h) ---- */

static bool on(const settings *s)
{
    return s->fail_on_broken;
}

static int make(engine *e, const settings *s, item_pipeline *out, char *err, size_t errlen)
{
    (void)e, (void)s, (void)err, (void)errlen;
    *out = broken_pipeline();
    return 0;
}

/* The descriptor (extension.h): --fail-on-broken, order 900, last. */
const extension broken_extension = {"broken", EXT_PIPELINE, 900, on, .make_pipeline = make};
