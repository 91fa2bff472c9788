/* progress.c — see progress.h. */
#include "progress.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "alloc.h"
#include "outpaths.h"
#include "robotstxt.h"
#include "settings.h"

#define PROGRESS_EVERY_MS 250 /* on a terminal */

struct progress {
    app *a;
    size_t (*queued)(const void *ctx); /* the Queue's size */
    const void *ctx;
    sel_timer *timer;
    bool tty; /* refreshed in place; else a line each time */
    uint64_t every_ms;
};

/* n bytes for a person: "512 B", "12.3 KiB", "4.5 MiB", "1.2 GiB". */
static void human_bytes(long long n, char *buf, size_t len)
{
    static const char *const unit[] = {"KiB", "MiB", "GiB", "TiB"};
    if (n < 1024) {
        snprintf(buf, len, "%lld B", n);
        return;
    }
    double v = (double)n / 1024;
    size_t u = 0;
    while (v >= 1024 && u + 1 < sizeof unit / sizeof unit[0]) {
        v /= 1024;
        u++;
    }
    snprintf(buf, len, "%.1f %s", v, unit[u]);
}

static double per_second(size_t n, double secs)
{
    return secs > 0 ? (double)n / secs : 0.0;
}

/* The progress line's text (no prefix, no newline). */
static void format_line(const progress *p, char *buf, size_t len)
{
    const crawl *c = p->a->crawl;
    const tally *t = crawl_tally(c);
    size_t done = crawl_done_count(c);
    double secs = crawl_seconds(c);
    char bytes[32];
    human_bytes(t->bytes, bytes, sizeof bytes);
    int n = snprintf(buf, len,
                     "%.1f s: %zu done (%zu failed), %s, %zu in flight, %zu queued, "
                     "%.1f pages/s",
                     secs, done, t->n[TALLY_FAILED], bytes, crawl_in_flight(c), p->queued(p->ctx),
                     per_second(done, secs));
    long max = p->a->opt.max_pages;
    if (max > 0 && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, ", %.0f%% of --max-pages %ld",
                 100.0 * (double)done / (double)max, max);
}

/* The terminal's width in columns, or 0 when it does not say. */
static size_t columns(void)
{
    struct winsize ws;
    return ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 ? ws.ws_col : 0;
}

static void show(selector *s, void *arg)
{
    progress *p = arg;
    char line[256];
    format_line(p, line, sizeof line);
    if (p->tty) {
        size_t width = columns();
        if (width > 1 && strlen(line) >= width)
            line[width - 1] = '\0'; /* a wrapped line could not be erased */
        fprintf(stderr, "\r\033[K%s", line);
    } else {
        fprintf(stderr, "%s: %s\n", p->a->prog, line);
    }
    fflush(stderr);
    p->timer = selector_call_later(s, p->every_ms, show, p);
}

progress *progress_start(app *a, size_t (*queued)(const void *ctx), const void *ctx)
{
    bool tty = isatty(STDERR_FILENO);
    double interval = settings_of(a)->progress_every;
    if (a->opt.quiet || (!tty && interval <= 0))
        return NULL;
    progress *p = xcalloc(1, sizeof *p);
    p->a = a;
    p->queued = queued;
    p->ctx = ctx;
    p->tty = tty;
    p->every_ms = tty ? PROGRESS_EVERY_MS : (uint64_t)(interval * 1000.0 + 0.5);
    if (p->every_ms == 0)
        p->every_ms = 1;
    p->timer = selector_call_later(a->loop, p->every_ms, show, p);
    return p;
}

void progress_stop(progress *p)
{
    if (!p)
        return;
    if (p->timer)
        selector_cancel(p->a->loop, p->timer);
    if (p->tty) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    free(p);
}

/* ---- the summary --------------------------------------------------------------------- */

/* "report (FORMAT): WHERE; --store: FILE; ...": every file the command line named. */
static void write_outputs(const app *a, FILE *out)
{
    const crawl_options *o = &a->opt;
    size_t n;
    cli_output *files = cli_outputs(o, &a->stage.cli, &n);
    fprintf(out, "%s: report (%s): ", a->prog, o->format ? o->format : "text");
    text_write_string(out, files[0].path ? files[0].path : "stdout"); /* --output */
    for (size_t i = 1; i < n; i++) {
        if (!files[i].path)
            continue;
        fprintf(out, "; %s: ", files[i].flag);
        text_write_string(out, files[i].path);
    }
    fputc('\n', out);
    free(files);
}

/* "skipped 5 URLs: offsite 1, depth 4", and whether --max-pages cut the crawl short;
 * nothing when no URL was skipped. */
static void write_skipped(const app *a)
{
    size_t all = 0;
    for (int i = 0; i < CRAWL_SKIP_NREASONS; i++)
        all += crawl_skipped(a->crawl, (crawl_skip_reason)i);
    if (all == 0)
        return;
    fprintf(stderr, "%s: skipped %zu URL%s", a->prog, all, all == 1 ? "" : "s");
    const char *sep = ": ";
    for (int i = 0; i < CRAWL_SKIP_NREASONS; i++) {
        size_t n = crawl_skipped(a->crawl, (crawl_skip_reason)i);
        if (n) {
            fprintf(stderr, "%s%s %zu", sep, crawl_skip_name((crawl_skip_reason)i), n);
            sep = ", ";
        }
    }
    if (crawl_skipped(a->crawl, CRAWL_SKIP_MAX_PAGES))
        fprintf(stderr, "; --max-pages %ld reached: the crawl is not complete", a->opt.max_pages);
    fputc('\n', stderr);
}

/* "1 host could not be reached ...": the origins whose robots.txt got no answer at
 * all (robotstxt.h), so that nothing was fetched from them; nothing when none. */
static void write_unreachable(const app *a)
{
    long long n = crawl_counted(a->crawl, ROBOTSTXT_UNREACHABLE);
    if (n <= 0)
        return;
    fprintf(stderr,
            "%s: %lld host%s could not be reached (%s robots.txt could not be fetched): "
            "nothing fetched from %s; the records say why\n",
            a->prog, n, n == 1 ? "" : "s", n == 1 ? "its" : "their", n == 1 ? "it" : "them");
}

void progress_summary(const app *a)
{
    const tally *t = crawl_tally(a->crawl);
    size_t done = crawl_done_count(a->crawl);
    double secs = crawl_seconds(a->crawl);
    char bytes[32];
    human_bytes(t->bytes, bytes, sizeof bytes);
    fprintf(stderr, "%s: %zu pages in %.3f s (%.1f pages/s), %lld bytes received", a->prog, done,
            secs, per_second(done, secs), t->bytes);
    if (t->bytes >= 1024)
        fprintf(stderr, " (%s)", bytes);
    fputc('\n', stderr);
    fprintf(stderr, "%s: by status: ", a->prog);
    tally_write_text(t, stderr);
    fputc('\n', stderr);
    write_unreachable(a);
    write_skipped(a);
    write_outputs(a, stderr);
    fflush(stderr);
}
