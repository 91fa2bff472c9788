/* store.c — the SQLite store, an item pipeline stage (store.h has the schema).
 *
 * The item pipeline runs on the loop thread, and SQLite blocks: so rows are collected
 * here, on the loop, into batches, and a writer coroutine hands each full batch to the
 * thread pool (defer_to_thread, the article's deferToThread and adbapi) to be written
 * as one transaction. One batch is written at a time (one connection, used by one
 * thread at a time). process_item never waits for the disk unless two batches are
 * already waiting: then it awaits room — back-pressure instead of unbounded memory.
 * Its row is added before it waits, so a cancelled worker (Ctrl-C) loses nothing.
 *
 *   open           open FILE.db in the pool: WAL, the schema, one prepared INSERT
 *   process_item   a row into the filling batch; wake the writer when it is full
 *   writer         wait for a full batch (or STORE_BATCH_MS), write it in the pool
 *   close          wake the writer to write what is left, await it, close the file
 */
#include "store.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "future.h"
#include "state.h"
#include "threads.h"

typedef struct row {
    crawl_request *frontier;    /* a URL scheduled (--state): a frontier row, not a page */
    fetch_stat rec;             /* owned copy */
    char *final_url;
    char *headers;              /* "Name: value\r\n"... or NULL */
    char *body;
    size_t body_len;
    char fetched_at[32];
} row;

typedef struct batch {
    row *rows;
    size_t n, cap;
    struct batch *next;
} batch;

typedef struct store {
    char *path;
    app *a;
    sqlite3 *db;                /* touched by one pool job at a time */
    sqlite3_stmt *insert;
    sqlite3_stmt *insert_frontier;  /* --state */
    bool state;                 /* --state: pages without headers and body, and the frontier */
    size_t batch_rows;          /* rows a transaction: STORE_BATCH_ROWS, STATE_BATCH_ROWS */
    uint64_t batch_ms;          /* the longest a row waits: STORE_BATCH_MS, STATE_BATCH_MS */
    batch *filling;             /* rows being collected */
    batch *full, *full_tail;    /* batches waiting for the writer */
    size_t nfull;
    task *writer;
    future wake;                /* the writer waits here for work */
    future room;                /* process_item waits here for room */
    sel_timer *timer;           /* writes a non-empty batch after STORE_BATCH_MS */
    bool closing;
    char *error;                /* the first write that failed */
} store;

/* ---- rows and batches (loop thread) ---- */

static void row_free(row *r)
{
    free(r->frontier);
    fetch_stat_clear(&r->rec);
    free(r->final_url);
    free(r->headers);
    free(r->body);
}

static void batch_free(batch *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->n; i++)
        row_free(&b->rows[i]);
    free(b->rows);
    free(b);
}

static char *headers_text(const response *r)
{
    if (!r || r->nheaders == 0)
        return NULL;
    size_t len = 1;
    for (size_t i = 0; i < r->nheaders; i++)
        len += strlen(r->headers[i].name) + strlen(r->headers[i].value) + 4;
    char *s = xmalloc(len), *p = s;
    for (size_t i = 0; i < r->nheaders; i++)
        p += sprintf(p, "%s: %s\r\n", r->headers[i].name, r->headers[i].value);
    return s;
}

static void utc_now(char *buf, size_t len)
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    size_t n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, len - n, ".%03ldZ", ts.tv_nsec / 1000000);
}

static row *new_row(store *s)
{
    if (!s->filling)
        s->filling = xcalloc(1, sizeof *s->filling);
    batch *b = s->filling;
    if (b->n == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 32;
        b->rows = xreallocarray(b->rows, b->cap, sizeof *b->rows);
    }
    row *r = &b->rows[b->n++];
    memset(r, 0, sizeof *r);
    return r;
}

static void add_row(store *s, const item *it)
{
    row *r = new_row(s);
    fetch_stat_copy(&r->rec, &it->record);
    if (it->response && !s->state) {
        r->final_url = xstrdup(it->response->url);
        r->headers = headers_text(it->response);
        if (it->response->body_len) {
            r->body = xmemdup(it->response->body, it->response->body_len);
            r->body_len = it->response->body_len;
        }
    }
    utc_now(r->fetched_at, sizeof r->fetched_at);
}

