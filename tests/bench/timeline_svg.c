/* timeline_svg.c — draw a --trace-events file (common/core/trace.h) as an SVG timeline:
 *
 *   timeline-svg TRACE.json OUT.svg
 *
 * One row per slot (track), a bar per fetch attempt coloured by phase (connect,
 * waiting for the first byte, body; a failed attempt outlined in red), a time axis with
 * tick labels, a legend, the stage's name and totals, and under it the number of
 * fetches in flight over time. Each bar has a tooltip (URL, status, times). Only our own
 * traces are expected (common/core/trace.c: one event a line): complete events of cat
 * "fetch" and "phase", the process_name metadata and the "crawl finished" instant. The
 * trace is streamed, an event at a time, each line read with the tests' JSON parser
 * (tests/harness/jsonl.c): once for the totals, then once per layer of bars, so the
 * memory is that of one line and two numbers a fetch (the in-flight curve), however
 * long the trace.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "jsonl.h"

#define WIDTH      1200
#define LEFT       70
#define RIGHT      24
#define TOP        96
#define INFLIGHT_H 70

typedef struct span {
    long long tid, ts, dur;
    const char *name, *url, *error;
    long long status, size;
    int phase; /* -1 for a fetch, else index in phase_names */
} span;

static const char *const phase_names[] = {"connect", "waiting", "body"};
static const char *const phase_colors[] = {"#f28e2b", "#a6cee3", "#1f5f9e"};
static const char *const phase_labels[] = {"connect", "waiting for the first byte", "body"};
#define FAIL_COLOR "#d62728"

static void xml(FILE *o, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", o); break;
        case '<': fputs("&lt;", o); break;
        case '>': fputs("&gt;", o); break;
        case '"': fputs("&quot;", o); break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\t')
                fputc(*s, o);
        }
    }
}

/* Each event of the trace at path, one a line (trace.c), given to fn as a span (cat
 * "fetch" or a phase) or to meta (any other event). Lines that are not an event (the
 * array's opening and closing, a torn last line of a killed crawl) are skipped. Returns
 * -1 with err when the file cannot be read or does not open as a trace. */
typedef void (*span_fn)(void *ctx, const span *s);
typedef void (*meta_fn)(void *ctx, const jobj *e);
static int each_event(const char *path, span_fn fn, meta_fn meta, void *ctx, char *err,
                      size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot read %s", path);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    bool opened = false;
    while ((len = getline(&line, &cap, f)) > 0) {
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == ',' || line[len - 1] == ' '))
            line[--len] = '\0';
        if (!opened) {
            if (strncmp(line, "{\"traceEvents\": [", 16) != 0)
                break;
            opened = true;
            continue;
        }
        char why[64];
        jobj *e = line[0] == '{' ? jobj_parse(line, (size_t)len, why, sizeof why) : NULL;
        if (!e)
            continue;
        const char *ph = jobj_str(e, "ph"), *name = jobj_str(e, "name"), *cat = jobj_str(e, "cat");
        if (ph && name && !strcmp(ph, "X") && cat) {
            span sp = {.tid = jobj_int(e, "tid", 0),
                       .ts = jobj_int(e, "ts", 0),
                       .dur = jobj_int(e, "dur", 0),
                       .name = name,
                       .phase = -2};
            if (!strcmp(cat, "fetch")) {
                const jobj *a = jobj_obj(e, "args");
                sp.phase = -1;
                sp.url = jobj_str(a, "url");
                sp.error = jobj_str(a, "error");
                sp.status = jobj_int(a, "status", -1);
                sp.size = jobj_int(a, "size", 0);
            } else {
                for (int p = 0; p < 3; p++)
                    if (!strcmp(name, phase_names[p]))
                        sp.phase = p;
            }
            if (sp.phase != -2 && sp.tid >= 1)
                fn(ctx, &sp);
        } else if (ph && name && meta) {
            meta(ctx, e);
        }
        jobj_free(e);
    }
    bool bad = ferror(f);
    free(line);
    fclose(f);
    if (bad || !opened) {
        snprintf(err, errlen, "%s: not a trace (%s)", path,
                 bad ? "read error" : "no traceEvents array");
        return -1;
    }
    return 0;
}

