/* trace.c — see trace.h. */
#include "trace.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "outfile.h"
#include "report.h"
#include "strmap.h"

/* Lanes: a group's own slots ("127.0.0.1:8080 #0", "#1", ...), for one host each. */
typedef struct lane_group {
    char *key;
    strmap_node node;
    int *slot; /* lane i's slot */
    bool *busy;
    int n;
} lane_group;

/* Which lane a slot is (group NULL: a plain slot). */
typedef struct lane_ref {
    lane_group *group;
    int lane;
} lane_ref;

#define TRACE_BUF (1 << 16)

struct trace {
    FILE *out;
    char *path;
    int pid;
    struct timespec t0;
    size_t nevents;
    /* Slots: 0 .. nslots-1 have been used; the free ones are in a min-heap. */
    int nslots;
    int *heap;
    size_t nheap, capheap;
    strmap groups;   /* lane_group by key */
    lane_ref *lanes; /* per slot (nslots of them) */
};

static void begin_event(trace *t)
{
    fputs(t->nevents++ ? ",\n" : "\n", t->out);
}

static void write_args(trace *t, const trace_arg *args, size_t nargs)
{
    if (!nargs)
        return;
    fputs(", \"args\": {", t->out);
    for (size_t i = 0; i < nargs; i++) {
        if (i)
            fputs(", ", t->out);
        json_write_string(t->out, args[i].key);
        fputs(": ", t->out);
        if (args[i].str)
            json_write_string(t->out, args[i].str);
        else
            fprintf(t->out, "%lld", args[i].num);
    }
    fputc('}', t->out);
}

static void metadata(trace *t, int tid, const char *what, const trace_arg *arg)
{
    begin_event(t);
    fprintf(t->out, "{\"name\": \"%s\", \"ph\": \"M\", \"pid\": %d, \"tid\": %d", what, t->pid,
            tid);
    write_args(t, arg, 1);
    fputc('}', t->out);
}

trace *trace_open(const char *path, int pid, const char *process_name, char *err, size_t errlen)
{
    FILE *out = outfile_open(path, "--trace-events", err, errlen);
    if (!out)
        return NULL;
    trace *t = xcalloc(1, sizeof *t);
    t->path = xstrdup(path);
    t->out = out;
    setvbuf(t->out, NULL, _IOFBF, TRACE_BUF);
    t->pid = pid;
    strmap_init(&t->groups);
    clock_gettime(CLOCK_MONOTONIC, &t->t0);
    fputs("{\"traceEvents\": [", t->out);
    metadata(t, 0, "process_name", &(trace_arg){"name", process_name ? process_name : "", 0});
    return t;
}

static void group_drop(strmap_node *n)
{
    lane_group *g = strmap_entry(n, lane_group, node);
    free(g->slot);
    free(g->busy);
    free(g->key);
    free(g);
}

int trace_close(trace *t, char *err, size_t errlen)
{
    if (!t)
        return 0;
    fputs("\n],\n\"displayTimeUnit\": \"ms\"}\n", t->out);
    int r = outfile_close(t->out, "--trace-events", t->path, err, errlen);
    strmap_clear(&t->groups, group_drop);
    strmap_free(&t->groups);
    free(t->lanes);
    free(t->heap);
    free(t->path);
    free(t);
    return r;
}

uint64_t trace_now(const trace *t)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t ns = (int64_t)(now.tv_sec - t->t0.tv_sec) * 1000000000 + (now.tv_nsec - t->t0.tv_nsec);
    return ns > 0 ? (uint64_t)ns / 1000 : 0;
}

int trace_slot_tid(int slot)
{
    return slot + 1;
}

/* ---- slots: a min-heap of the free ones, so the lowest is handed out first ---------- */

static int heap_pop(trace *t)
{
    int top = t->heap[0];
    int x = t->heap[--t->nheap];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= t->nheap)
            break;
        if (c + 1 < t->nheap && t->heap[c + 1] < t->heap[c])
            c++;
        if (t->heap[c] >= x)
            break;
        t->heap[i] = t->heap[c];
        i = c;
    }
    if (t->nheap)
        t->heap[i] = x;
    return top;
}

