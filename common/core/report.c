/* report.c — the list of FetchStatistic records and the two report formats:
 * text (after the chapter's reporting.py) and jsonl (one object per URL, then a
 * summary). Records are kept in the order they were added; writing sorts an array
 * of pointers by url, ties kept in insertion order, so output is deterministic.
 */
#include "report.h"

#include "alloc.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct report {
    fetch_stat *recs;
    size_t n, cap;
};

report *report_new(void)
{
    return xcalloc(1, sizeof(report));
}

static void stat_free_strings(fetch_stat *st)
{
    free(st->url);
    free(st->url_normalized);
    free(st->next_url);
    free(st->exception);
    free(st->content_type);
    free(st->encoding);
    free(st->referrer);
}

void report_free(report *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++)
        stat_free_strings(&r->recs[i]);
    free(r->recs);
    free(r);
}

static char *dup_or_null(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

void report_add(report *r, const fetch_stat *st)
{
    if (!r || !st)
        return;
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 64;
        r->recs = xreallocarray(r->recs, r->cap, sizeof *r->recs);
    }
    fetch_stat_copy(&r->recs[r->n++], st);
}

void fetch_stat_copy(fetch_stat *dst, const fetch_stat *src)
{
    *dst = *src;
    dst->url = dup_or_null(src->url);
    dst->url_normalized = dup_or_null(src->url_normalized);
    dst->next_url = dup_or_null(src->next_url);
    dst->exception = dup_or_null(src->exception);
    dst->content_type = dup_or_null(src->content_type);
    dst->encoding = dup_or_null(src->encoding);
    dst->referrer = dup_or_null(src->referrer);
}

void fetch_stat_clear(fetch_stat *st)
{
    stat_free_strings(st);
    memset(st, 0, sizeof *st);
}

size_t report_count(const report *r)
{
    return r ? r->n : 0;
}

const fetch_stat *report_get(const report *r, size_t i)
{
    return (r && i < r->n) ? &r->recs[i] : NULL;
}

/* ---- sorting ---------------------------------------------------------------- */

/* Pointers into r->recs; their addresses give the insertion order for ties. */
static int cmp_by_url(const void *a, const void *b)
{
    const fetch_stat *x = *(const fetch_stat *const *)a;
    const fetch_stat *y = *(const fetch_stat *const *)b;
    int c = strcmp(x->url ? x->url : "", y->url ? y->url : "");
    if (c)
        return c;
    return (x > y) - (x < y);
}

/* Sorted view of the records (caller frees), or NULL when empty. */
static const fetch_stat **sorted_view(const report *r)
{
    if (!r || r->n == 0)
        return NULL;
    const fetch_stat **v = xreallocarray(NULL, r->n, sizeof *v);
    for (size_t i = 0; i < r->n; i++)
        v[i] = &r->recs[i];
    qsort(v, r->n, sizeof *v, cmp_by_url);
    return v;
}

static const report_summary *summary_or_empty(const report_summary *sum)
{
    static const report_summary empty;
    return sum ? sum : &empty;
}

/* ---- text ------------------------------------------------------------------- */

/* reporting.py's Stats: named counters, printed sorted by name. Only a handful of
 * distinct keys exist (fail, redirect, html, ..., one per error status), so a
 * linear search is enough. */
typedef struct counter {
    char key[32];
    long long count;
} counter;

typedef struct stats {
    counter *c;
    size_t n, cap;
} stats;

static void stats_add(stats *s, const char *key, long long by)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->c[i].key, key) == 0) {
            s->c[i].count += by;
            return;
        }
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 16;
        s->c = xreallocarray(s->c, s->cap, sizeof *s->c);
    }
    snprintf(s->c[s->n].key, sizeof s->c[s->n].key, "%s", key);
    s->c[s->n].count = by;
    s->n++;
}

static int cmp_counter(const void *a, const void *b)
{
    return strcmp(((const counter *)a)->key, ((const counter *)b)->key);
}

static void stats_write(stats *s, FILE *out)
{
    if (s->n)
        qsort(s->c, s->n, sizeof *s->c, cmp_counter);
    for (size_t i = 0; i < s->n; i++)
        fprintf(out, "%10lld %s\n", s->c[i].count, s->c[i].key);
}

/* Python prints None for a missing value. */
static const char *or_none(const char *s)
{
    return s ? s : "None";
}

static void put_status(int status, FILE *out)
{
    if (status < 0)
        fputs("None", out);
    else
        fprintf(out, "%d", status);
}

/* reporting.py's url_report: one line, and the counters it feeds. Every string came
 * from the network one way or another (a Content-Type, a Location, an error text), so
 * each goes through text_write_string. */
