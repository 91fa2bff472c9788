/* items.c — the --items stage of the item pipeline (items.h). */
#include "items.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "log.h"
#include "outfile.h"
#include "recstream.h"
#include "state.h"
#include "extension.h"

typedef struct items items;
static coro *fail_coro(items *it);

struct items {
    app *a;
    char *path;
    int fd;
    long long end; /* the file's size: where the last line ends */
    char *error;   /* the first failed write */
    char *state;   /* --state FILE.db when resumed, or NULL */
    bool replace;  /* a plain crawl's: what the file holds is replaced at open */
};

static coro *items_scraped(void *self, spider_item *s, bool *drop)
{
    items *it = self;
    if (it->error) {
        *drop = true;
        return NULL;
    }
    size_t len = strlen(s->json);
    char *line = xmalloc(len + 1);
    memcpy(line, s->json, len);
    line[len] = '\n';
    if (write_all(it->fd, line, len + 1) < 0) {
        it->error = xasprintf("writing --items '%s' failed: %s", it->path, strerror(errno));
        log_error("crawl-queue: %s", it->error);
        crawl_fail(it->a->crawl, it->error);
        selector_stop(it->a->loop); /* a lost item is not a finished crawl */
        *drop = true;
    } else {
        it->end += (long long)len + 1;
        s->items_end = it->end;
    }
    free(line);
    return NULL;
}

/* close: raises the first failed write, so that the crawl ends with exit 1. */
typedef struct {
    coro co;
    items *it;
} close_frame;

static int close_body(coro *co)
{
    close_frame *f = (close_frame *)co;
    CORO_BEGIN(co);
    if (f->it->error)
        CORO_RAISE(co, CORO_OSERROR, 0, "%s", f->it->error);
    CORO_END(co);
}

static const coro_def close_def = {"items_close", __FILE__, close_body, NULL, sizeof(close_frame)};

static coro *fail_coro(items *it)
{
    close_frame *f = (close_frame *)coro_new(&close_def);
    f->it = it;
    return &f->co;
}

static coro *items_close(void *self)
{
    items *it = self;
    return it->error ? fail_coro(it) : NULL;
}

/* open (after state_restore, before the state's writer opens its file): a plain
 * crawl's file emptied; on a --resume with --state, what earlier runs wrote. The lines
 * past the last item the state knows of belong to URLs that are fetched again: cut, as
 * they will be written again. */
static coro *items_open(void *self, engine *e)
{
    items *it = self;
    char err[1024];
    long long known, done;
    /* replaced or cut at open, not before: a crawl that a check refuses (state.h)
     * leaves the file as it was */
    if (it->replace) {
        if (ftruncate(it->fd, 0) < 0) {
            it->error = xasprintf("replacing --items '%s': %s", it->path, strerror(errno));
            return fail_coro(it);
        }
        it->end = 0;
    } else if (it->state) {
        /* state_restore may have cut it (items of URLs fetched again) */
        struct stat st;
        if (fstat(it->fd, &st) == 0 && S_ISREG(st.st_mode))
            it->end = (long long)st.st_size;
    }
    if (it->end > 0
        && outfile_cut_torn_line(it->fd, &it->end, "--items", it->path, err, sizeof err) < 0) {
        it->error = xstrdup(err);
        return fail_coro(it);
    }
    if (!it->state)
        return NULL;
    if (state_items_written(it->state, &known, &done, err, sizeof err) < 0) {
        it->error = xstrdup(err);
        return fail_coro(it);
    }
    if (known == 0 && it->end > 0 && done > 0) {
        /* not this crawl's items (pages done, none with an item): never cut blind; with no
         * page done (a first run killed before the state's first commit of them), every
         * item belongs to a URL fetched again */
        it->error = xasprintf("--resume: --items '%s' holds %lld bytes and --state '%s' knows "
                              "of no item in it: name a new file",
                              it->path, it->end, it->state);
        log_error("crawl-queue: %s", it->error);
        return fail_coro(it);
    }
    if (known < it->end) {
        log_warn("--resume: --items '%s' ends with %lld bytes of items --state '%s' does not "
                 "know of: cut (their pages are fetched again)",
                 it->path, it->end - known, it->state);
        if (ftruncate(it->fd, (off_t)known) < 0) {
            it->error = xasprintf("cutting --items '%s': %s", it->path, strerror(errno));
            return fail_coro(it);
        }
        it->end = known;
    }
    (void)e;
    return NULL;
}

static void items_free(void *self)
{
    items *it = self;
    if (it->fd >= 0)
        close(it->fd);
    free(it->path);
    free(it->state);
    free(it->error);
    free(it);
}

int items_pipeline(app *a, const char *path, const items_mode *mode, item_pipeline *out, char *err,
                   size_t errlen)
{
    int fd = outfile_open_fd(path, O_RDWR | O_APPEND | O_CREAT, "--items", err, errlen);
    if (fd < 0)
        return -1;
    struct stat st;
    bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    long long size = regular ? (long long)st.st_size : 0;
    /* one that holds items under a crawl that goes on without --resume: refused before
     * (the row's out_as_output, app.c) */
    items *it = xcalloc(1, sizeof *it);
    it->a = a;
    it->path = xstrdup(path);
    it->fd = fd;
    it->end = size;
    it->replace = size > 0 && !mode->resume; /* as --output: the file is that run's */
    it->state = mode->resume && mode->state ? xstrdup(mode->state) : NULL;
    *out = (item_pipeline){.name = "items",
                           .self = it,
                           .open = items_open,
                           .close = items_close,
                           .free = items_free,
                           .process_spider_item = items_scraped};
    return 0;
}

/* ---- the descriptor (extension.h) ---- */

static bool on(const settings *s)
{
    return s->items != NULL;
}

static int make(engine *e, const settings *s, item_pipeline *out, char *err, size_t errlen)
{
    items_mode mode = {.resume = s->resume, .state = s->state};
    return items_pipeline(engine_app(e), s->items, &mode, out, err, errlen);
}

/* The descriptor (extension.h): --items, order 50: first, so that the stages
 * after it know where each item's line ends. */
const extension items_extension = {"items", EXT_PIPELINE, 50, on, .make_pipeline = make};
