/* state.c — --state / --resume (state.h): the state's writer, an item pipeline stage
 * on the background writer (writer.h) with the store's pages table (store.h), and its
 * reader, state_restore, which runs once before the crawl. */
#include "state.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "fpset.h"
#include "log.h"
#include "report.h"
#include "store.h"
#include "warc.h"
#include "writer.h"
#include "extension.h"

/* The state's own tables; pages is the store's, with one more column (state.h). */
static const char schema[] =
    "CREATE TABLE IF NOT EXISTS frontier (url TEXT PRIMARY KEY,"
    " max_redirect INTEGER NOT NULL, depth INTEGER NOT NULL DEFAULT 0, referrer TEXT,"
    " callback TEXT) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS runs (id INTEGER PRIMARY KEY, started TEXT NOT NULL,"
    " finished TEXT);"
    /* a request a spider made with dont_filter (it bypasses the seen set, so frontier,
     * one row a URL, cannot hold it), with the pages row of the page it came from: it
     * counts only while that row does (a page fetched again makes it anew) */
    "CREATE TABLE IF NOT EXISTS again (seq INTEGER PRIMARY KEY, page INTEGER NOT NULL,"
    " url TEXT NOT NULL, max_redirect INTEGER NOT NULL, depth INTEGER NOT NULL,"
    " referrer TEXT, callback TEXT);"
    "CREATE INDEX IF NOT EXISTS again_url ON again (url);"
    /* --resume counts each again row's URL's pages rows (requeue_again): a scan of pages
     * per row without it. IF NOT EXISTS is the upgrade: an older file gains it at its
     * first open by a newer crawl-queue, once. */
    "CREATE INDEX IF NOT EXISTS pages_url ON pages (url);";

/* A file of an older crawl-queue has frontier (url, max_redirect) only: the columns
 * are added, its URLs get depth 0 and no referrer (that much is lost: a -v line). */
static const char upgrade[] = "ALTER TABLE frontier ADD COLUMN depth INTEGER NOT NULL DEFAULT 0;"
                              "ALTER TABLE frontier ADD COLUMN referrer TEXT;"
                              "ALTER TABLE frontier ADD COLUMN callback TEXT;";

static int upgrade_frontier(sqlite3 *db, const char *path)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT depth, referrer, callback FROM frontier LIMIT 0", -1, &st,
                           NULL)
        == SQLITE_OK) {
        sqlite3_finalize(st);
        return 0;
    }
    log_info("--state '%s': a file of an older crawl-queue: its URLs get depth 0 and no "
             "referrer",
             path);
    return sqlite3_exec(db, upgrade, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

/* The items a spider wrote to --items, each where its line ends (items.h): which of a
 * URL's items an earlier run wrote; and where the record of the fetch that made it ends
 * in --output (record_end), which tells the fetches of a URL apart (a dont_filter
 * request fetches one again). */
static const char items_schema[] =
    "CREATE TABLE IF NOT EXISTS items (url TEXT NOT NULL, seq INTEGER NOT NULL,"
    " items_end INTEGER NOT NULL, record_end INTEGER)";

static const char insert_item_sql[] =
    "INSERT INTO items (url, seq, items_end, record_end) VALUES (?1, ?2, ?3, ?4)";

/* An items row whose record is done: its pages row, by record_end; a row of an older
 * file (no record_end) by URL. */
#define ITEM_DONE(i)                                                                               \
    "(CASE WHEN " i ".record_end IS NULL THEN " i ".url IN (SELECT url FROM pages)"                \
    " ELSE " i ".record_end IN (SELECT output_end FROM pages WHERE output_end IS NOT NULL) END)"
/* The pages rows of the items past ?1 (their records), by the same rule. */
#define PAGES_OF_ITEMS_PAST                                                                        \
    "url IN (SELECT url FROM items WHERE items_end > ?1 AND record_end IS NULL)"                   \
    " OR output_end IN (SELECT record_end FROM items WHERE items_end > ?1)"

/* A state file from before output_end: its rows are trusted (NULL). */
static const char add_output_end[] = "ALTER TABLE pages ADD COLUMN output_end INTEGER";
/* One from before record_end: its items rows go by URL (NULL). */
static const char add_record_end[] = "ALTER TABLE items ADD COLUMN record_end INTEGER";

static const char insert_page_sql[] =
    "INSERT INTO pages (" STORE_PAGE_COLUMNS ", output_end) VALUES (" STORE_PAGE_VALUES ", ?14)";

static const char insert_again_sql[] =
    "INSERT INTO again (page, url, max_redirect, depth, referrer, callback)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6)";

static const char insert_frontier_sql[] =
    "INSERT OR IGNORE INTO frontier (url, max_redirect, depth, referrer, callback)"
    " VALUES (?1, ?2, ?3, ?4, ?5)";

/* Whether the query probe prepares (a column is there), running alter if not: 0, -1. */
static int has_column(sqlite3 *db, const char *probe, const char *alter)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, probe, -1, &st, NULL) == SQLITE_OK) {
        sqlite3_finalize(st);
        return 0;
    }
    return sqlite3_exec(db, alter, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

/* Whether pages has output_end, adding it if not. */
static int has_output_end(sqlite3 *db)
{
    return has_column(db, "SELECT output_end FROM pages LIMIT 0", add_output_end);
}

/* The items table, with record_end: 0, -1. */
static int items_table(sqlite3 *db)
{
    if (sqlite3_exec(db, items_schema, NULL, NULL, NULL) != SQLITE_OK)
        return -1;
    return has_column(db, "SELECT record_end FROM items LIMIT 0", add_record_end);
}

/* ---- the writer: frontier rows and pages rows, in one line of batches ---- */

typedef struct state_row {
    crawl_request *frontier; /* a URL scheduled: a frontier row, not a page */
    char *item_url;          /* an item written to --items: an items row, not a page */
    int item_seq;
    long long item_record_end; /* its record's end in --output (-1: unknown) */
    store_page page;
    long long output_end;  /* where its --output line ends (-1: unknown) */
    crawl_request **again; /* a page's dont_filter requests (item.again): again rows */
    size_t nagain;
} state_row;

typedef struct state {
    char *path;
    sqlite3 *db; /* touched by one pool job at a time */
    sqlite3_stmt *insert_page, *insert_frontier, *insert_item, *insert_again;
    writer w;
    writer_rows rows; /* of state_row */
} state;

static void row_free(void *row)
{
    state_row *r = row;
    free(r->frontier);
    free(r->item_url);
    for (size_t k = 0; k < r->nagain; k++)
        free(r->again[k]);
    free(r->again);
    store_page_clear(&r->page);
}

static coro_value open_work(void *arg, coro_error **err)
{
    state *s = arg;
    s->db = store_db_open("--state", s->path, schema, err);
    if (s->db
        && (has_output_end(s->db) < 0
            || sqlite3_prepare_v2(s->db, insert_page_sql, -1, &s->insert_page, NULL) != SQLITE_OK
            || sqlite3_prepare_v2(s->db, insert_frontier_sql, -1, &s->insert_frontier, NULL)
                != SQLITE_OK
            || items_table(s->db) < 0
            || sqlite3_prepare_v2(s->db, insert_item_sql, -1, &s->insert_item, NULL) != SQLITE_OK
            || sqlite3_prepare_v2(s->db, insert_again_sql, -1, &s->insert_again, NULL)
                != SQLITE_OK))
        *err = store_db_error(s->db, "--state", s->path, "open");
    return (coro_value){NULL, 0};
}

static int insert_row(void *self, const void *row)
{
    state *s = self;
    const state_row *r = row;
    sqlite3_stmt *st;
    if (r->item_url) {
        st = s->insert_item;
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, r->item_url, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 2, r->item_seq);
        sqlite3_bind_int64(st, 3, r->output_end);
        if (r->item_record_end >= 0)
            sqlite3_bind_int64(st, 4, r->item_record_end);
        else
            sqlite3_bind_null(st, 4);
    } else if (r->frontier) {
        st = s->insert_frontier;
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, r->frontier->url, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 2, r->frontier->max_redirect);
        sqlite3_bind_int(st, 3, r->frontier->depth);
        if (r->frontier->referrer)
            sqlite3_bind_text(st, 4, r->frontier->referrer, -1, SQLITE_STATIC);
        else
            sqlite3_bind_null(st, 4);
        if (r->frontier->callback)
            sqlite3_bind_text(st, 5, r->frontier->callback, -1, SQLITE_STATIC);
        else
            sqlite3_bind_null(st, 5);
    } else {
        st = s->insert_page;
        store_page_bind(st, &r->page);
        if (r->output_end >= 0)
            sqlite3_bind_int64(st, 14, r->output_end);
        /* its dont_filter requests in the same transaction: they count with it */
        if (sqlite3_step(st) != SQLITE_DONE)
            return -1;
        sqlite3_int64 page = sqlite3_last_insert_rowid(s->db);
        for (size_t k = 0; k < r->nagain; k++) {
            const crawl_request *q = r->again[k];
            st = s->insert_again;
            sqlite3_reset(st);
            sqlite3_bind_int64(st, 1, page);
            sqlite3_bind_text(st, 2, q->url, -1, SQLITE_STATIC);
            sqlite3_bind_int(st, 3, q->max_redirect);
            sqlite3_bind_int(st, 4, q->depth);
            if (q->referrer)
                sqlite3_bind_text(st, 5, q->referrer, -1, SQLITE_STATIC);
            else
                sqlite3_bind_null(st, 5);
            if (q->callback)
                sqlite3_bind_text(st, 6, q->callback, -1, SQLITE_STATIC);
            else
                sqlite3_bind_null(st, 6);
            if (sqlite3_step(st) != SQLITE_DONE)
                return -1;
        }
        return 0;
    }
    return sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
}