static void url_report(const fetch_stat *st, stats *s, FILE *out)
{
    text_write_string(out, or_none(st->url));
    if (st->exception) {
        stats_add(s, "fail", 1);
        fputs(" error ", out);
        text_write_string(out, st->exception);
        fputc('\n', out);
        return;
    }
    fputc(' ', out);
    put_status(st->status, out);
    if (st->next_url) {
        stats_add(s, "redirect", 1);
        fputs(" redirect ", out);
        text_write_string(out, st->next_url);
        fputc('\n', out);
        return;
    }
    if (st->content_type && strcmp(st->content_type, "text/html") == 0) {
        stats_add(s, "html", 1);
        stats_add(s, "html_bytes", st->size);
    } else if (st->status == 200) {
        stats_add(s, "other", 1);
        stats_add(s, "other_bytes", st->size);
    } else {
        char key[32];
        if (st->status < 0)
            snprintf(key, sizeof key, "status_None");
        else
            snprintf(key, sizeof key, "status_%d", st->status);
        stats_add(s, "error", 1);
        stats_add(s, "error_bytes", st->size);
        stats_add(s, key, 1);
    }
    fputc(' ', out);
    text_write_string(out, or_none(st->content_type));
    fputc(' ', out);
    text_write_string(out, or_none(st->encoding));
    fprintf(out, " %lld %d/%d\n", st->size, st->num_new_urls, st->num_urls);
}

void report_write_text(report *r, const report_summary *sum, FILE *out)
{
    if (!out)
        return;
    sum = summary_or_empty(sum);
    size_t n = report_count(r);
    const fetch_stat **view = sorted_view(r);
    stats s = {0};

    fputs("*** Report ***\n", out);
    for (size_t i = 0; i < n; i++)
        url_report(view[i], &s, out);
    free(view);
    if (sum->error)
        fprintf(out, "Failed: %s\n", sum->error);
    else if (sum->interrupted)
        fputs("Interrupted\n", out);

    double dt = isfinite(sum->seconds) && sum->seconds > 0 ? sum->seconds : 0;
    double speed = (dt > 0 && sum->max_tasks > 0) ? (double)n / dt / sum->max_tasks : 0;
    fprintf(out, "Finished %zu urls in %.3f secs (max_tasks=%d) (%.3f urls/sec/task)\n", n, dt,
            sum->max_tasks, speed);
    stats_write(&s, out);
    free(s.c);
    fprintf(out, "Todo: %zu\nDone: %zu\n", sum->todo, n);
    for (size_t i = 0; i < sum->ncounts; i++) {
        text_write_string(out, sum->counts[i].name);
        fprintf(out, ": %lld\n", sum->counts[i].n);
    }

    time_t now = time(NULL);
    char buf[64];
    const char *date = "?";
    if (ctime_r(&now, buf)) {
        buf[strcspn(buf, "\n")] = '\0';
        date = buf;
    }
    fprintf(out, "Date: %s local time\n", date);
}

/* ---- strings: text and JSON ----------------------------------------------- */

/* Length of the valid UTF-8 sequence at p (1..4), or 0 if it is not one. Only
 * shortest forms, no surrogates, nothing above U+10FFFF (RFC 3629). */
static int utf8_len(const unsigned char *p)
{
    unsigned char c = p[0];
    unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    int len;
    if (c >= 0xC2 && c <= 0xDF)
        len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0)
            lo = 0xA0; /* overlong */
        else if (c == 0xED)
            hi = 0x9F; /* surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0)
            lo = 0x90; /* overlong */
        else if (c == 0xF4)
            hi = 0x8F; /* above U+10FFFF */
    } else
        return 0;
    if (p[1] < lo || p[1] > hi)
        return 0;
    /* A NUL terminator fails these checks, so we never read past the string. */
    for (int i = 2; i < len; i++)
        if (p[i] < 0x80 || p[i] > 0xBF)
            return 0;
    return len;
}

/* Whether the UTF-8 sequence at p (len bytes, valid) is a C1 control (U+0080..U+009F),
 * which a terminal may obey as it obeys ESC, or a bidirectional formatting character
 * (U+202A..U+202E, U+2066..U+2069), which reorders what the terminal shows. */
static bool utf8_unsafe_for_terminal(const unsigned char *p, int len)
{
    if (len == 2)
        return p[0] == 0xC2 && p[1] <= 0x9F;
    if (len == 3 && p[0] == 0xE2)
        return (p[1] == 0x80 && p[2] >= 0xAA && p[2] <= 0xAE)
            || (p[1] == 0x81 && p[2] >= 0xA6 && p[2] <= 0xA9);
    return false;
}

