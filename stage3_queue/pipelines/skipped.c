/* skipped.c — the --skipped stage (skipped.h): a skip listener of the crawl core that
 * writes each skipped URL as a JSON line. */
#include "skipped.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "log.h"
#include "outfile.h"
#include "recstream.h"
#include "report.h"
#include "seen.h"
#include "url.h"
#include "extension.h"

typedef struct skipped {
    app *a;
    char *path;
    int fd;
    long long size;   /* what the file held when it was opened */
    bool replace;     /* a plain crawl's: what the file holds is replaced at open */
    bool resume;      /* --resume: what it holds is read back at open */
    seen_set *before; /* --resume: the URLs earlier runs listed (their normal form) */
    char *error;      /* the first failed write, or why the file cannot be gone on with */
} skipped;

static void on_skip(void *ctx, const char *url, crawl_skip_reason why, const char *referrer)
{
    skipped *s = ctx;
    if (s->error)
        return;
    if (s->before) { /* listed by a run this one goes on from: not again */
        char *owned;
        bool listed = seen_has(s->before, crawl_url_key(s->a->crawl, url, &owned));
        free(owned);
        if (listed)
            return;
    }
    char *line = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&line, &len);
    if (!m)
        alloc_oom(0);
    fputs("{\"url\": ", m);
    json_write_string(m, url);
    fprintf(m, ", \"reason\": \"%s\", \"referrer\": ", crawl_skip_name(why));
    json_write_string(m, referrer);
    fputs("}\n", m);
    if (fclose(m) != 0 || !line)
        alloc_oom(len);
    if (write_all(s->fd, line, len) < 0) {
        s->error = xasprintf("writing --skipped '%s' failed: %s", s->path, strerror(errno));
        log_error("crawl-queue: %s", s->error);
        crawl_fail(s->a->crawl, s->error);
        selector_stop(s->a->loop); /* a list with holes is no list */
    }
    free(line);
}

/* --resume: the URLs the file lists, into s->before; 0, or -1 with s->error. */
static int read_back(skipped *s)
{
    int fd = dup(s->fd);
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        s->error = xasprintf("reading --skipped '%s': %s", s->path, strerror(errno));
        return -1;
    }
    rewind(f);
    s->before = seen_new();
    char *line = NULL, *url = NULL;
    size_t cap = 0, nline = 0;
    ssize_t n;
    long long at = 0;
    while (at < s->size && (n = getline(&line, &cap, f)) > 0) {
        at += n;
        nline++;
        url = xrealloc(url, (size_t)n + 1); /* the URL is shorter than its line */
        size_t after = 0;
        if (json_line_url(line, (size_t)n, url, &after) <= 0 || line[after] != ',') {
            s->error = xasprintf("--resume: --skipped '%s' line %zu is not a skipped URL's "
                                 "({\"url\": ...}): name a new file",
                                 s->path, nline);
            break;
        }
        char *owned;
        seen_add(s->before, crawl_url_key(s->a->crawl, url, &owned));
        free(owned);
    }
    free(line);
    free(url);
    fclose(f);
    return s->error ? -1 : 0;
}

static coro *fail_coro(skipped *s);

/* open (before the first URL): a plain crawl's file emptied; --resume's cut back to
 * its last whole line (a kill -9 mid-write) and read back, so that no URL an earlier
 * run listed is listed again, whatever the state had committed when it was killed. */
static coro *skipped_open(void *self, engine *e)
{
    (void)e;
    skipped *s = self;
    char err[1024];
    if (s->replace && ftruncate(s->fd, 0) < 0) {
        s->error = xasprintf("replacing --skipped '%s': %s", s->path, strerror(errno));
        return fail_coro(s);
    }
    if (!s->resume || s->size == 0)
        return NULL;
    if (outfile_cut_torn_line(s->fd, &s->size, "--skipped", s->path, err, sizeof err) < 0) {
        s->error = xstrdup(err);
        return fail_coro(s);
    }
    if (read_back(s) < 0) {
        log_error("crawl-queue: %s", s->error);
        return fail_coro(s);
    }
    log_info("--resume: --skipped '%s' lists %zu URL(s) already: not listed again", s->path,
             seen_count(s->before));
    return NULL;
}

/* close: raises the first failed write, so that the crawl ends with exit 1. */
typedef struct {
    coro co;
    skipped *s;
} close_frame;

static int close_body(coro *co)
{
    close_frame *f = (close_frame *)co;
    CORO_BEGIN(co);
    CORO_RAISE(co, CORO_OSERROR, 0, "%s", f->s->error);
    CORO_END(co);
}

static const coro_def close_def = {"skipped_close", __FILE__, close_body, NULL,
                                   sizeof(close_frame)};

static coro *fail_coro(skipped *s)
{
    close_frame *f = (close_frame *)coro_new(&close_def);
    f->s = s;
    return &f->co;
}

static coro *skipped_close(void *self)
{
    skipped *s = self;
    crawl_remove_listeners(s->a->crawl, s);
    return s->error ? fail_coro(s) : NULL;
}

static void skipped_free(void *self)
{
    skipped *s = self;
    crawl_remove_listeners(s->a->crawl, s);
    if (s->fd >= 0)
        close(s->fd);
    seen_free(s->before);
    free(s->path);
    free(s->error);
    free(s);
}

int skipped_pipeline(app *a, const char *path, bool resume, item_pipeline *out, char *err,
                     size_t errlen)
{
    int fd = outfile_open_fd(path, O_RDWR | O_APPEND | O_CREAT, "--skipped", err, errlen);
    if (fd < 0)
        return -1;
    /* one that holds data under a crawl that goes on without --resume: refused before
     * (the row's out_as_output, app.c) */
    struct stat st;
    long long size = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? (long long)st.st_size : 0;
    skipped *s = xcalloc(1, sizeof *s);
    s->a = a;
    s->path = xstrdup(path);
    s->fd = fd;
    s->size = size;
    s->replace = size > 0 && !resume; /* as --output: the file is that run's */
    s->resume = resume;
    crawl_add_skip_listener(a->crawl, on_skip, s);
    *out = (item_pipeline){.name = "skipped",
                           .self = s,
                           .open = skipped_open,
                           .close = skipped_close,
                           .free = skipped_free};
    return 0;
}

/* ---- the descriptor (extension.h) ---- */

/* Its own flag: --skipped FILE. */
static struct skipped_opts {
    const char *path;
} opts;

/* clang-format off */
static const cli_flag flags[] = {
    {.name = "skipped", .arg = CLI_ARG_STRING, .metavar = "FILE",
     .offset = offsetof(struct skipped_opts, path), .out_file = true, .out_as_output = true,
     .help = "each URL found and not scheduled, one JSON\n"
             "object a line: url, reason, referrer [none]"},
    {0}};
/* clang-format on */

static bool on(const settings *s)
{
    (void)s;
    return opts.path != NULL;
}

static int make(engine *e, const settings *s, item_pipeline *out, char *err, size_t errlen)
{
    return skipped_pipeline(engine_app(e), opts.path, s->resume, out, err, errlen);
}

/* The descriptor (extension.h): --skipped, order 950, with a flag of its own. */
const extension skipped_extension = {"skipped",
                                     EXT_PIPELINE,
                                     950,
                                     on,
                                     .make_pipeline = make,
                                     .flags = flags,
                                     .opts = &opts,
                                     .opts_size = sizeof opts};