static coro_value write_work(void *arg, coro_error **err)
{
    writer_rows_job *j = arg;
    state *s = j->self;
    return store_write_rows(s->db, "--state", s->path, j->b->rows, j->b->n, sizeof(state_row),
                            insert_row, s, err);
}

static void finalize(state *s)
{
    sqlite3_finalize(s->insert_page);
    sqlite3_finalize(s->insert_frontier);
    sqlite3_finalize(s->insert_item);
    sqlite3_finalize(s->insert_again);
    s->insert_page = s->insert_frontier = s->insert_item = s->insert_again = NULL;
    sqlite3_close(s->db); /* the WAL is checkpointed into the file */
    s->db = NULL;
}

/* The run is over (also after Ctrl-C; a run killed has no finished). */
static coro_value close_work(void *arg, coro_error **err)
{
    state *s = arg;
    char now[32];
    store_utc_now(now, sizeof now);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db,
                           "UPDATE runs SET finished = ?1 WHERE id = (SELECT max(id) "
                           "FROM runs)",
                           -1, &st, NULL)
            != SQLITE_OK
        || sqlite3_bind_text(st, 1, now, -1, SQLITE_STATIC) != SQLITE_OK
        || sqlite3_step(st) != SQLITE_DONE)
        *err = store_db_error(s->db, "--state", s->path, "close");
    sqlite3_finalize(st);
    finalize(s);
    return (coro_value){NULL, 0};
}

static const writer_ops state_ops = {
    .name = "state_writer",
    .open = open_work,
    .write = write_work,
    .close = close_work,
};

static coro *state_open(void *self, engine *e)
{
    return writer_open(&((state *)self)->w, e);
}

/* The engine hands a record to the pipeline only once its --output line is written
 * (engine.h): so a pages row is never ahead of the output. */
static coro *state_process_item(void *self, item *it, bool *drop)
{
    (void)drop;
    state *s = self;
    state_row *r = writer_row(&s->rows);
    store_page_fill(&r->page, it, false);
    r->output_end = it->output_end;
    if (it->nagain) {
        r->again = xcalloc(it->nagain, sizeof *r->again);
        for (r->nagain = 0; r->nagain < it->nagain; r->nagain++)
            r->again[r->nagain] = crawl_request_dup(it->again[r->nagain]);
    }
    writer_row_added(&s->rows);
    return writer_room(&s->w);
}

/* An item written to --items (its line's end known): an items row, after the rows of
 * the URL's links and before its pages row, in the same line of batches. */
static coro *state_process_spider_item(void *self, spider_item *it, bool *drop)
{
    (void)drop;
    state *s = self;
    if (it->items_end < 0)
        return NULL;
    state_row *r = writer_row(&s->rows);
    r->item_url = xstrdup(it->request->url);
    r->item_seq = it->seq;
    r->item_record_end = it->record_end;
    r->output_end = it->items_end;
    writer_row_added(&s->rows);
    return writer_room(&s->w);
}