/* The filling batch joins the writer's line. */
static void seal(store *s)
{
    batch *b = s->filling;
    s->filling = NULL;
    if (!b)
        return;
    if (s->full_tail)
        s->full_tail->next = b;
    else
        s->full = b;
    s->full_tail = b;
    s->nfull++;
    if (!future_done(&s->wake))
        future_set_result(&s->wake, (coro_value){NULL, 0});
}

static void on_timer(selector *loop, void *arg)
{
    (void)loop;
    store *s = arg;
    s->timer = NULL;
    seal(s);
}

/* ---- SQLite (pool threads) ---- */

static const char schema[] =
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=NORMAL;"
    "CREATE TABLE IF NOT EXISTS pages ("
    " id INTEGER PRIMARY KEY, url TEXT NOT NULL, final_url TEXT, next_url TEXT,"
    " status INTEGER, exception TEXT, size INTEGER NOT NULL, content_type TEXT,"
    " encoding TEXT, num_urls INTEGER NOT NULL, num_new_urls INTEGER NOT NULL,"
    " headers TEXT, body BLOB, fetched_at TEXT NOT NULL);";

static const char insert_sql[] =
    "INSERT INTO pages (url, final_url, next_url, status, exception, size, content_type,"
    " encoding, num_urls, num_new_urls, headers, body, fetched_at)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)";

static const char insert_frontier_sql[] =
    "INSERT OR IGNORE INTO frontier (url, max_redirect, depth, referrer, callback)"
    " VALUES (?1, ?2, ?3, ?4, ?5)";

static coro_error *db_error(store *s, const char *what)
{
    return coro_error_new(CORO_ERROR, 0, "store '%s': %s: %s", s->path, what,
                          s->db ? sqlite3_errmsg(s->db) : "cannot allocate a connection");
}

static coro_value open_work(void *arg, coro_error **err)
{
    store *s = arg;
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    if (sqlite3_open_v2(s->path, &s->db, flags, NULL) != SQLITE_OK ||
        sqlite3_busy_timeout(s->db, 5000) != SQLITE_OK ||
        sqlite3_exec(s->db, schema, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(s->db, insert_sql, -1, &s->insert, NULL) != SQLITE_OK ||
        (s->state && (sqlite3_exec(s->db, state_schema, NULL, NULL, NULL) != SQLITE_OK ||
                      sqlite3_prepare_v2(s->db, insert_frontier_sql, -1,
                                         &s->insert_frontier, NULL) != SQLITE_OK)))
        *err = db_error(s, "open");
    return (coro_value){NULL, 0};
}

static void bind_text(sqlite3_stmt *st, int i, const char *v)
{
    if (v)
        sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, i);
}

static int insert_row(store *s, const row *r)
{
    if (r->frontier) {
        sqlite3_stmt *st = s->insert_frontier;
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, r->frontier->url, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 2, r->frontier->max_redirect);
        sqlite3_bind_int(st, 3, r->frontier->depth);
        bind_text(st, 4, r->frontier->referrer);
        bind_text(st, 5, r->frontier->callback);
        return sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
    }
    sqlite3_stmt *st = s->insert;
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    bind_text(st, 1, r->rec.url);
    bind_text(st, 2, r->final_url);
    bind_text(st, 3, r->rec.next_url);
    if (r->rec.status >= 0)
        sqlite3_bind_int(st, 4, r->rec.status);
    bind_text(st, 5, r->rec.exception);
    sqlite3_bind_int64(st, 6, r->rec.size);
    bind_text(st, 7, r->rec.content_type);
    bind_text(st, 8, r->rec.encoding);
    sqlite3_bind_int(st, 9, r->rec.num_urls);
    sqlite3_bind_int(st, 10, r->rec.num_new_urls);
    bind_text(st, 11, r->headers);
    if (r->body)
        sqlite3_bind_blob64(st, 12, r->body, r->body_len, SQLITE_STATIC);
    bind_text(st, 13, r->fetched_at);
    return sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
}

typedef struct write_job {
    store *s;
    batch *b;
} write_job;

