/* jsonl.c — see jsonl.h. */
#include "jsonl.h"

#include "alloc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- the parser ------------------------------------------------------------------ */

typedef struct jp {
    const char *s, *end;
    char *err;
    size_t errlen;
    int depth;
} jp;

static int jp_fail(jp *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int jp_fail(jp *p, const char *fmt, ...)
{
    if (p->err && p->errlen && !p->err[0]) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->err, p->errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static void jp_ws(jp *p)
{
    while (p->s < p->end && (*p->s == ' ' || *p->s == '\t' || *p->s == '\r' || *p->s == '\n'))
        p->s++;
}

static int hex4(const char *s, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return -1;
    }
    *out = v;
    return 0;
}

static size_t put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xc0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xe0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        o[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    o[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* At an opening quote: decode the string into a malloc'd buffer. */
static int jp_string(jp *p, char **out, size_t *outlen)
{
    if (p->s >= p->end || *p->s != '"')
        return jp_fail(p, "expected a string");
    p->s++;
    /* the decoded form is never longer than the source */
    size_t cap = (size_t)(p->end - p->s) + 1;
    char *buf = xmalloc(cap), *o = buf;
    while (p->s < p->end && *p->s != '"') {
        unsigned char c = (unsigned char)*p->s;
        if (c < 0x20) {
            free(buf);
            return jp_fail(p, "control byte 0x%02x in a string", c);
        }
        if (c != '\\') {
            *o++ = (char)c;
            p->s++;
            continue;
        }
        if (p->end - p->s < 2) {
            free(buf);
            return jp_fail(p, "unterminated escape");
        }
        char e = p->s[1];
        p->s += 2;
        switch (e) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '/': *o++ = '/'; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u': {
            unsigned cp;
            if (p->end - p->s < 4 || hex4(p->s, &cp) < 0) {
                free(buf);
                return jp_fail(p, "bad \\u escape");
            }
            p->s += 4;
            if (cp >= 0xd800 && cp < 0xdc00 && p->end - p->s >= 6 && p->s[0] == '\\'
                && p->s[1] == 'u') {
                unsigned lo;
                if (hex4(p->s + 2, &lo) == 0 && lo >= 0xdc00 && lo < 0xe000) {
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                    p->s += 6;
                }
            }
            /* \u0000 cannot live in a C string: keep it visible instead */
            if (cp == 0)
                cp = 0xfffd;
            o += put_utf8(o, cp); /* at most 4 bytes for 6 or 12 source bytes */
            break;
        }
        default: free(buf); return jp_fail(p, "bad escape \\%c", e);
        }
    }
    if (p->s >= p->end) {
        free(buf);
        return jp_fail(p, "unterminated string");
    }
    p->s++;
    *o = '\0';
    *out = buf;
    *outlen = (size_t)(o - buf);
    return 0;
}

static int jp_object(jp *p, jobj **out);
static int jp_array(jp *p, jv *v);
static void jv_clear(jv *v);

static int jp_value(jp *p, jv *v)
{
    jp_ws(p);
    if (p->s >= p->end)
        return jp_fail(p, "expected a value, got the end");
    char c = *p->s;
    size_t left = (size_t)(p->end - p->s);
    if (c == '"') {
        v->type = JV_STR;
        return jp_string(p, &v->str, &v->str_len);
    }
    if (c == '{') {
        v->type = JV_OBJ;
        return jp_object(p, &v->obj);
    }
    if (c == '[') {
        v->type = JV_ARR;
        return jp_array(p, v);
    }
    if (left >= 4 && !memcmp(p->s, "null", 4)) {
        v->type = JV_NULL;
        p->s += 4;
        return 0;
    }
    if (left >= 4 && !memcmp(p->s, "true", 4)) {
        v->type = JV_BOOL;
        v->b = true;
        p->s += 4;
        return 0;
    }
    if (left >= 5 && !memcmp(p->s, "false", 5)) {
        v->type = JV_BOOL;
        v->b = false;
        p->s += 5;
        return 0;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        char num[64];
        size_t n = 0;
        while (p->s + n < p->end && n < sizeof num - 1 && strchr("+-0123456789.eE", p->s[n]))
            n++;
        memcpy(num, p->s, n);
        num[n] = '\0';
        char *e;
        errno = 0;
        double d = strtod(num, &e);
        if (e != num + n || errno)
            return jp_fail(p, "bad number '%s'", num);
        v->type = JV_NUM;
        v->num = d;
        p->s += n;
        return 0;
    }
    return jp_fail(p, "unexpected '%c'", c);
}

static void jv_clear(jv *v)
{
    free(v->str);
    jobj_free(v->obj);
    for (size_t i = 0; i < v->nitems; i++)
        jv_clear(&v->items[i]);
    free(v->items);
    memset(v, 0, sizeof *v);
}

/* At '[': the items into v->items (v->type is JV_ARR already). */
static int jp_array(jp *p, jv *v)
{
    if (++p->depth > 4)
        return jp_fail(p, "nested too deeply");
    p->s++;
    size_t cap = 0;
    jp_ws(p);
    if (p->s < p->end && *p->s == ']') {
        p->s++;
        p->depth--;
        return 0;
    }
    for (;;) {
        if (v->nitems == cap) {
            cap = cap ? 2 * cap : 16;
            v->items = xreallocarray(v->items, cap, sizeof *v->items);
        }
        jv *item = &v->items[v->nitems++];
        memset(item, 0, sizeof *item);
        if (jp_value(p, item) < 0)
            return -1; /* the caller's jv_clear frees what was parsed */
        jp_ws(p);
        if (p->s < p->end && *p->s == ',') {
            p->s++;
            continue;
        }
        if (p->s < p->end && *p->s == ']') {
            p->s++;
            break;
        }
        return jp_fail(p, "expected ',' or ']'");
    }
    p->depth--;
    return 0;
}

static int jp_object(jp *p, jobj **out)
{
    *out = NULL;
    if (++p->depth > 4)
        return jp_fail(p, "nested too deeply");
    jp_ws(p);
    if (p->s >= p->end || *p->s != '{')
        return jp_fail(p, "expected '{'");
    p->s++;
    jobj *o = xcalloc(1, sizeof *o);
    size_t cap = 0;
    jp_ws(p);
    if (p->s < p->end && *p->s == '}') {
        p->s++;
        p->depth--;
        *out = o;
        return 0;
    }
    for (;;) {
        jp_ws(p);
        char *key = NULL;
        size_t keylen;
        if (jp_string(p, &key, &keylen) < 0)
            goto bad;
        jp_ws(p);
        if (p->s >= p->end || *p->s != ':') {
            jp_fail(p, "expected ':' after \"%s\"", key);
            free(key);
            goto bad;
        }
        p->s++;
        jv v = {0};
        if (jp_value(p, &v) < 0) {
            free(key);
            jv_clear(&v);
            goto bad;
        }
        for (size_t i = 0; i < o->n; i++)
            if (!strcmp(o->fields[i].key, key)) {
                jp_fail(p, "duplicate key \"%s\"", key);
                free(key);
                jv_clear(&v);
                goto bad;
            }
        if (o->n == cap) {
            cap = cap ? 2 * cap : 16;
            o->fields = xreallocarray(o->fields, cap, sizeof *o->fields);
        }
        o->fields[o->n].key = key;
        o->fields[o->n].v = v;
        o->n++;
        jp_ws(p);
        if (p->s < p->end && *p->s == ',') {
            p->s++;
            continue;
        }
        if (p->s < p->end && *p->s == '}') {
            p->s++;
            break;
        }
        jp_fail(p, "expected ',' or '}'");
        goto bad;
    }
    p->depth--;
    *out = o;
    return 0;
bad:
    jobj_free(o);
    return -1;
}

jobj *jobj_parse(const char *text, size_t len, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    jp p = {.s = text, .end = text + len, .err = err, .errlen = errlen};
    jobj *o;
    if (jp_object(&p, &o) < 0)
        return NULL;
    jp_ws(&p);
    if (p.s != p.end) {
        jp_fail(&p, "trailing bytes after the object");
        jobj_free(o);
        return NULL;
    }
    return o;
}

void jobj_free(jobj *o)
{
    if (!o)
        return;
    for (size_t i = 0; i < o->n; i++) {
        free(o->fields[i].key);
        jv_clear(&o->fields[i].v);
    }
    free(o->fields);
    free(o);
}

const jv *jobj_get(const jobj *o, const char *key)
{
    if (!o)
        return NULL;
    for (size_t i = 0; i < o->n; i++)
        if (!strcmp(o->fields[i].key, key))
            return &o->fields[i].v;
    return NULL;
}

const char *jobj_str(const jobj *o, const char *key)
{
    const jv *v = jobj_get(o, key);
    return v && v->type == JV_STR ? v->str : NULL;
}

bool jobj_is_null(const jobj *o, const char *key)
{
    const jv *v = jobj_get(o, key);
    return v && v->type == JV_NULL;
}

long long jobj_int(const jobj *o, const char *key, long long dflt)
{
    const jv *v = jobj_get(o, key);
    return v && v->type == JV_NUM ? (long long)v->num : dflt;
}

double jobj_num(const jobj *o, const char *key, double dflt)
{
    const jv *v = jobj_get(o, key);
    return v && v->type == JV_NUM ? v->num : dflt;
}

const jv *jobj_arr(const jobj *o, const char *key)
{
    const jv *v = jobj_get(o, key);
    return v && v->type == JV_ARR ? v : NULL;
}

const jobj *jobj_obj(const jobj *o, const char *key)
{
    const jv *v = jobj_get(o, key);
    return v && v->type == JV_OBJ ? v->obj : NULL;
}

/* ---- running a crawler ------------------------------------------------------------ */

typedef struct buf {
    char *data;
    size_t len, cap;
} buf;

static void buf_add(buf *b, const char *d, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        b->data = xrealloc(b->data, cap);
        b->cap = cap;
    }
    memcpy(b->data + b->len, d, n);
    b->len += n;
    b->data[b->len] = '\0';
}