void state_frontier_add(void *self, const crawl_request *req)
{
    state *s = self;
    state_row *r = writer_row(&s->rows);
    r->frontier = crawl_request_dup(req);
    writer_row_added(&s->rows);
}

static coro *state_close(void *self)
{
    return writer_close(&((state *)self)->w);
}

static void state_free(void *self)
{
    state *s = self;
    writer_rows_clear(&s->rows);
    writer_clear(&s->w);
    if (s->db)
        finalize(s);
    free(s->path);
    free(s);
}

item_pipeline state_pipeline(app *a, const char *path)
{
    state *s = xcalloc(1, sizeof *s);
    s->path = xstrdup(path);
    /* a now: frontier rows come before open (the roots) */
    writer_init(&s->w, &state_ops, s, a);
    writer_rows_init(&s->rows, &s->w, sizeof(state_row), STATE_BATCH_ROWS,
                     STATE_BATCH_MS /* what a kill -9 can make repeat */, row_free);
    return (item_pipeline){
        .name = "state",
        .self = s,
        .open = state_open,
        .process_item = state_process_item,
        .process_spider_item = state_process_spider_item,
        .close = state_close,
        .free = state_free,
    };
}

/* ---- state_restore: before the crawl ---- */

typedef struct restore {
    const crawl_options *o;
    const state_config *c;
    sqlite3 *db;
    sqlite3_stmt *st;
    char *err;
    size_t errlen;
} restore;

