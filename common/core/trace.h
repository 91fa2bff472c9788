/* trace.h — --trace-events FILE: a timeline of the crawl in the Chrome trace-event JSON
 * format, which Perfetto (ui.perfetto.dev) and chrome://tracing open.
 *
 *   {"traceEvents": [
 *   {"name": "process_name", "ph": "M", "pid": 3, "tid": 0, "args": {"name": "..."}},
 *   {"name": "thread_name", "ph": "M", "pid": 3, "tid": 1, "args": {"name": "slot 0"}},
 *   {"name": "/p/1.html", "cat": "fetch", "ph": "X", "ts": 120, "dur": 31544, "pid": 3,
 *    "tid": 1, "args": {"url": "http://...", "status": 200, "size": 4107}},
 *   ...
 *   ],
 *   "displayTimeUnit": "ms"}
 *
 * One event per line. ts and dur are whole microseconds of CLOCK_MONOTONIC since
 * trace_open. Tracks (the "threads") are slots: trace_slot_acquire hands out the lowest
 * free slot number, and slot N is tid N + 1, named "slot N" the first time it is used.
 * Writes are buffered; nothing reaches the file in between but whole buffers.
 */
#ifndef CRAWL_TRACE_H
#define CRAWL_TRACE_H

#include <stddef.h>
#include <stdint.h>

typedef struct trace trace;

/* One entry of an event's "args": a string when str is non-NULL, else the number num. */
typedef struct trace_arg {
    const char *key;
    const char *str;
    long long num;
} trace_arg;

/* Create path and write the header and the process_name metadata (pid, name).
 * NULL with one line in err ("cannot open --trace-events 'x': No such file ...") on
 * failure. */
trace *trace_open(const char *path, int pid, const char *process_name, char *err, size_t errlen);
/* Write the footer and close. Returns 0, or -1 when some write failed (err says why).
 * NULL-safe. */
int trace_close(trace *t, char *err, size_t errlen);

/* Microseconds since trace_open. */
uint64_t trace_now(const trace *t);

/* The lowest slot not in use now (0, 1, ...), marked in use; names its track the first
 * time. */
int trace_slot_acquire(trace *t);
/* The same within a group (a host): the group's lowest free lane, its track named
 * "GROUP #N" the first time — so a host's requests line up on its own tracks. Released
 * with trace_slot_release. */
int trace_lane_acquire(trace *t, const char *group);
void trace_slot_release(trace *t, int slot);
/* The track (tid) of a slot. */
int trace_slot_tid(int slot);

/* A complete event ("ph": "X") on track tid: [ts, ts + dur). cat may be NULL. */
void trace_complete(trace *t, int tid, const char *name, const char *cat, uint64_t ts, uint64_t dur,
                    const trace_arg *args, size_t nargs);
/* An instant event ("ph": "i"); tid < 0 makes it global ("s": "g"), else on the track
 * ("s": "t"). */
void trace_instant(trace *t, int tid, const char *name, const char *cat, uint64_t ts,
                   const trace_arg *args, size_t nargs);

#endif
