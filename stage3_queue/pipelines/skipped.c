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
#include "extension.h"

typedef struct skipped {
    app *a;
    char *path;
    int fd;
    char *error; /* the first failed write */
} skipped;

static void on_skip(void *ctx, const char *url, crawl_skip_reason why, const char *referrer)
{
    skipped *s = ctx;
    if (s->error)
        return;
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

static coro *skipped_close(void *self)
{
    skipped *s = self;
    crawl_remove_listeners(s->a->crawl, s);
    if (!s->error)
        return NULL;
    close_frame *f = (close_frame *)coro_new(&close_def);
    f->s = s;
    return &f->co;
}

static void skipped_free(void *self)
{
    skipped *s = self;
    crawl_remove_listeners(s->a->crawl, s);
    if (s->fd >= 0)
        close(s->fd);
    free(s->path);
    free(s->error);
    free(s);
}

int skipped_pipeline(app *a, const char *path, bool resume, item_pipeline *out, char *err,
                     size_t errlen)
{
    int fd = outfile_open_fd(path, O_WRONLY | O_APPEND | O_CREAT, "--skipped", err, errlen);
    if (fd < 0)
        return -1;
    struct stat st;
    long long size = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? (long long)st.st_size : 0;
    if (size > 0 && !resume) {
        snprintf(err, errlen,
                 "--skipped '%s' holds a list already (%lld bytes): name a new file "
                 "(a crawl goes on with it with --state and --resume)",
                 path, size);
        close(fd);
        return -1;
    }
    skipped *s = xcalloc(1, sizeof *s);
    s->a = a;
    s->path = xstrdup(path);
    s->fd = fd;
    crawl_add_skip_listener(a->crawl, on_skip, s);
    *out =
        (item_pipeline){.name = "skipped", .self = s, .close = skipped_close, .free = skipped_free};
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
     .offset = offsetof(struct skipped_opts, path), .out_file = true,
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