static char *buf_take(buf *b, size_t *len)
{
    if (!b->data)
        buf_add(b, "", 0);
    *len = b->len;
    return b->data;
}

static const double watch_every_secs = 0.01; /* run_crawler_watch's calls */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void set_error(crawl_run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void set_error(crawl_run *r, const char *fmt, ...)
{
    if (r->parse_error)
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->parse_error = xstrdup(msg);
}

/* One record line as it came, for sorting. */
typedef struct rec_line {
    jobj *o;
    const char *text;
    size_t len, pos;
} rec_line;

/* By url (bytewise, as strcmp), ties in output order. */
static int cmp_rec_line(const void *a, const void *b)
{
    const rec_line *x = a, *y = b;
    const char *ux = jobj_str(x->o, "url"), *uy = jobj_str(y->o, "url");
    int c = strcmp(ux ? ux : "", uy ? uy : "");
    return c ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

static void parse_output(crawl_run *r)
{
    size_t cap = 0, line_no = 0;
    rec_line *lines = NULL;
    const char *p = r->out, *end = r->out + r->out_len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        line_no++;
        if (le == p) { /* an empty line */
            set_error(r, "line %zu: empty", line_no);
            p = nl ? nl + 1 : end;
            continue;
        }
        char why[200];
        jobj *o = jobj_parse(p, (size_t)(le - p), why, sizeof why);
        if (!o) {
            set_error(r, "line %zu: %s: %.80s", line_no, why, p);
        } else if (o->n == 1 && !strcmp(o->fields[0].key, "summary")
                   && o->fields[0].v.type == JV_OBJ) {
            if (r->summary)
                set_error(r, "line %zu: a second summary", line_no);
            else {
                r->summary = o->fields[0].v.obj;
                o->fields[0].v.obj = NULL;
            }
            if (nl && nl + 1 < end)
                set_error(r, "line %zu: lines after the summary", line_no);
            jobj_free(o);
        } else {
            if (r->summary)
                set_error(r, "line %zu: a record after the summary", line_no);
            if (r->nrecords == cap) {
                cap = cap ? 2 * cap : 64;
                lines = xreallocarray(lines, cap, sizeof *lines);
            }
            lines[r->nrecords] = (rec_line){o, p, (size_t)(le - p), r->nrecords};
            r->nrecords++;
        }
        p = nl ? nl + 1 : end;
    }
    if (r->out_len && r->out[r->out_len - 1] != '\n')
        set_error(r, "stdout does not end in a newline");
    /* the crawler writes each record as its URL finishes: sort them here */
    if (r->nrecords)
        qsort(lines, r->nrecords, sizeof *lines, cmp_rec_line);
    buf text = {0};
    r->records = r->nrecords ? xreallocarray(NULL, r->nrecords, sizeof *r->records) : NULL;
    for (size_t i = 0; i < r->nrecords; i++) {
        r->records[i] = lines[i].o;
        buf_add(&text, lines[i].text, lines[i].len);
        buf_add(&text, "\n", 1);
    }
    free(lines);
    size_t n;
    r->records_text = buf_take(&text, &n);
}

int run_crawler(crawl_run *r, char *const argv[], double limit_secs)
{
    return run_crawler_at(r, argv, limit_secs, 0, NULL, NULL);
}

/* run_crawler_at's callback, as a watch that is done after one call */
typedef struct at_once {
    void (*at)(pid_t pid, void *ctx);
    void *ctx;
} at_once;

static bool call_once(pid_t pid, void *ctx)
{
    const at_once *o = ctx;
    o->at(pid, o->ctx);
    return true;
}

int run_crawler_at(crawl_run *r, char *const argv[], double limit_secs, double at_secs,
                   void (*at)(pid_t pid, void *ctx), void *ctx)
{
    at_once o = {at, ctx};
    return run_crawler_watch(r, argv, limit_secs, at_secs, at ? call_once : NULL, &o);
}

int run_crawler_watch(crawl_run *r, char *const argv[], double limit_secs, double at_secs,
                      bool (*at)(pid_t pid, void *ctx), void *ctx)
{
    memset(r, 0, sizeof *r);
    r->exit_code = -1;
    int out[2] = {-1, -1}, err[2] = {-1, -1};
    if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0) {
        set_error(r, "pipe: %s", strerror(errno));
        goto fail_pipes;
    }
    double t0 = now_s();
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        set_error(r, "fork: %s", strerror(errno));
        goto fail_pipes;
    }
    if (pid == 0) {
        /* die with the test program, whatever ends it */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0)
            _exit(127);
        close_range(3, ~0U, 0);
        signal(SIGPIPE, SIG_DFL);
        execv(argv[0], argv);
        dprintf(2, "exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(out[1]);
    close(err[1]);
    out[1] = err[1] = -1;

    buf ob = {0}, eb = {0};
    struct pollfd pf[2] = {{.fd = out[0], .events = POLLIN}, {.fd = err[0], .events = POLLIN}};
    int open_fds = 2;
    bool killed = false;
    double deadline = t0 + limit_secs, next_at = t0 + at_secs;
    /* bounded: every pass either reads, sees EOF, calls at (every watch_every_secs at
     * most), or waits until the deadline, after which the child is killed and its pipes
     * close */
    while (open_fds > 0) {
        double left = deadline - now_s();
        if (left <= 0 && !killed) {
            kill(pid, SIGKILL);
            killed = true;
            r->timed_out = true;
        }
        if (at && !killed && now_s() >= next_at) {
            if (at(pid, ctx)) /* while the child still runs, until it is done */
                at = NULL;
            next_at = now_s() + watch_every_secs;
            continue;
        }
        if (at && !killed && next_at - now_s() < left)
            left = next_at - now_s();
        int ms = killed ? 2000 : (int)(left * 1000) + 1;
        int n = poll(pf, 2, ms);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (killed && (n == 0 || now_s() > deadline + 5))
            break; /* killed, but something else holds the pipes */
        for (int i = 0; i < 2; i++) {
            if (pf[i].fd < 0 || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            char chunk[65536];
            ssize_t got = read(pf[i].fd, chunk, sizeof chunk);
            if (got > 0)
                buf_add(i == 0 ? &ob : &eb, chunk, (size_t)got);
            else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
                close(pf[i].fd);
                pf[i].fd = -1;
                open_fds--;
            }
        }
    }
    for (int i = 0; i < 2; i++)
        if (pf[i].fd >= 0)
            close(pf[i].fd);
    out[0] = err[0] = -1;

    int status = 0;
    pid_t w;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    /* the pipes are closed: the child is exiting or has exited; wait at most until the
     * deadline, then kill it */
    for (;;) {
        w = wait4(pid, &status, WNOHANG, &ru);
        if (w == pid || (w < 0 && errno != EINTR))
            break;
        if (!killed && now_s() > deadline) {
            kill(pid, SIGKILL);
            killed = true;
            r->timed_out = true;
        }
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    r->seconds = now_s() - t0;
    r->maxrss_kb = ru.ru_maxrss;
    if (w == pid) {
        if (WIFEXITED(status))
            r->exit_code = WEXITSTATUS(status);
        else if (WIFSIGNALED(status))
            r->term_signal = WTERMSIG(status);
    }
    r->out = buf_take(&ob, &r->out_len);
    r->err = buf_take(&eb, &r->err_len);
    parse_output(r);
    return 0;

fail_pipes:
    for (int i = 0; i < 2; i++) {
        if (out[i] >= 0)
            close(out[i]);
        if (err[i] >= 0)
            close(err[i]);
    }
    return -1;
}

void crawl_run_free(crawl_run *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->nrecords; i++)
        jobj_free(r->records[i]);
    free(r->records);
    jobj_free(r->summary);
    free(r->out);
    free(r->err);
    free(r->records_text);
    free(r->parse_error);
    memset(r, 0, sizeof *r);
}