/* What the first pass learns: the totals, the title, the "crawl finished" args, and
 * each fetch's start and end (the in-flight curve). */
typedef struct totals {
    char *title, *selector;
    bool finished;
    long long urls, ms, max_tasks;
    long long nslots, total, busy;
    size_t nfetch, nfailed;
    long long *marks;
    size_t nm, mcap;
} totals;

static void add_span(void *ctx, const span *s)
{
    totals *t = ctx;
    if (s->phase == -1) {
        t->nfetch++;
        t->nfailed += s->error != NULL;
        t->busy += s->dur;
        if (t->nm + 2 > t->mcap) {
            t->mcap = t->mcap ? 2 * t->mcap : 1024;
            t->marks = xreallocarray(t->marks, t->mcap, sizeof *t->marks);
        }
        t->marks[t->nm++] = 2 * s->ts + 1;        /* odd: a start */
        t->marks[t->nm++] = 2 * (s->ts + s->dur); /* even: an end */
    }
    if (s->tid > t->nslots)
        t->nslots = s->tid;
    if (s->ts + s->dur > t->total)
        t->total = s->ts + s->dur;
}

static void add_meta(void *ctx, const jobj *e)
{
    totals *t = ctx;
    const char *ph = jobj_str(e, "ph"), *name = jobj_str(e, "name");
    const char *pname = jobj_str(jobj_obj(e, "args"), "name");
    if (!strcmp(ph, "M") && !strcmp(name, "process_name") && pname) {
        free(t->title);
        t->title = xstrdup(pname);
    }
    if (!strcmp(ph, "i") && !strcmp(name, "crawl finished")) {
        const jobj *a = jobj_obj(e, "args");
        t->finished = true;
        t->urls = jobj_int(a, "urls", 0);
        t->ms = jobj_int(a, "ms", 0);
        t->max_tasks = jobj_int(a, "max_tasks", 0);
        free(t->selector);
        t->selector = jobj_str(a, "selector") ? xstrdup(jobj_str(a, "selector")) : NULL;
        if (jobj_int(e, "ts", 0) > t->total)
            t->total = jobj_int(e, "ts", 0);
    }
}

/* The second and third passes: the phases' bars, then each fetch's outline. */
typedef struct drawing {
    FILE *o;
    double sx, pad;
    int rh;
} drawing;

static void draw_phase(void *ctx, const span *s)
{
    const drawing *d = ctx;
    if (s->phase < 0)
        return;
    fprintf(d->o, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\"/>\n",
            LEFT + s->ts * d->sx, TOP + (s->tid - 1) * d->rh + d->pad, s->dur * d->sx,
            d->rh - 2 * d->pad, phase_colors[s->phase]);
}

static void draw_fetch(void *ctx, const span *s)
{
    const drawing *d = ctx;
    FILE *o = d->o;
    if (s->phase != -1)
        return;
    fprintf(o,
            "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\" "
            "fill-opacity=\"0\" stroke=\"%s\" stroke-width=\"%s\"><title>",
            LEFT + s->ts * d->sx, TOP + (s->tid - 1) * d->rh + d->pad, s->dur * d->sx,
            d->rh - 2 * d->pad, "#fff", s->error ? FAIL_COLOR : "#ffffff",
            s->error ? "1.5" : "0.6");
    xml(o, s->url ? s->url : s->name);
    if (s->status >= 0)
        fprintf(o, " — %lld, %lld bytes", s->status, s->size);
    if (s->error) {
        fputs(" — ", o);
        xml(o, s->error);
    }
    fprintf(o, " — slot %lld, %.1f to %.1f ms</title></rect>\n", s->tid - 1, s->ts / 1e3,
            (s->ts + s->dur) / 1e3);
}

/* A tick step of 1, 2 or 5 x 10^k microseconds giving 6 to 12 ticks over total. */
static long long tick_step(long long total)
{
    long long step = 1;
    for (;;) {
        for (int m = 0; m < 3; m++) {
            long long s = step * (long long[]){1, 2, 5}[m];
            if (total / s <= 10)
                return s;
        }
        step *= 10;
    }
}