/* One batch, one transaction. */
static coro_value write_work(void *arg, coro_error **err)
{
    write_job *j = arg;
    store *s = j->s;
    if (sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
        *err = db_error(s, "begin");
        return (coro_value){NULL, 0};
    }
    for (size_t i = 0; i < j->b->n; i++) {
        if (insert_row(s, &j->b->rows[i]) < 0) {
            *err = db_error(s, "insert");
            sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
            return (coro_value){NULL, 0};
        }
    }
    if (sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        *err = db_error(s, "commit");
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    }
    return (coro_value){NULL, (long long)j->b->n};
}

static void write_job_free(void *arg)
{
    write_job *j = arg;
    batch_free(j->b);
    free(j);
}

static coro_value close_work(void *arg, coro_error **err)
{
    (void)err;
    store *s = arg;
    sqlite3_finalize(s->insert);
    sqlite3_finalize(s->insert_frontier);
    s->insert = s->insert_frontier = NULL;
    sqlite3_close(s->db);       /* the WAL is checkpointed into the file */
    s->db = NULL;
    return (coro_value){NULL, 0};
}

/* ---- the writer (a Task on the loop) ---- */

typedef struct {
    coro co;
    store *s;
    future *job;                /* the pool job awaited, and its cleanup */
    void (*cleanup)(void *arg);
} writer_frame;

static int writer_body(coro *co)
{
    writer_frame *f = (writer_frame *)co;
    store *s = f->s;
    CORO_BEGIN(co);
    for (;;) {
        while (!s->full && !s->closing) {
            future_clear(&s->wake);
            future_init(&s->wake);
            AWAIT_FUTURE(co, &s->wake);
        }
        if (s->closing)
            seal(s);                            /* what is left */
        if (!s->full)
            break;
        {
            write_job *j = xmalloc(sizeof *j);
            j->s = s;
            j->b = s->full;
            s->full = j->b->next;
            if (!s->full)
                s->full_tail = NULL;
            s->nfull--;
            f->job = defer_to_thread(s->a->pool, write_work, j);
            f->cleanup = write_job_free;
        }
        AWAIT_FUTURE_CATCH(co, f->job);
        defer_release(f->job, f->cleanup);
        f->job = NULL;
        if (!future_done(&s->room))
            future_set_result(&s->room, (coro_value){NULL, 0});
        if (co->err) {
            if (co->err->kind == CORO_CANCELLED)
                CORO_RAISE_ERR(co);
            if (!s->error)
                s->error = xstrdup(co->err->msg);
            CORO_RAISE_ERR(co);                 /* nothing more is written */
        }
    }
    f->job = defer_to_thread(s->a->pool, close_work, s);
    f->cleanup = NULL;
    AWAIT_FUTURE(co, f->job);
    defer_release(f->job, NULL);
    f->job = NULL;
    CORO_END(co);
}

/* Cancelled while a job runs: the job finishes on its own and frees its batch. */
static void writer_finally(coro *co)
{
    writer_frame *f = (writer_frame *)co;
    defer_release(f->job, f->cleanup);
}

static const coro_def writer_def = {"store_writer", __FILE__, writer_body, writer_finally,
                                    sizeof(writer_frame)};

/* ---- the pipeline stage ---- */

typedef struct {
    coro co;
    store *s;
    future *job;
} open_frame;

static int open_body(coro *co)
{
    open_frame *f = (open_frame *)co;
    CORO_BEGIN(co);
    f->job = defer_to_thread(f->s->a->pool, open_work, f->s);
    AWAIT_FUTURE(co, f->job);
    {
        store *s = f->s;
        writer_frame *w = (writer_frame *)coro_new(&writer_def);
        w->s = s;
        s->writer = task_new(s->a->loop, &w->co, "store_writer");
        s->writer->report_errors = 0;       /* said once, by process_item or close */
    }
    CORO_END(co);
}

static void open_finally(coro *co)
{
    defer_release(((open_frame *)co)->job, NULL);
}

static const coro_def open_def = {"store_open", __FILE__, open_body, open_finally,
                                  sizeof(open_frame)};

static coro *store_open(void *self, engine *e)
{
    store *s = self;
    s->a = engine_app(e);
    open_frame *f = (open_frame *)coro_new(&open_def);
    f->s = s;
    return &f->co;
}

/* Waiting for room: two batches are already in line for the disk. */
typedef struct {
    coro co;
    store *s;
} room_frame;