void text_write_string(FILE *out, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    if (!out || !s)
        return;
    const unsigned char *p = (const unsigned char *)s;
    const unsigned char *run = p; /* start of bytes written as they are */
    while (*p) {
        if (*p >= 0x20 && *p < 0x7f && *p != '\\') {
            p++;
            continue;
        }
        int len = *p >= 0x80 ? utf8_len(p) : 0;
        if (len && !utf8_unsafe_for_terminal(p, len)) {
            p += len;
            continue;
        }
        fwrite(run, 1, (size_t)(p - run), out);
        if (*p == '\\') {
            fputs("\\\\", out);
            p++;
        } else if (len) { /* a valid but unsafe character: \uXXXX */
            unsigned cp = len == 2
                ? (unsigned)(p[0] & 0x1F) << 6 | (p[1] & 0x3F)
                : (unsigned)(p[0] & 0x0F) << 12 | (unsigned)(p[1] & 0x3F) << 6 | (p[2] & 0x3F);
            fprintf(out, "\\u%04x", cp);
            p += len;
        } else { /* a control byte, DEL or a byte of bad UTF-8 */
            char e[5] = {'\\', 'x', hex[*p >> 4], hex[*p & 15], 0};
            fputs(e, out);
            p++;
        }
        run = p;
    }
    fwrite(run, 1, (size_t)(p - run), out);
}

static void put_escape(unsigned char c, FILE *out)
{
    static const char hex[] = "0123456789abcdef";
    char e[7] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0};
    switch (c) {
    case '"': fputs("\\\"", out); return;
    case '\\': fputs("\\\\", out); return;
    case '\n': fputs("\\n", out); return;
    case '\r': fputs("\\r", out); return;
    case '\t': fputs("\\t", out); return;
    case '\b': fputs("\\b", out); return;
    case '\f': fputs("\\f", out); return;
    default: fputs(e, out); return;
    }
}

void json_write_string(FILE *out, const char *s)
{
    if (!out)
        return;
    if (!s) {
        fputs("null", out);
        return;
    }
    const unsigned char *p = (const unsigned char *)s;
    const unsigned char *run = p; /* start of bytes that need no escaping */
    fputc('"', out);
    while (*p) {
        if (*p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\') {
            p++;
            continue;
        }
        int len = *p >= 0x80 ? utf8_len(p) : 0;
        if (len) {
            p += len;
            continue;
        }
        fwrite(run, 1, (size_t)(p - run), out);
        put_escape(*p, out); /* control, quote, backslash, DEL or a stray byte */
        run = ++p;
    }
    fwrite(run, 1, (size_t)(p - run), out);
    fputc('"', out);
}

long json_line_url(const char *line, size_t len, char *out, size_t *after)
{
    static const char head[] = "{\"url\": \"", hex[] = "0123456789abcdef";
    static const char from[] = "\"\\nrtbf", to[] = "\"\\\n\r\t\b\f";
    if (len < sizeof head - 1 || memcmp(line, head, sizeof head - 1) != 0)
        return -1;
    long n = 0;
    for (size_t i = sizeof head - 1; i < len; i++) {
        char c = line[i];
        if (c == '"') {
            out[n] = '\0';
            if (after)
                *after = i + 1;
            return n;
        }
        if (c != '\\') {
            out[n++] = c;
            continue;
        }
        if (++i >= len)
            return -1;
        const char *e = line[i] ? strchr(from, line[i]) : NULL;
        if (e) {
            out[n++] = to[e - from];
            continue;
        }
        /* \u00XX: a control byte, DEL or a byte of bad UTF-8 (put_escape); never NUL */
        const char *h1, *h2;
        if (line[i] != 'u' || i + 4 >= len || line[i + 1] != '0' || line[i + 2] != '0'
            || !line[i + 3] || !line[i + 4] || !(h1 = strchr(hex, line[i + 3]))
            || !(h2 = strchr(hex, line[i + 4])) || (h1 == hex && h2 == hex))
            return -1;
        out[n++] = (char)((h1 - hex) << 4 | (h2 - hex));
        i += 4;
    }
    return -1; /* no closing quote */
}

void report_utc_time(const struct timespec *at, char *buf, size_t len)
{
    struct tm tm;
    time_t sec = at->tv_sec;
    if (!gmtime_r(&sec, &tm) || len < 25) {
        snprintf(buf, len, "%s", "");
        return;
    }
    size_t n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, len - n, ".%03ldZ", (long)(at->tv_nsec / 1000000));
}

static void json_int_or_null(FILE *out, int v)
{
    if (v < 0)
        fputs("null", out);
    else
        fprintf(out, "%d", v);
}

void report_write_jsonl_record(const fetch_stat *st, FILE *out)
{
    report_write_jsonl_record_by(st, NULL, out);
}