/* The first failure says it, in one line; -1. */
static int fail(restore *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(restore *r, const char *fmt, ...)
{
    if (!r->err[0]) {
        int n = snprintf(r->err, r->errlen, "--state '%s': ", r->c->path);
        va_list ap;
        va_start(ap, fmt);
        if (n >= 0 && (size_t)n < r->errlen)
            vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static int db_fail(restore *r)
{
    return fail(r, "%s", r->db ? sqlite3_errmsg(r->db) : "cannot allocate a connection");
}

static int prepare(restore *r, const char *sql)
{
    sqlite3_finalize(r->st);
    r->st = NULL;
    return sqlite3_prepare_v2(r->db, sql, -1, &r->st, NULL) == SQLITE_OK ? 0 : db_fail(r);
}

/* sqlite3_step: 1 a row, 0 the end, -1 an error (said). */
static int step(restore *r)
{
    int rc = sqlite3_step(r->st);
    if (rc == SQLITE_ROW)
        return 1;
    return rc == SQLITE_DONE ? 0 : db_fail(r);
}

/* A text column that must be there: NULL (said) when the row is damaged. */
static const char *text(restore *r, int col, const char *table)
{
    const char *v = (const char *)sqlite3_column_text(r->st, col);
    if (!v) {
        if (sqlite3_errcode(r->db) == SQLITE_NOMEM)
            alloc_oom(0);
        fail(r, "damaged: a row of %s without a URL (--state needs a new file)", table);
    }
    return v;
}

/* PRAGMA quick_check: "ok", or the file is damaged. */
static int check_intact(restore *r)
{
    if (prepare(r, "PRAGMA quick_check(1)") < 0 || step(r) <= 0)
        return db_fail(r);
    const char *v = (const char *)sqlite3_column_text(r->st, 0);
    if (v && strcmp(v, "ok") == 0)
        return 0;
    char what[256];
    snprintf(what, sizeof what, "%s", v ? v : "no answer");
    for (char *c = what; *c; c++) /* its report: one line */
        if (*c == '\n')
            *c = ' ';
    return fail(r, "damaged (%s): --resume cannot trust it", what);
}

/* The crawl of this file, if it holds one: the same roots and options, and --resume. */
static int check_crawl(restore *r, long long *known)
{
    if (prepare(r, "SELECT count(*) FROM frontier") < 0 || step(r) <= 0)
        return db_fail(r);
    *known = sqlite3_column_int64(r->st, 0);
    char *id = crawl_identity(r->o);
    int rc = 0;
    if (*known > 0 && !r->c->resume) {
        rc = fail(r,
                  "holds a crawl already (%lld URLs): add --resume to go on with it, or "
                  "name a new file",
                  *known);
    } else if (*known > 0) {
        int got = prepare(r, "SELECT value FROM meta WHERE key = 'crawl'") < 0 ? -1 : step(r);
        const char *was = got > 0 ? (const char *)sqlite3_column_text(r->st, 0) : NULL;
        if (got < 0)
            rc = -1;
        else if (!was || strcmp(was, id) != 0)
            rc = fail(r,
                      "is the crawl of other roots or options (--resume needs the same "
                      "roots, --max-redirect, --max-pages, --exclude and --strict)");
    } else if (prepare(r, "INSERT OR REPLACE INTO meta VALUES ('crawl', ?1)") < 0
               || sqlite3_bind_text(r->st, 1, id, -1, SQLITE_TRANSIENT) != SQLITE_OK
               || step(r) < 0) {
        rc = db_fail(r);
    }
    free(id);
    return rc;
}

/* The pages rows whose --output line is not in the output (it was cut, or deleted):
 * gone, so that their URLs are fetched again. How many, or -1. */
static long long forget_unwritten(restore *r, long long output_size)
{
    if (prepare(r, "DELETE FROM pages WHERE output_end > ?1") < 0
        || sqlite3_bind_int64(r->st, 1, output_size) != SQLITE_OK || step(r) < 0)
        return db_fail(r);
    return sqlite3_changes(r->db);
}

/* The ends of the pages rows' lines in --output, sorted (*n of them, *ends NULL when
 * none): 1, or 0 when a row of an older file has none (then nothing is cut), or -1. */
static int committed_ends(restore *r, long long **ends, size_t *n)
{
    size_t cap = 0;
    *ends = NULL;
    *n = 0;
    if (prepare(r, "SELECT count(*) FROM pages WHERE output_end IS NULL") < 0 || step(r) <= 0)
        return db_fail(r);
    if (sqlite3_column_int64(r->st, 0) > 0)
        return 0;
    int rc = prepare(r, "SELECT output_end FROM pages ORDER BY output_end");
    while (rc == 0 && (rc = step(r)) > 0) {
        if (*n == cap)
            *ends = xreallocarray(*ends, cap = cap ? 2 * cap : 1024, sizeof **ends);
        (*ends)[(*n)++] = sqlite3_column_int64(r->st, 0);
        rc = 0;
    }
    return rc < 0 ? -1 : 1;
}

/* Where the first line of fd that is no committed record starts (a record whose
 * pages row a kill -9 left uncommitted, a torn line, a summary): the lines before it
 * are all records the state counts done. -1 on a read error. */
static long long committed_prefix(int fd, const long long *ends, size_t n)
{
    char buf[65536];
    long long at = 0, line = 0;
    size_t j = 0;
    for (;;) {
        ssize_t got = pread(fd, buf, sizeof buf, (off_t)at);
        if (got < 0)
            return -1;
        if (got == 0)
            return line;
        for (ssize_t i = 0; i < got; i++) {
            if (buf[i] != '\n')
                continue;
            long long end = at + i + 1;
            while (j < n && ends[j] < end)
                j++;
            if (j == n || ends[j] != end)
                return line;
            line = end;
        }
        at += got;
    }
}

/* Whether the bytes of fd from at to size are only what outfile_open_append cuts by
 * itself, without a word: a torn last line, or the summary line of the run before. */
static bool only_tail(int fd, long long at, long long size)
{
    char buf[4096];
    static const char summary[] = "{\"summary\":";
    if (size - at > (long long)sizeof buf)
        return false;
    ssize_t got = pread(fd, buf, (size_t)(size - at), (off_t)at);
    if (got != size - at)
        return false;
    char *nl = memchr(buf, '\n', (size_t)got);
    if (!nl)
        return true; /* torn */
    return nl == buf + got - 1 && got >= (ssize_t)sizeof summary - 1
        && memcmp(buf, summary, sizeof summary - 1) == 0;
}

/* Binds ?1 the URL, ?2 and ?3 the range of the URLs of its origin ("http://h:p/" up to
 * "http://h:p0"): SQLITE_OK or an error. */
static int bind_url_origin(sqlite3_stmt *st, const char *url, int len)
{
    const char *sep = memmem(url, (size_t)len, "://", 3);
    const char *slash = sep ? memchr(sep + 3, '/', (size_t)(url + len - (sep + 3))) : NULL;
    int olen = slash ? (int)(slash - url) : len;
    char *lo = xasprintf("%.*s/", olen, url), *hi = xasprintf("%.*s0", olen, url);
    int rc = sqlite3_bind_text(st, 1, url, len, SQLITE_TRANSIENT);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(st, 2, lo, -1, SQLITE_TRANSIENT);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(st, 3, hi, -1, SQLITE_TRANSIENT);
    free(lo);
    free(hi);
    return rc;
}

/* Whether each line of fd from at on (but a torn last line, or a summary) is a record
 * of this crawl: of a URL of its frontier, or of one of their origins (the state's
 * writer may not yet have committed a URL whose record is written). An --output that
 * is not this crawl's (another file named by mistake) is never cut. 1, 0 (said), -1. */
static int tail_is_ours(restore *r, int fd, long long at, const char *path)
{
    int dfd = dup(fd);
    FILE *f = dfd >= 0 ? fdopen(dfd, "r") : NULL;
    if (!f || fseeko(f, (off_t)at, SEEK_SET) < 0) {
        if (f)
            fclose(f);
        else if (dfd >= 0)
            close(dfd);
        return fail(r, "--resume: reading --output '%s': %s", path, strerror(errno));
    }
    static const char head[] = "{\"url\": \"";
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int ours = prepare(r,
                       "SELECT 1 FROM frontier WHERE url = ?1 OR (url >= ?2 AND url < ?3) "
                       "LIMIT 1")
            < 0
        ? -1
        : 1;
    while (ours == 1 && (len = getline(&line, &cap, f)) > 0 && line[len - 1] == '\n') {
        line[len - 1] = '\0';
        if (strncmp(line, "{\"summary\":", 11) == 0)
            continue;
        char *end =
            strncmp(line, head, sizeof head - 1) == 0 ? strchr(line + sizeof head - 1, '"') : NULL;
        if (end && memchr(line, '\\', (size_t)(end - line)))
            continue; /* an escape in the URL: not compared */
        sqlite3_reset(r->st);
        if (end
            && bind_url_origin(r->st, line + sizeof head - 1,
                               (int)(end - line - (long)(sizeof head - 1)))
                != SQLITE_OK)
            ours = db_fail(r);
        else if (!end || (ours = step(r)) == 0)
            ours = fail(r,
                        "--resume: --output '%s' holds records that are not of this crawl "
                        "(%.80s): give the --output that goes with it",
                        path, line);
    }
    free(line);
    fclose(f);
    return ours;
}

/* A state file from before output_end: its pages rows do not say where their records
 * end in --output. Read --output once and give each row the end of its URL's first
 * record; a row whose URL has no record there is forgotten (fetched again), as a row
 * whose line is past the end is. After that the file is cut as a new one is (a record
 * the kill left uncommitted, or a record an older crawl-queue wrote twice, ends where
 * no row does). 0, or -1. */
static int backfill_ends(restore *r, const char *path, long long size)
{
    /* (a row without a URL is damage: the reading after says so) */
    if (prepare(r, "SELECT count(*) FROM pages WHERE output_end IS NULL AND url IS NOT NULL") < 0
        || step(r) <= 0)
        return db_fail(r);
    long long old = sqlite3_column_int64(r->st, 0);
    sqlite3_finalize(r->st);
    r->st = NULL;
    if (old == 0 || !path)
        return 0;
    if (sqlite3_exec(r->db,
                     "CREATE TEMP TABLE old_rows (url TEXT PRIMARY KEY, id INTEGER NOT NULL)"
                     " WITHOUT ROWID;"
                     "INSERT INTO temp.old_rows SELECT url, min(id) FROM pages"
                     " WHERE output_end IS NULL AND url IS NOT NULL GROUP BY url;"
                     "BEGIN IMMEDIATE",
                     NULL, NULL, NULL)
        != SQLITE_OK)
        return db_fail(r);
    sqlite3_stmt *find = NULL, *set = NULL, *done = NULL;
    int rc =
        sqlite3_prepare_v2(r->db, "SELECT id FROM temp.old_rows WHERE url = ?1", -1, &find, NULL)
                == SQLITE_OK
            && sqlite3_prepare_v2(r->db, "UPDATE pages SET output_end = ?1 WHERE id = ?2", -1, &set,
                                  NULL)
                == SQLITE_OK
            && sqlite3_prepare_v2(r->db, "DELETE FROM temp.old_rows WHERE url = ?1", -1, &done,
                                  NULL)
                == SQLITE_OK
        ? 0
        : db_fail(r);
    FILE *f = rc == 0 && size > 0 ? fopen(path, "r") : NULL;
    if (rc == 0 && size > 0 && !f)
        rc = fail(r, "--resume: reading --output '%s': %s", path, strerror(errno));
    char *line = NULL, *url = NULL;
    size_t cap = 0, ucap = 0;
    ssize_t len;
    long long at = 0, filled = 0;
    while (rc == 0 && f && at < size && (len = getline(&line, &cap, f)) > 0
           && line[len - 1] == '\n') {
        at += len;
        if ((size_t)len > ucap)
            url = xrealloc(url, ucap = (size_t)len);
        long ulen = json_line_url(line, (size_t)len - 1, url, NULL);
        if (ulen < 0)
            continue;
        sqlite3_reset(find);
        sqlite3_bind_text(find, 1, url, (int)ulen, SQLITE_STATIC);
        int got = sqlite3_step(find);
        if (got == SQLITE_DONE)
            continue; /* no old row: a new row's record, or one to cut */
        sqlite3_reset(set);
        sqlite3_reset(done);
        if (got != SQLITE_ROW || sqlite3_bind_int64(set, 1, at) != SQLITE_OK
            || sqlite3_bind_int64(set, 2, sqlite3_column_int64(find, 0)) != SQLITE_OK
            || sqlite3_step(set) != SQLITE_DONE
            || sqlite3_bind_text(done, 1, url, (int)ulen, SQLITE_STATIC) != SQLITE_OK
            || sqlite3_step(done) != SQLITE_DONE)
            rc = db_fail(r);
        filled++;
    }
    if (rc == 0 && f && ferror(f))
        rc = fail(r, "--resume: reading --output '%s': %s", path, strerror(errno));
    if (f)
        fclose(f);
    free(line);
    free(url);
    sqlite3_finalize(find);
    sqlite3_finalize(set);
    sqlite3_finalize(done);
    long long lost = 0;
    if (rc == 0
        && sqlite3_exec(r->db, "DELETE FROM pages WHERE output_end IS NULL AND url IS NOT NULL",
                        NULL, NULL, NULL)
            != SQLITE_OK)
        rc = db_fail(r);
    lost = rc == 0 ? sqlite3_changes(r->db) : 0;
    if (rc == 0 && sqlite3_exec(r->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        rc = db_fail(r);
    if (rc < 0)
        sqlite3_exec(r->db, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_exec(r->db, "DROP TABLE IF EXISTS temp.old_rows", NULL, NULL, NULL);
    if (rc == 0)
        log_info("--state '%s': a file of an older crawl-queue: %lld of its pages rows got "
                 "where their record ends in --output '%s', read from it",
                 r->c->path, filled, path);
    if (rc == 0 && lost > 0)
        log_warn("--resume: --output '%s' lacks %lld record(s) that --state '%s' counted "
                 "done: fetching them again",
                 path, lost, r->c->path);
    return rc;
}

/* --resume: --output back to what the state committed. A record past the first line
 * the state does not count done is cut, and its pages row forgotten: its URL is
 * fetched again and its record written once more, so that none is there twice. The
 * new end of the output, or -1. */
static long long cut_output(restore *r, const char *path, long long size)
{
    long long *ends;
    size_t n;
    int usable = committed_ends(r, &ends, &n);
    if (usable <= 0 || size == 0) {
        free(ends);
        return usable < 0 ? -1 : size;
    }
    int fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    long long keep = size;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        keep = committed_prefix(fd, ends, n);
        if (keep >= 0 && keep < size && only_tail(fd, keep, size))
            keep = size;
        if (keep >= 0 && keep < size && tail_is_ours(r, fd, keep, path) < 0)
            keep = -2;
        else if (keep < 0 || (keep < size && ftruncate(fd, (off_t)keep) < 0)) {
            fail(r, "--resume: cutting --output '%s': %s", path, strerror(errno));
            keep = -1;
        } else if (keep < size) {
            log_warn("--resume: --output '%s': its last %lld bytes were records that --state "
                     "'%s' had not committed: cut, and their URLs fetched again",
                     path, size - keep, r->c->path);
        }
    }
    if (fd >= 0)
        close(fd);
    free(ends);
    return keep < 0 ? -1 : keep;
}

static void add_archived(void *ctx, const char *uri)
{
    fpset_add(ctx, uri);
}

/* With --warc: the pages rows of responses the archive lacks (a kill -9 lost the
 * records the writer had not written yet): gone, so that their URLs are fetched (and
 * archived) again. How many, or -1. */
static long long forget_unarchived(restore *r)
{
    if (!r->c->warc)
        return 0;
    fpset *archived = fpset_new();
    char why[600];
    long long lost = 0;
    if (warc_archived(r->c->warc, add_archived, archived, why, sizeof why) < 0) {
        fpset_free(archived);
        return fail(r, "--resume: %s", why);
    }
    char **urls = NULL;
    size_t n = 0;
    int rc = prepare(r, "SELECT url FROM pages WHERE status IS NOT NULL");
    while (rc == 0 && (rc = step(r)) > 0) {
        const char *url = text(r, 0, "pages");
        if (!url) {
            rc = -1;
            break;
        }
        if (!fpset_has(archived, url)) {
            urls = xreallocarray(urls, n + 1, sizeof *urls);
            urls[n++] = xstrdup(url);
        }
        rc = 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (rc == 0
            && (prepare(r, "DELETE FROM pages WHERE url = ?1") < 0
                || sqlite3_bind_text(r->st, 1, urls[i], -1, SQLITE_STATIC) != SQLITE_OK
                || step(r) < 0))
            rc = db_fail(r);
        free(urls[i]);
    }
    free(urls);
    fpset_free(archived);
    lost = (long long)n;
    if (rc == 0 && lost > 0)
        log_warn("--resume: --warc '%s' lacks %lld response(s) that --state '%s' counted "
                 "done: fetching them again",
                 r->c->warc->path, lost, r->c->path);
    return rc < 0 ? -1 : lost;
}

static long long file_bytes(const char *path);

/* With --store: the pages rows whose record the store lacks (its writer had not
 * committed it at a kill -9) are gone, so that their URLs are fetched (and stored)
 * again. A store without a run (new to this run: no crawls row) is not asked. How
 * many, or -1. */
static long long forget_unstored(restore *r)
{
    if (!r->c->store || file_bytes(r->c->store) == 0)
        return 0;
    if (prepare(r, "ATTACH DATABASE ?1 AS sto") < 0
        || sqlite3_bind_text(r->st, 1, r->c->store, -1, SQLITE_STATIC) != SQLITE_OK || step(r) < 0)
        return db_fail(r);
    long long lost = 0;
    sqlite3_finalize(r->st);
    r->st = NULL;
    if (sqlite3_exec(r->db, "SELECT 1 FROM sto.pages, sto.crawls LIMIT 0", NULL, NULL, NULL)
        == SQLITE_OK) {
        if (prepare(r,
                    "DELETE FROM main.pages WHERE EXISTS (SELECT 1 FROM sto.crawls)"
                    " AND url NOT IN (SELECT url FROM sto.pages)")
                < 0
            || step(r) < 0)
            lost = -1;
        else
            lost = sqlite3_changes(r->db);
    }
    sqlite3_finalize(r->st);
    r->st = NULL;
    if (sqlite3_exec(r->db, "DETACH DATABASE sto", NULL, NULL, NULL) != SQLITE_OK && lost >= 0)
        lost = db_fail(r);
    if (lost > 0)
        log_warn("--resume: --store '%s' lacks %lld record(s) that --state '%s' counted "
                 "done: fetching them again",
                 r->c->store, lost, r->c->path);
    return lost;
}

/* One integer of a query with ?1 bound to v (v < 0: none bound): *out, and 1; 0 when
 * it is NULL; -1 (said). */
static int query_ll(restore *r, const char *sql, long long v, long long *out)
{
    if (prepare(r, sql) < 0 || (v >= 0 && sqlite3_bind_int64(r->st, 1, v) != SQLITE_OK))
        return db_fail(r);
    int got = step(r);
    if (got <= 0)
        return got < 0 ? -1 : db_fail(r);
    if (sqlite3_column_type(r->st, 0) == SQLITE_NULL)
        return 0;
    *out = sqlite3_column_int64(r->st, 0);
    return 1;
}

/* An SQL statement with ?1 bound to v: the rows it changed, or -1. */
static long long change_ll(restore *r, const char *sql, long long v)
{
    if (prepare(r, sql) < 0 || sqlite3_bind_int64(r->st, 1, v) != SQLITE_OK || step(r) < 0)
        return db_fail(r);
    return sqlite3_changes(r->db);
}

static int cut_file(restore *r, const char *flag, const char *path, long long at)
{
    struct stat st;
    if (stat(path, &st) < 0 || !S_ISREG(st.st_mode) || (long long)st.st_size <= at)
        return 0;
    if (truncate(path, (off_t)at) < 0)
        return fail(r, "--resume: cutting %s '%s': %s", flag, path, strerror(errno));
    log_warn("--resume: %s '%s': its last %lld bytes were of pages fetched again (their "
             "items or records past one that --state '%s' had not committed): cut",
             flag, path, (long long)st.st_size - at, r->c->path);
    return 0;
}

/* --resume with --items: --items back to before the first item of a URL not done (its
 * items rows committed, its pages row not: a kill -9 between them), so that the URLs
 * fetched again write their items anew, as that fetch makes them (fewer, more, or
 * others), each once. Done is of a fetch, not of a URL (ITEM_DONE): a URL fetched again
 * with dont_filter has a pages row (its first fetch's) while the items of the fetch
 * killed have none. A URL done whose items are past that point is forgotten too (it
 * is fetched again, and its record cut from --output with the records after it); a
 * URL that forgets may have items before the point: the next round cuts there. Each
 * round that goes on forgets a pages row, so there are at most as many as rows. 0, -1. */
static int cut_items(restore *r, const char *output)
{
    if (!r->c->items || items_table(r->db) < 0)
        return r->c->items ? db_fail(r) : 0;
    long long items_cut = -1, output_cut = -1, rows = 0;
    if (query_ll(r, "SELECT count(*) FROM pages", -1, &rows) < 0)
        return -1;
    for (long long round = 0; round <= rows; round++) {
        long long first = 0, cut = 0, record = 0, forgot;
        int got =
            query_ll(r, "SELECT min(items_end) FROM items i WHERE NOT " ITEM_DONE("i"), -1, &first);
        if (got <= 0)
            break; /* (or -1, said) */
        if (query_ll(r, "SELECT coalesce(max(items_end), 0) FROM items WHERE items_end < ?1", first,
                     &cut)
                < 0
            || (got = query_ll(r, "SELECT min(output_end) FROM pages WHERE " PAGES_OF_ITEMS_PAST,
                               cut, &record))
                < 0
            || (forgot = change_ll(r, "DELETE FROM pages WHERE " PAGES_OF_ITEMS_PAST, cut)) < 0
            || change_ll(r, "DELETE FROM items WHERE items_end > ?1", cut) < 0)
            return -1;
        items_cut = cut;
        if (!output || got == 0 || forgot == 0)
            continue; /* (the next round finds no URL not done before the cut) */
        /* the records from the first one forgotten on: cut, and their rows forgotten */
        if (query_ll(r, "SELECT coalesce(max(output_end), 0) FROM pages WHERE output_end < ?1",
                     record, &output_cut)
                < 0
            || change_ll(r, "DELETE FROM pages WHERE output_end > ?1", output_cut) < 0)
            return -1;
    }
    if (r->err[0])
        return -1;
    if (items_cut >= 0 && cut_file(r, "--items", r->c->items, items_cut) < 0)
        return -1;
    return output && output_cut >= 0 ? cut_file(r, "--output", output, output_cut) : 0;
}

/* --resume: the dont_filter requests (again rows) to do. One whose page's pages row is
 * gone (forgotten above, or never committed) is dropped: that page is fetched again and
 * makes it anew. A URL's records (pages rows) count first for its frontier row, then
 * for its again rows in the order they were made; the rest go back into the Queue, as
 * they were made (not through the seen set), each with a -v line. 0, or -1. */
static int requeue_again(restore *r, crawl_add_fn put, void *ctx, size_t *finished, size_t *todo,
                         size_t *again)
{
    if (sqlite3_exec(r->db, "DELETE FROM again WHERE page NOT IN (SELECT id FROM pages)", NULL,
                     NULL, NULL)
        != SQLITE_OK)
        return db_fail(r);
    int rc = prepare(r,
                     "SELECT a.url, a.max_redirect, a.depth, a.referrer, a.callback,"
                     " (SELECT count(*) FROM again b WHERE b.url = a.url AND b.seq < a.seq)"
                     " + EXISTS (SELECT 1 FROM frontier f WHERE f.url = a.url),"
                     " (SELECT count(*) FROM pages p WHERE p.url = a.url)"
                     " FROM again a ORDER BY a.seq");
    const char *url;
    while (rc == 0 && (rc = step(r)) > 0) {
        if (!(url = text(r, 0, "again")))
            return -1;
        if (sqlite3_column_int64(r->st, 5) < sqlite3_column_int64(r->st, 6)) {
            (*finished)++;
        } else {
            crawl_request q = {url, sqlite3_column_int(r->st, 1), sqlite3_column_int(r->st, 2),
                               (const char *)sqlite3_column_text(r->st, 3),
                               (const char *)sqlite3_column_text(r->st, 4)};
            put(ctx, &q);
            (*todo)++;
            (*again)++;
            log_info("--resume: a dont_filter request put back: %s (from %s)", url,
                     q.referrer ? q.referrer : "no page");
        }
        rc = 0;
    }
    return rc;
}

/* --resume: done = its record is in the file (and in --output, and in --warc). A
 * page's row comes after the frontier rows of its links, in the same batch or a later
 * one: a page done here has its links in the frontier. */
static int requeue(restore *r, app *a, crawl_add_fn put, void *ctx)
{
    /* The output is opened after these checks (a refused --resume leaves it as it
     * was): its size on disk says where its last whole line can end. */
    long long output_size = crawl_output_end(a->crawl);
    struct stat st;
    if (output_size < 0 && a->opt.output)
        output_size = stat(a->opt.output, &st) == 0 ? (long long)st.st_size : 0;
    if (forget_unarchived(r) < 0 || forget_unstored(r) < 0
        || backfill_ends(r, a->opt.output, output_size) < 0)
        return -1;
    long long cut =
        output_size > 0 && a->opt.output ? cut_output(r, a->opt.output, output_size) : output_size;
    if (cut < 0 && output_size > 0)
        return -1;
    long long lost = output_size >= 0 ? forget_unwritten(r, output_size) : 0;
    if (lost < 0)
        return -1;
    if (lost > 0)
        log_warn("--resume: --output '%s' lacks %lld record(s) that --state '%s' counted "
                 "done: fetching them again",
                 a->opt.output, lost, r->c->path);
    if (cut >= 0 && cut < output_size && forget_unwritten(r, cut) < 0)
        return -1;
    if (cut_items(r, output_size > 0 ? a->opt.output : NULL) < 0)
        return -1;
    fpset *done = fpset_new();
    int rc = prepare(r, "SELECT url FROM pages");
    const char *url;
    while (rc == 0 && (rc = step(r)) > 0) {
        if (!(url = text(r, 0, "pages"))) {
            rc = -1;
            break;
        }
        fpset_add(done, url);
        rc = 0;
    }
    size_t todo = 0, finished = 0, again = 0;
    if (rc == 0)
        rc = prepare(r, "SELECT url, max_redirect, depth, referrer, callback FROM frontier");
    while (rc == 0 && (rc = step(r)) > 0) {
        if (!(url = text(r, 0, "frontier"))) {
            rc = -1;
            break;
        }
        crawl_mark_seen(a->crawl, url);
        if (fpset_has(done, url)) {
            finished++;
        } else {
            crawl_request q = {url, sqlite3_column_int(r->st, 1), sqlite3_column_int(r->st, 2),
                               (const char *)sqlite3_column_text(r->st, 3),
                               (const char *)sqlite3_column_text(r->st, 4)};
            put(ctx, &q);
            todo++;
        }
        rc = 0;
    }
    fpset_free(done);
    if (rc == 0)
        rc = requeue_again(r, put, ctx, &finished, &todo, &again);
    if (rc == 0)
        log_info("--resume: %zu URL(s) done in earlier runs, %zu to do (%zu of them dont_filter "
                 "requests)",
                 finished, todo, again);
    return rc;
}

/* This run's row of runs, and what the earlier ones did, for the summary: the URLs
 * done (pages, after forget_unwritten) and the runs (a file of an older crawl-queue
 * has no runs: its pages are one run). */
static int add_run(restore *r, app *a)
{
    long long done = 0, runs = 0;
    char now[32];
    store_utc_now(now, sizeof now);
    if (prepare(r,
                "SELECT (SELECT count(DISTINCT url) FROM pages), (SELECT count(*) FROM "
                "runs)")
            < 0
        || step(r) <= 0)
        return db_fail(r);
    done = sqlite3_column_int64(r->st, 0);
    runs = sqlite3_column_int64(r->st, 1);
    if (runs == 0 && done > 0)
        runs = 1;
    /* the crawl's token, once (a file of an older crawl-queue gets one now): the
     * store's runs of this crawl say it (store.c) */
    if (sqlite3_exec(r->db,
                     "INSERT OR IGNORE INTO meta VALUES ('token', lower(hex(randomblob(16))))",
                     NULL, NULL, NULL)
        != SQLITE_OK)
        return db_fail(r);
    if (prepare(r, "INSERT INTO runs (started) VALUES (?1)") < 0
        || sqlite3_bind_text(r->st, 1, now, -1, SQLITE_TRANSIENT) != SQLITE_OK || step(r) < 0)
        return db_fail(r);
    crawl_set_earlier_runs(a->crawl, (size_t)done, (unsigned)runs);
    return 0;
}

/* Whether the file at path holds anything of a crawl: 1 a row of runs, frontier or
 * pages; 0 nothing (no file, 0 bytes, no such rows); -1 it cannot tell (not SQLite, or
 * damaged: the checks after say so). Opened without creating it, and only read. */
static int holds_crawl(const char *path)
{
    struct stat st;
    if (stat(path, &st) < 0)
        return 0;
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return -1;
    }
    static const char *const probes[] = {"SELECT 1 FROM runs LIMIT 1",
                                         "SELECT 1 FROM frontier LIMIT 1",
                                         "SELECT 1 FROM pages LIMIT 1"};
    int holds = 0;
    for (size_t i = 0; i < sizeof probes / sizeof probes[0] && holds == 0; i++) {
        sqlite3_stmt *q = NULL;
        int rc = sqlite3_prepare_v2(db, probes[i], -1, &q, NULL);
        if (rc == SQLITE_OK) {
            rc = sqlite3_step(q);
            holds = rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
        } else if (rc != SQLITE_ERROR || !strstr(sqlite3_errmsg(db), "no such table")) {
            holds = -1;
        }
        sqlite3_finalize(q);
    }
    sqlite3_close(db);
    return holds;
}

/* The size of the file at path (0: none, or not a regular file). */
static long long file_bytes(const char *path)
{
    struct stat st;
    return path && stat(path, &st) == 0 && S_ISREG(st.st_mode) ? (long long)st.st_size : 0;
}

/* --resume with a state that holds no crawl: each output must be empty, or it is some
 * other run's (its state deleted, or emptied), and the crawl does not start. */
static int check_outputs_empty(restore *r)
{
    const warc_config *w = r->c->warc;
    char *warc0 = w && w->max_size ? warc_file_name(w->path, 0) : NULL;
    const struct {
        const char *flag, *path;
    } outs[] = {{"--output", r->o->output},
                {"--warc", w ? (warc0 ? warc0 : w->path) : NULL},
                {"--cdx", w ? w->cdx_path : NULL},
                {"--items", r->c->items}};
    int rc = 0;
    for (size_t i = 0; i < sizeof outs / sizeof outs[0] && rc == 0; i++) {
        long long n = file_bytes(outs[i].path);
        if (n > 0)
            rc = fail(r,
                      "--resume: it holds no crawl (deleted, or empty), yet %s '%s' holds "
                      "%lld bytes of one: give the --state that goes with them, or new files",
                      outs[i].flag, outs[i].path, n);
    }
    free(warc0);
    return rc;
}

int state_restore(app *a, const state_config *cfg, crawl_add_fn put, void *ctx, char *err,
                  size_t errlen)
{
    restore r = {.o = &a->opt, .c = cfg, .err = err, .errlen = errlen};
    err[0] = '\0';
    long long known = 0;
    int rc;
    coro_error *e = NULL;
    /* before the file is opened (and made): a refusal leaves every file as it was */
    if (r.c->resume && holds_crawl(r.c->path) == 0 && check_outputs_empty(&r) < 0)
        return -1;
    r.db = store_db_open("--state", r.c->path, schema, &e);
    if (!r.db) {
        snprintf(err, errlen, "%s", e->msg);
        coro_error_free(e);
        return -1;
    }
    if ((r.c->resume && check_intact(&r) < 0) || has_output_end(r.db) < 0
        || upgrade_frontier(r.db, r.c->path) < 0)
        rc = db_fail(&r);
    else if ((rc = check_crawl(&r, &known)) == 0 && known > 0)
        rc = requeue(&r, a, put, ctx);
    if (rc == 0)
        rc = add_run(&r, a);
    sqlite3_finalize(r.st);
    sqlite3_close(r.db);
    return rc;
}

/* ---- the responses of earlier runs (warc.c) ---- */

int state_done_responses(const char *path, void (*fn)(void *ctx, const char *url, long long n),
                         void *ctx, char *err, size_t errlen)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db,
                                "SELECT url, count(*) FROM pages WHERE status IS NOT NULL"
                                " AND url IS NOT NULL GROUP BY url",
                                -1, &st, NULL);
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        fn(ctx, (const char *)sqlite3_column_text(st, 0), sqlite3_column_int64(st, 1));
        rc = SQLITE_OK;
    }
    if (rc != SQLITE_DONE)
        snprintf(err, errlen, "--state '%s': %s", path,
                 db ? sqlite3_errmsg(db) : "cannot allocate a connection");
    sqlite3_finalize(st);
    sqlite3_close(db);
    return rc == SQLITE_DONE ? 0 : -1;
}

/* ---- the items of earlier runs (items.h) ---- */

int state_items_written(const char *path, long long *items_end, long long *done, char *err,
                        size_t errlen)
{
    coro_error *e = NULL;
    sqlite3 *db = store_db_open("--state", path, items_schema, &e);
    *items_end = 0;
    *done = 0;
    if (!db) {
        snprintf(err, errlen, "%s", e->msg);
        coro_error_free(e);
        return -1;
    }
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db,
                                "SELECT coalesce(max(items_end), 0), (SELECT count(*) FROM pages)"
                                " FROM items",
                                -1, &st, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        *items_end = sqlite3_column_int64(st, 0);
        *done = sqlite3_column_int64(st, 1);
        rc = SQLITE_OK;
    }
    if (rc != SQLITE_OK)
        snprintf(err, errlen, "--state '%s': %s", path, sqlite3_errmsg(db));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return rc == SQLITE_OK ? 0 : -1;
}

/* ---- the descriptor (extension.h) ---- */

static bool on(const settings *s)
{
    return s->state != NULL;
}

/* Every URL scheduled and every one done, in the file; with --resume, the URLs an
 * earlier run left go back into the Queue first. */
static int make(engine *e, const settings *s, item_pipeline *out, char *err, size_t errlen)
{
    app *a = engine_app(e);
    warc_config w = warc_config_of(s);
    state_config cfg = {.path = s->state,
                        .resume = s->resume,
                        .warc = s->warc ? &w : NULL,
                        .items = s->items,
                        .store = s->store};
    *out = state_pipeline(a, s->state);
    crawl_add_add_listener(a->crawl, state_frontier_add, out->self);
    if (state_restore(a, &cfg, frontier_add, engine_frontier(e), err, errlen) < 0) {
        crawl_remove_listeners(a->crawl, out->self);
        if (out->free)
            out->free(out->self);
        return -1;
    }
    return 0;
}

/* The descriptor (extension.h): --state, order 100: after --items, and its
 * frontier rows before the pages' rows of the stages after it. */
const extension state_extension = {"state", EXT_PIPELINE, 100, on, .make_pipeline = make};