static int room_body(coro *co)
{
    room_frame *f = (room_frame *)co;
    CORO_BEGIN(co);
    while (f->s->nfull >= 2 && !f->s->error) {
        if (future_done(&f->s->room)) {
            future_clear(&f->s->room);
            future_init(&f->s->room);
        }
        AWAIT_FUTURE(co, &f->s->room);
    }
    if (f->s->error)
        CORO_RAISE(co, CORO_ERROR, 0, "%s", f->s->error);
    CORO_END(co);
}

static const coro_def room_def = {"store_room", __FILE__, room_body, NULL,
                                  sizeof(room_frame)};

/* A row is in: its batch goes to the writer when full, or STORE_BATCH_MS later. */
static void added(store *s)
{
    if (s->filling->n >= s->batch_rows) {
        if (s->timer)
            selector_cancel(s->a->loop, s->timer);
        s->timer = NULL;
        seal(s);
    } else if (!s->timer) {
        s->timer = selector_call_later(s->a->loop, s->batch_ms, on_timer, s);
    }
}

void store_frontier_add(void *self, const crawl_request *req)
{
    store *s = self;
    row *r = new_row(s);
    r->frontier = crawl_request_dup(req);
    added(s);
}

static coro *store_process_item(void *self, item *it, bool *drop)
{
    (void)drop;
    store *s = self;
    add_row(s, it);
    added(s);
    if (s->nfull < 2 && !s->error)
        return NULL;                            /* at once: the usual case */
    room_frame *f = (room_frame *)coro_new(&room_def);
    f->s = s;
    return &f->co;
}

/* close: the writer writes what is left, closes the file and ends. */
typedef struct {
    coro co;
    store *s;
} close_frame;

static int close_body(coro *co)
{
    close_frame *f = (close_frame *)co;
    store *s = f->s;
    CORO_BEGIN(co);
    if (!s->writer)
        CORO_RETURN(co, NULL, 0);               /* never opened */
    if (s->timer)
        selector_cancel(s->a->loop, s->timer);
    s->timer = NULL;
    s->closing = true;
    if (!future_done(&s->wake))
        future_set_result(&s->wake, (coro_value){NULL, 0});
    AWAIT_FUTURE_CATCH(co, task_future(s->writer));
    task_free(s->writer);       /* done: its last done-callback was this resumption */
    s->writer = NULL;
    if (co->err && s->error) {
        coro_error_free(co->err);
        co->err = NULL;
        CORO_RAISE(co, CORO_ERROR, 0, "%s", s->error);
    }
    if (co->err)
        CORO_RAISE_ERR(co);
    CORO_END(co);
}

static const coro_def close_def = {"store_close", __FILE__, close_body, NULL,
                                   sizeof(close_frame)};

static coro *store_close(void *self)
{
    close_frame *f = (close_frame *)coro_new(&close_def);
    f->s = self;
    return &f->co;
}

static void store_free(void *self)
{
    store *s = self;
    if (s->timer && s->a)
        selector_cancel(s->a->loop, s->timer);
    task_free(s->writer);
    batch_free(s->filling);
    while (s->full) {
        batch *b = s->full;
        s->full = b->next;
        batch_free(b);
    }
    if (s->db) {
        sqlite3_finalize(s->insert);
        sqlite3_finalize(s->insert_frontier);
        sqlite3_close(s->db);
    }
    future_clear(&s->wake);
    future_clear(&s->room);
    free(s->error);
    free(s->path);
    free(s);
}

item_pipeline state_pipeline(app *a, const char *path)
{
    item_pipeline p = store_pipeline(path);
    store *s = p.self;
    s->a = a;                   /* frontier rows come before open: the roots */
    s->state = true;
    s->batch_rows = STATE_BATCH_ROWS;
    s->batch_ms = STATE_BATCH_MS;       /* what a kill -9 can make repeat */
    p.name = "state";
    p.wants_body = false;
    return p;
}

item_pipeline store_pipeline(const char *path)
{
    store *s = xcalloc(1, sizeof *s);
    s->path = xstrdup(path);
    s->batch_rows = STORE_BATCH_ROWS;
    s->batch_ms = STORE_BATCH_MS;
    future_init(&s->wake);
    future_init(&s->room);
    return (item_pipeline){
        .name = "store",
        .self = s,
        .wants_body = true,
        .open = store_open,
        .process_item = store_process_item,
        .close = store_close,
        .free = store_free,
    };
}