void report_write_jsonl_record_by(const fetch_stat *st, const char *fetched_by, FILE *out)
{
    fputs("{\"url\": ", out);
    json_write_string(out, st->url);
    if (st->url_normalized) {
        fputs(", \"url_normalized\": ", out);
        json_write_string(out, st->url_normalized);
    }
    fputs(", \"next_url\": ", out);
    json_write_string(out, st->next_url);
    fputs(", \"status\": ", out);
    json_int_or_null(out, st->status);
    fputs(", \"exception\": ", out);
    json_write_string(out, st->exception);
    fprintf(out, ", \"size\": %lld, \"content_type\": ", st->size);
    json_write_string(out, st->content_type);
    fputs(", \"encoding\": ", out);
    json_write_string(out, st->encoding);
    fprintf(out, ", \"num_urls\": %d, \"num_new_urls\": %d", st->num_urls, st->num_new_urls);
    if (st->extra & FETCH_STAT_DEPTH)
        fprintf(out, ", \"depth\": %d", st->depth);
    if (st->extra & FETCH_STAT_REFERRER) {
        fputs(", \"referrer\": ", out);
        json_write_string(out, st->referrer);
    }
    if ((st->extra & FETCH_STAT_REQUISITE) && st->requisite)
        fputs(", \"requisite\": true", out);
    if (st->not_modified)
        fputs(", \"not_modified\": true", out);
    if (st->with_http_version) {
        fputs(", \"http_version\": ", out);
        json_write_string(out, st->http_version[0] ? st->http_version : NULL);
    }
    if (st->with_times) {
        fputs(", \"fetched_at\": ", out);
        json_write_string(out, st->fetched_at);
        if (st->elapsed < 0)
            fputs(", \"elapsed\": null", out);
        else
            fprintf(out, ", \"elapsed\": %.6f", st->elapsed);
    }
    if (fetched_by) {
        fputs(", \"fetched_by\": ", out);
        json_write_string(out, fetched_by);
    }
    fputs("}\n", out);
}

const char *const report_skip_names[REPORT_SKIP_REASONS] = {
    "offsite", "excluded", "not_included", "scheme", "depth", "max_pages", "robots", "redirects"};

static void write_skipped(const size_t *n, FILE *out)
{
    size_t all = 0;
    for (int i = 0; i < REPORT_SKIP_REASONS; i++)
        all += n[i];
    fprintf(out, ", \"skipped\": {\"total\": %zu", all);
    for (int i = 0; i < REPORT_SKIP_REASONS; i++)
        fprintf(out, ", \"%s\": %zu", report_skip_names[i], n[i]);
    fputc('}', out);
}

void report_write_jsonl_summary(size_t done, const report_summary *sum, FILE *out)
{
    sum = summary_or_empty(sum);
    double dt = isfinite(sum->seconds) && sum->seconds > 0 ? sum->seconds : 0;
    double rate = dt > 0 ? (double)done / dt : 0;
    fprintf(out,
            "{\"summary\": {\"done\": %zu, \"seconds\": %.3f, \"max_tasks\": %d, "
            "\"urls_per_sec\": %.3f, \"todo\": %zu, \"stage\": ",
            done, dt, sum->max_tasks, rate, sum->todo);
    json_write_string(out, sum->stage);
    fputs(", \"transport\": ", out);
    json_write_string(out, sum->transport);
    fputs(", \"selector\": ", out);
    json_write_string(out, sum->selector);
    if (sum->tally)
        tally_write_json(sum->tally, out);
    fprintf(out, ", \"peak_in_flight\": %zu, \"interrupted\": %s", sum->peak_in_flight,
            sum->interrupted ? "true" : "false");
    if (sum->runs) /* a crawl resumed: the whole crawl's totals too */
        fprintf(out, ", \"crawl_done\": %zu, \"runs\": %u", sum->crawl_done, sum->runs);
    if (sum->error) {
        fputs(", \"error\": ", out);
        json_write_string(out, sum->error);
    }
    if (sum->skipped)
        write_skipped(sum->skipped, out);
    for (size_t i = 0; i < sum->ncounts; i++) {
        fputs(", ", out);
        json_write_string(out, sum->counts[i].name);
        fprintf(out, ": %lld", sum->counts[i].n);
    }
    fputs("}}\n", out);
}

void report_write_jsonl(report *r, const report_summary *sum, FILE *out)
{
    if (!out)
        return;
    size_t n = report_count(r);
    const fetch_stat **view = sorted_view(r);
    for (size_t i = 0; i < n; i++)
        report_write_jsonl_record(view[i], out);
    free(view);
    report_write_jsonl_summary(n, sum, out);
}
