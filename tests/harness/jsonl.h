/* jsonl.h — the scenario tests' view of a crawler's --format jsonl output, and a helper
 * that runs a crawler and captures it.
 *
 * The parser handles exactly what report.c writes: one flat object per line whose
 * values are strings (with \" \\ \/ \b \f \n \r \t \uXXXX escapes, surrogate pairs
 * included), numbers, null, true or false, plus one level of nesting for the last
 * line, {"summary": {...}}; and arrays, for the --trace-events file (trace.h), which is
 * one object {"traceEvents": [{...}, ...], ...}.
 *
 * run_crawler forks and execs a crawler with the given arguments, captures stdout and
 * stderr in memory, kills it (SIGKILL) when it runs past the time limit, reaps it, and
 * parses stdout: the records (sorted by url here: a crawler writes each as its URL
 * finishes) and the summary.
 */
#ifndef CRAWLTEST_JSONL_H
#define CRAWLTEST_JSONL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef enum jv_type { JV_ABSENT = 0, JV_NULL, JV_BOOL, JV_NUM, JV_STR, JV_OBJ, JV_ARR } jv_type;

typedef struct jobj jobj;

typedef struct jv {
    jv_type type;
    bool b;
    double num;
    char *str; /* JV_STR: decoded UTF-8, NUL-terminated (may contain no NUL) */
    size_t str_len;
    jobj *obj;        /* JV_OBJ */
    struct jv *items; /* JV_ARR: nitems values */
    size_t nitems;
} jv;

typedef struct jfield {
    char *key;
    jv v;
} jfield;

struct jobj {
    jfield *fields;
    size_t n;
};

/* Parse one JSON object from text[0..len). Returns NULL with a reason in err. */
jobj *jobj_parse(const char *text, size_t len, char *err, size_t errlen);
void jobj_free(jobj *o);

/* The value of key, or NULL when the object has no such key. */
const jv *jobj_get(const jobj *o, const char *key);
/* The string value of key; NULL when absent, null or not a string. */
const char *jobj_str(const jobj *o, const char *key);
/* Whether key is present with the value null. */
bool jobj_is_null(const jobj *o, const char *key);
/* The numeric value of key as an integer; dflt when absent, null or not a number. */
long long jobj_int(const jobj *o, const char *key, long long dflt);
/* The numeric value of key; dflt when absent, null or not a number. */
double jobj_num(const jobj *o, const char *key, double dflt);
/* The nested object of key, or NULL. */
const jobj *jobj_obj(const jobj *o, const char *key);
/* The array value of key (items, nitems), or NULL. */
const jv *jobj_arr(const jobj *o, const char *key);

/* ---- running a crawler -------------------------------------------------------------- */

typedef struct crawl_run {
    int exit_code;   /* the exit status, or -1 when killed by a signal */
    int term_signal; /* the signal that ended it, or 0 */
    bool timed_out;  /* killed because it ran past the limit */
    double seconds;  /* wall time from fork to reaping */
    long maxrss_kb;  /* its peak resident set size (wait4's rusage), KB */
    char *out;       /* stdout, NUL-terminated */
    size_t out_len;
    char *err; /* stderr, NUL-terminated */
    size_t err_len;
    jobj **records; /* each line of stdout but the summary, sorted by url */
    size_t nrecords;
    jobj *summary;      /* the object inside {"summary": ...}, or NULL */
    char *records_text; /* the record lines of stdout, verbatim, sorted by url
                            * (summary left out) */
    char *parse_error;  /* NULL, or "line N: why" for the first line that failed */
} crawl_run;

/* Run argv[0] (a path) with argv (NULL-terminated), stdin from /dev/null, for at most
 * limit_secs seconds. Returns 0 when the child ran (look at r for how it went), or -1
 * when it could not be started (r->parse_error then says why). */
int run_crawler(crawl_run *r, char *const argv[], double limit_secs);
/* The same, and at_secs after the start, while the child still runs (its output not
 * yet at EOF), call at(pid, ctx) once: to look at the child in /proc, send it a
 * signal, ... */
int run_crawler_at(crawl_run *r, char *const argv[], double limit_secs, double at_secs,
                   void (*at)(pid_t pid, void *ctx), void *ctx);
/* The same, and from at_secs on, every 10 ms while the child still runs, call
 * at(pid, ctx) until it returns true: to watch the child's progress without stopping
 * to read its output (a child blocked on a full pipe makes none). signal_at.h. */
int run_crawler_watch(crawl_run *r, char *const argv[], double limit_secs, double at_secs,
                      bool (*at)(pid_t pid, void *ctx), void *ctx);
void crawl_run_free(crawl_run *r);

/* The record whose "url" is url, or NULL. */
const jobj *crawl_run_find(const crawl_run *r, const char *url);
/* Whether the run exited with code and wrote exactly one line on stderr, containing
 * text (a refusal, a usage error). */
bool crawl_run_one_line(const crawl_run *r, int code, const char *text);
/* A description of the run (exit code, stderr head, stdout head) for failure messages;
 * a static buffer, overwritten by the next call. */
const char *crawl_run_describe(const crawl_run *r);

#endif