static void time_label(char *buf, size_t len, long long us, long long step)
{
    if (step >= 1000000 || us >= 10000000)
        snprintf(buf, len, "%.*f s", step >= 1000000 ? 0 : step >= 100000 ? 1 : 2, us / 1e6);
    else if (step >= 1000)
        snprintf(buf, len, "%lld ms", us / 1000);
    else
        snprintf(buf, len, "%.1f ms", us / 1e3);
}

static int by_time(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    /* at the same instant, ends (even) before starts (odd) */
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: timeline-svg TRACE.json OUT.svg\n");
        return 2;
    }
    char err[512];
    totals tt = {.total = 1};
    if (each_event(argv[1], add_span, add_meta, &tt, err, sizeof err) < 0) {
        fprintf(stderr, "timeline-svg: %s\n", err);
        return 1;
    }
    const char *title = tt.title ? tt.title : "crawl";
    long long nslots = tt.nslots < 1 ? 1 : tt.nslots, total = tt.total;
    long long max_tasks = tt.finished && tt.max_tasks ? tt.max_tasks : nslots;
    size_t nfetch = tt.nfetch, nfailed = tt.nfailed;

    /* fetches in flight over time: +1 at each start, -1 at each end */
    long long *marks = tt.marks;
    size_t nm = tt.nm;
    qsort(marks, nm, sizeof *marks, by_time);
    long long peak = 0, cur = 0;
    for (size_t i = 0; i < nm; i++) {
        cur += (marks[i] & 1) ? 1 : -1;
        if (cur > peak)
            peak = cur;
    }

    int rh = (int)(420 / nslots);
    rh = rh > 26 ? 26 : rh < 4 ? 4 : rh;
    int plot_w = WIDTH - LEFT - RIGHT, plot_h = (int)nslots * rh;
    int axis_y = TOP + plot_h;
    int infl_top = axis_y + 44, infl_bottom = infl_top + INFLIGHT_H;
    int height = infl_bottom + 36;
    double sx = (double)plot_w / (double)total;

    FILE *o = fopen(argv[2], "w");
    if (!o) {
        fprintf(stderr, "timeline-svg: cannot write %s\n", argv[2]);
        return 1;
    }
    fprintf(o,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" "
            "font-size=\"12\">\n",
            WIDTH, height, WIDTH, height);
    fprintf(o, "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n");

    /* title and totals */
    fprintf(o, "<text x=\"%d\" y=\"28\" font-size=\"18\" font-weight=\"bold\">", LEFT);
    xml(o, title);
    fputs("</text>\n", o);
    char secs[32];
    if (tt.finished && tt.ms >= 1000)
        snprintf(secs, sizeof secs, "%.2f s", (double)tt.ms / 1e3);
    else
        snprintf(secs, sizeof secs, "%.1f ms", (double)total / 1e3);
    fprintf(o, "<text x=\"%d\" y=\"50\" font-size=\"13\" fill=\"#333\">", LEFT);
    fprintf(o,
            "%lld URLs, %zu fetches (%zu failed) on %lld slots in %s; peak %lld in flight; "
            "slots busy %.0f%% of the time",
            tt.finished ? tt.urls : (long long)nfetch, nfetch, nfailed, nslots, secs, peak,
            /* of the slots drawn, not of --max-tasks (fewer may ever be used) */
            100.0 * (double)tt.busy / ((double)nslots * (double)total));
    if (tt.finished && tt.selector) {
        fputs("; selector ", o);
        xml(o, tt.selector);
    }
    fputs("</text>\n", o);

    /* legend */
    int lx = LEFT;
    for (int p = 0; p < 3; p++) {
        fprintf(o, "<rect x=\"%d\" y=\"62\" width=\"14\" height=\"12\" fill=\"%s\"/>", lx,
                phase_colors[p]);
        fprintf(o, "<text x=\"%d\" y=\"72\">%s</text>\n", lx + 19, phase_labels[p]);
        lx += 19 + 7 * (int)strlen(phase_labels[p]) + 22;
    }
    fprintf(o,
            "<rect x=\"%d\" y=\"62\" width=\"14\" height=\"12\" fill=\"none\" stroke=\"%s\" "
            "stroke-width=\"2\"/><text x=\"%d\" y=\"72\">failed attempt</text>\n",
            lx, FAIL_COLOR, lx + 19);
    lx += 19 + 7 * 14 + 22;
    fprintf(o,
            "<text x=\"%d\" y=\"72\" fill=\"#555\">one row per slot (a worker or "
            "connection); time runs left to right</text>\n",
            lx);

    /* rows and grid */
    for (long long r = 0; r < nslots; r++) {
        if (r % 2)
            fprintf(o, "<rect x=\"%d\" y=\"%lld\" width=\"%d\" height=\"%d\" fill=\"#f3f3f3\"/>\n",
                    LEFT, TOP + r * rh, plot_w, rh);
        int every = rh >= 11 ? 1 : (int)((11 + rh - 1) / rh);
        if (r % every == 0)
            fprintf(o,
                    "<text x=\"%d\" y=\"%lld\" text-anchor=\"end\" font-size=\"%d\" "
                    "fill=\"#333\">slot %lld</text>\n",
                    LEFT - 6, TOP + r * rh + rh / 2 + 4, rh >= 14 ? 12 : 10, r);
    }
    long long step = tick_step(total);
    for (long long t = 0; t <= total; t += step) {
        double x = LEFT + t * sx;
        char label[32];
        time_label(label, sizeof label, t, step);
        fprintf(o, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>\n", x, TOP,
                x, axis_y);
        fprintf(o, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>\n", x,
                infl_top, x, infl_bottom);
        fprintf(o, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#333\"/>", x, axis_y,
                x, axis_y + 5);
        fprintf(o, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", x, axis_y + 18,
                label);
    }
    fprintf(o, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n", LEFT, axis_y,
            LEFT + plot_w, axis_y);
    fprintf(o,
            "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" fill=\"#555\">time since the "
            "crawl started</text>\n",
            LEFT + plot_w, axis_y + 34);

    /* bars: the phases, then each fetch's outline with its tooltip (a pass each) */
    drawing d = {.o = o, .sx = sx, .pad = rh >= 8 ? 1.5 : 0.5, .rh = rh};
    if (each_event(argv[1], draw_phase, NULL, &d, err, sizeof err) < 0
        || each_event(argv[1], draw_fetch, NULL, &d, err, sizeof err) < 0) {
        fprintf(stderr, "timeline-svg: %s\n", err);
        fclose(o);
        return 1;
    }

    /* fetches in flight: a step line */
    fprintf(o,
            "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">in flight</text>"
            "<text x=\"%d\" y=\"%d\" fill=\"#555\"> (fetches at once; --max-tasks %lld, "
            "peak %lld)</text>\n",
            LEFT, infl_top - 6, LEFT + 60, infl_top - 6, max_tasks, peak);
    long long ymax = max_tasks > peak ? max_tasks : peak;
    if (ymax < 1)
        ymax = 1;
    fprintf(o, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n", LEFT,
            infl_bottom, LEFT + plot_w, infl_bottom);
    fprintf(o,
            "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" font-size=\"10\">%lld</text>"
            "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" font-size=\"10\">0</text>\n",
            LEFT - 6, infl_top + 4, ymax, LEFT - 6, infl_bottom);
    fprintf(o,
            "<polyline fill=\"#1f5f9e\" fill-opacity=\"0.25\" stroke=\"#1f5f9e\" "
            "stroke-width=\"1\" points=\"%d,%d",
            LEFT, infl_bottom);
    cur = 0;
    for (size_t i = 0; i < nm; i++) {
        double x = LEFT + (double)(marks[i] / 2) * sx;
        double y0 = infl_bottom - (double)cur * INFLIGHT_H / (double)ymax;
        cur += (marks[i] & 1) ? 1 : -1;
        double y1 = infl_bottom - (double)cur * INFLIGHT_H / (double)ymax;
        fprintf(o, " %.2f,%.2f %.2f,%.2f", x, y0, x, y1);
    }
    fprintf(o, " %d,%d\"/>\n", LEFT + plot_w, infl_bottom);
    fputs("</svg>\n", o);
    int bad = ferror(o);
    if (fclose(o) != 0 || bad) {
        fprintf(stderr, "timeline-svg: writing %s failed\n", argv[2]);
        return 1;
    }
    free(marks);
    free(tt.title);
    free(tt.selector);
    return 0;
}