/* A new slot, its track named `name`. */
static int new_slot(trace *t, const char *name, lane_group *g, int lane)
{
    /* room for every slot in the heap, so that release never fails */
    if ((size_t)t->nslots + 1 > t->capheap) {
        t->capheap = t->capheap ? 2 * t->capheap : 64;
        t->heap = xreallocarray(t->heap, t->capheap, sizeof *t->heap);
        t->lanes = xreallocarray(t->lanes, t->capheap, sizeof *t->lanes);
    }
    int slot = t->nslots++;
    t->lanes[slot] = (lane_ref){g, lane};
    metadata(t, trace_slot_tid(slot), "thread_name", &(trace_arg){"name", name, 0});
    metadata(t, trace_slot_tid(slot), "thread_sort_index", &(trace_arg){"sort_index", NULL, slot});
    return slot;
}

int trace_slot_acquire(trace *t)
{
    if (t->nheap)
        return heap_pop(t);
    char name[32];
    snprintf(name, sizeof name, "slot %d", t->nslots);
    return new_slot(t, name, NULL, 0);
}

int trace_lane_acquire(trace *t, const char *group)
{
    strmap_node *n = strmap_find(&t->groups, group);
    lane_group *g;
    if (n) {
        g = strmap_entry(n, lane_group, node);
    } else {
        g = xcalloc(1, sizeof *g);
        g->key = xstrdup(group);
        strmap_add(&t->groups, &g->node, g->key);
    }
    for (int i = 0; i < g->n; i++)
        if (!g->busy[i]) {
            g->busy[i] = true;
            return g->slot[i];
        }
    g->slot = xreallocarray(g->slot, (size_t)g->n + 1, sizeof *g->slot);
    g->busy = xreallocarray(g->busy, (size_t)g->n + 1, sizeof *g->busy);
    char name[300];
    snprintf(name, sizeof name, "%.280s #%d", group, g->n);
    g->slot[g->n] = new_slot(t, name, g, g->n);
    g->busy[g->n] = true;
    return g->slot[g->n++];
}

void trace_slot_release(trace *t, int slot)
{
    if (slot < 0 || slot >= t->nslots)
        return;
    if (t->lanes[slot].group) {
        t->lanes[slot].group->busy[t->lanes[slot].lane] = false;
        return;
    }
    if (t->nheap >= t->capheap)
        return;
    size_t i = t->nheap++;
    while (i > 0 && t->heap[(i - 1) / 2] > slot) {
        t->heap[i] = t->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    t->heap[i] = slot;
}

/* ---- events ----------------------------------------------------------------------- */

static void event_head(trace *t, const char *name, const char *cat, const char *ph)
{
    begin_event(t);
    fputs("{\"name\": ", t->out);
    json_write_string(t->out, name ? name : "");
    if (cat) {
        fputs(", \"cat\": ", t->out);
        json_write_string(t->out, cat);
    }
    fprintf(t->out, ", \"ph\": \"%s\"", ph);
}

void trace_complete(trace *t, int tid, const char *name, const char *cat, uint64_t ts, uint64_t dur,
                    const trace_arg *args, size_t nargs)
{
    event_head(t, name, cat, "X");
    fprintf(t->out, ", \"ts\": %llu, \"dur\": %llu, \"pid\": %d, \"tid\": %d",
            (unsigned long long)ts, (unsigned long long)dur, t->pid, tid);
    write_args(t, args, nargs);
    fputc('}', t->out);
}

void trace_instant(trace *t, int tid, const char *name, const char *cat, uint64_t ts,
                   const trace_arg *args, size_t nargs)
{
    event_head(t, name, cat, "i");
    fprintf(t->out, ", \"s\": \"%s\", \"ts\": %llu, \"pid\": %d, \"tid\": %d", tid < 0 ? "g" : "t",
            (unsigned long long)ts, t->pid, tid < 0 ? 0 : tid);
    write_args(t, args, nargs);
    fputc('}', t->out);
}