const jobj *crawl_run_find(const crawl_run *r, const char *url)
{
    /* records are sorted by url (bytewise, as strcmp; parse_output): binary search,
     * then a linear fallback, as a record without a url string sorts as "" there */
    size_t lo = 0, hi = r->nrecords;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const char *u = jobj_str(r->records[mid], "url");
        int c = u ? strcmp(u, url) : -1;
        if (c == 0)
            return r->records[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = 0; i < r->nrecords; i++) {
        const char *u = jobj_str(r->records[i], "url");
        if (u && !strcmp(u, url))
            return r->records[i];
    }
    return NULL;
}

bool crawl_run_one_line(const crawl_run *r, int code, const char *text)
{
    size_t lines = 0;
    for (size_t i = 0; i < r->err_len; i++)
        lines += r->err[i] == '\n';
    return r->exit_code == code && lines == 1 && strstr(r->err, text) != NULL;
}

const char *crawl_run_describe(const crawl_run *r)
{
    static char msg[8192];
    snprintf(msg, sizeof msg,
             "exit %d signal %d%s after %.2fs%s%s\n--- stderr ---\n%.2000s\n"
             "--- stdout ---\n%.4000s",
             r->exit_code, r->term_signal, r->timed_out ? " (TIMED OUT, killed)" : "", r->seconds,
             r->parse_error ? "; parse error: " : "", r->parse_error ? r->parse_error : "",
             r->err ? r->err : "", r->out ? r->out : "");
    return msg;
}
