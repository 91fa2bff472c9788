/* registry.c — crawl-queue's extensions, the list of the descriptors each declares
 * beside its code (extension.h, extensions.def), and their assembly (registry.h). To add
 * one: its file (in downloadermw/, pipelines/, spidermw/, seeds/, spiders/ or
 * frontier/) with its descriptor, its line in extensions.def, its line in
 * CMakeLists.txt and its row in README.md (docs/extensions.md shows a whole example). */
#include "registry.h"

#include <stdio.h>
#include <stdlib.h>

#include "alloc.h"
#include "log.h"

/* The chapter's Queue: no extension, the Queue of a crawl that enables none. */
static int make_queue(app *a, const settings *s, frontier *out, char *err, size_t errlen)
{
    (void)s, (void)err, (void)errlen;
    *out = queue_frontier(a->loop);
    return 0;
}

static const extension chapter_queue = {"queue", EXT_FRONTIER, 1000, NULL,
                                        .make_frontier = make_queue};

/* ---- the list ---- */

#define EXTENSION(name) extern const extension name;
#include "extensions.def"
#undef EXTENSION

const extension *const registry[] = {
#define EXTENSION(name) &name,
#include "extensions.def"
#undef EXTENSION
    &chapter_queue, /* frontier 1000: the Queue when none of the above is on */
};
const size_t registry_size = sizeof registry / sizeof registry[0];

/* ---- their own flags ---- */

const cli_group *registry_flag_groups(size_t *n)
{
    static cli_group groups[sizeof registry / sizeof registry[0]];
    size_t k = 0;
    for (size_t i = 0; i < registry_size; i++)
        if (registry[i]->flags)
            groups[k++] = (cli_group){NULL, registry[i]->flags, registry[i]->opts,
                                      registry[i]->opts_size, registry[i]->opts_defaults};
    *n = k;
    return groups;
}

/* ---- assembly ---- */

/* The enabled rows of kind, by order (list order among equals). */
static size_t enabled_rows(const settings *s, const extension *const *rows, size_t n, ext_kind kind,
                           const extension **out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (rows[i]->kind != kind || (rows[i]->enabled && !rows[i]->enabled(s)))
            continue;
        size_t j = k++;
        for (; j > 0 && out[j - 1]->order > rows[i]->order; j--) /* insertion: stable */
            out[j] = out[j - 1];
        out[j] = rows[i];
    }
    return k;
}

int registry_assemble(app *a, const extension *const *rows, size_t n, frontier *fr, engine **e,
                      char *err, size_t errlen)
{
    const settings *s = settings_of(a);
    const extension **on = xcalloc(n ? n : 1, sizeof *on);
    *e = NULL;
    *fr = (frontier){NULL, NULL};
    if (enabled_rows(s, rows, n, EXT_FRONTIER, on) == 0) {
        snprintf(err, errlen, "no Queue (frontier) is enabled");
        goto fail;
    }
    if (on[0]->make_frontier(a, s, fr, err, errlen) < 0)
        goto fail;
    log_debug("registry: the Queue is %s", on[0]->name);
    *e = engine_new(a, fr);
    size_t k = enabled_rows(s, rows, n, EXT_DOWNLOADER_MW, on);
    for (size_t i = 0; i < k; i++) {
        downloader_middleware mw;
        if (on[i]->make_middleware(*e, s, &mw, err, errlen) < 0)
            goto fail;
        engine_add_middleware(*e, &mw);
        log_debug("registry: downloader middleware %d %s", on[i]->order, on[i]->name);
    }
    k = enabled_rows(s, rows, n, EXT_PIPELINE, on);
    for (size_t i = 0; i < k; i++) {
        item_pipeline p;
        if (on[i]->make_pipeline(*e, s, &p, err, errlen) < 0)
            goto fail;
        engine_add_pipeline(*e, &p);
        log_debug("registry: item pipeline %d %s", on[i]->order, on[i]->name);
    }
    k = enabled_rows(s, rows, n, EXT_SPIDER_MW, on);
    for (size_t i = 0; i < k; i++) {
        spider_middleware m;
        if (on[i]->make_spider_middleware(*e, s, &m, err, errlen) < 0)
            goto fail;
        engine_add_spider_middleware(*e, &m);
        log_debug("registry: spider middleware %d %s", on[i]->order, on[i]->name);
    }
    if (enabled_rows(s, rows, n, EXT_SPIDER, on) > 0) {
        spider sp;
        if (on[0]->make_spider(*e, s, &sp, err, errlen) < 0)
            goto fail;
        engine_set_spider(*e, &sp);
        log_debug("registry: the spider is %s", on[0]->name);
    }
    k = enabled_rows(s, rows, n, EXT_SEEDS, on);
    for (size_t i = 0; i < k; i++) {
        engine_add_seeds(*e, on[i]->seed);
        log_debug("registry: seeds %d %s", on[i]->order, on[i]->name);
    }
    free(on);
    return 0;
fail:
    free(on);
    engine_free(*e);
    *e = NULL;
    frontier_free(fr);
    return -1;
}
