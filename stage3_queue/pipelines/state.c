/* state.c — --state / --resume (state.h): the state's writer, an item pipeline stage
 * on the background writer (writer.h) with the store's pages table (store.h), and its
 * reader, state_restore, which runs once before the crawl. */
#include "state.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "fpset.h"
#include "log.h"
#include "store.h"
#include "writer.h"

/* The state's own tables; pages is the store's (state.h). */
static const char schema[] =
    "CREATE TABLE IF NOT EXISTS frontier (url TEXT PRIMARY KEY,"
    " max_redirect INTEGER NOT NULL) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);";

static const char insert_page_sql[] =
    "INSERT INTO pages (" STORE_PAGE_COLUMNS ") VALUES (" STORE_PAGE_VALUES ")";

static const char insert_frontier_sql[] =
    "INSERT OR IGNORE INTO frontier (url, max_redirect) VALUES (?1, ?2)";

/* ---- the writer: frontier rows and pages rows, in one line of batches ---- */

typedef struct state_row {
    char *frontier_url;         /* a URL scheduled: a frontier row, not a page */
    int max_redirect;
    store_page page;
} state_row;

typedef struct state {
    char *path;
    sqlite3 *db;                /* touched by one pool job at a time */
    sqlite3_stmt *insert_page, *insert_frontier;
    writer w;
    writer_rows rows;           /* of state_row */
} state;

static void row_free(void *row)
{
    state_row *r = row;
    free(r->frontier_url);
    store_page_clear(&r->page);
}

static coro_value open_work(void *arg, coro_error **err)
{
    state *s = arg;
    s->db = store_db_open("--state", s->path, schema, err);
    if (s->db && (sqlite3_prepare_v2(s->db, insert_page_sql, -1, &s->insert_page, NULL) !=
                      SQLITE_OK ||
                  sqlite3_prepare_v2(s->db, insert_frontier_sql, -1, &s->insert_frontier,
                                     NULL) != SQLITE_OK))
        *err = store_db_error(s->db, "--state", s->path, "open");
    return (coro_value){NULL, 0};
}

static int insert_row(void *self, const void *row)
{
    state *s = self;
    const state_row *r = row;
    sqlite3_stmt *st;
    if (r->frontier_url) {
        st = s->insert_frontier;
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, r->frontier_url, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 2, r->max_redirect);
    } else {
        st = s->insert_page;
        store_page_bind(st, &r->page);
    }
    return sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
}

static coro_value write_work(void *arg, coro_error **err)
{
    writer_rows_job *j = arg;
    state *s = j->self;
    return store_write_rows(s->db, "--state", s->path, j->b->rows, j->b->n,
                            sizeof(state_row), insert_row, s, err);
}

static void finalize(state *s)
{
    sqlite3_finalize(s->insert_page);
    sqlite3_finalize(s->insert_frontier);
    s->insert_page = s->insert_frontier = NULL;
    sqlite3_close(s->db);       /* the WAL is checkpointed into the file */
    s->db = NULL;
}

static coro_value close_work(void *arg, coro_error **err)
{
    (void)err;
    finalize(arg);
    return (coro_value){NULL, 0};
}

static const writer_ops state_ops = {
    .name = "state_writer",
    .open = open_work,
    .write = write_work,
    .close = close_work,
};

static coro *state_open(void *self, engine *e) { return writer_open(&((state *)self)->w, e); }

static coro *state_process_item(void *self, item *it, bool *drop)
{
    (void)drop;
    state *s = self;
    state_row *r = writer_row(&s->rows);
    store_page_fill(&r->page, it, false);
    writer_row_added(&s->rows);
    return writer_room(&s->w);
}

void state_frontier_add(void *self, const char *url, int max_redirect)
{
    state *s = self;
    state_row *r = writer_row(&s->rows);
    r->frontier_url = xstrdup(url);
    r->max_redirect = max_redirect;
    writer_row_added(&s->rows);
}

static coro *state_close(void *self) { return writer_close(&((state *)self)->w); }

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
        .close = state_close,
        .free = state_free,
    };
}

/* ---- state_restore: before the crawl ---- */

/* What makes two runs one crawl: the roots and the options that decide which URLs are
 * scheduled. */
static char *crawl_identity(const crawl_options *o)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *m = open_memstream(&buf, &size);
    if (!m)
        alloc_oom(0);
    for (int i = 0; i < o->nroots; i++)
        fprintf(m, "root %s\n", o->roots[i]);
    fprintf(m, "max_redirect %d\nmax_pages %ld\nexclude %s\nstrict %d\n", o->max_redirect,
            o->max_pages, o->exclude ? o->exclude : "", o->strict);
    if (fclose(m) != 0)
        alloc_oom(0);
    return buf;
}

static int db_fail(sqlite3 *db, const char *path, char *err, size_t errlen)
{
    snprintf(err, errlen, "--state '%s': %s", path, db ? sqlite3_errmsg(db) : "cannot open");
    sqlite3_close(db);
    return -1;
}

int state_restore(app *a, crawl_add_fn put, void *ctx, char *err, size_t errlen)
{
    const crawl_options *o = &a->opt;
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(o->state, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
            SQLITE_OK ||
        sqlite3_busy_timeout(db, 5000) != SQLITE_OK ||
        sqlite3_exec(db, schema, NULL, NULL, NULL) != SQLITE_OK)
        return db_fail(db, o->state, err, errlen);

    sqlite3_stmt *st;
    long long known = 0;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM frontier", -1, &st, NULL) != SQLITE_OK)
        return db_fail(db, o->state, err, errlen);
    if (sqlite3_step(st) == SQLITE_ROW)
        known = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);

    char *id = crawl_identity(o);
    int rc = 0;
    if (known > 0 && !o->resume) {
        snprintf(err, errlen, "--state '%s' holds a crawl already (%lld URLs): add --resume "
                 "to go on with it, or name a new file", o->state, known);
        rc = -1;
    } else if (known > 0) {
        const unsigned char *was = NULL;
        if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'crawl'", -1, &st,
                               NULL) != SQLITE_OK) {
            free(id);
            return db_fail(db, o->state, err, errlen);
        }
        if (sqlite3_step(st) == SQLITE_ROW)
            was = sqlite3_column_text(st, 0);
        if (!was || strcmp((const char *)was, id) != 0) {
            snprintf(err, errlen, "--state '%s' is the crawl of other roots or options "
                     "(--resume needs the same roots, --max-redirect, --max-pages, "
                     "--exclude and --strict)", o->state);
            rc = -1;
        }
        sqlite3_finalize(st);
    } else {
        if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO meta VALUES ('crawl', ?1)", -1, &st,
                               NULL) != SQLITE_OK || (sqlite3_bind_text(st, 1, id, -1,
                                                                        SQLITE_STATIC),
                                                      sqlite3_step(st) != SQLITE_DONE)) {
            sqlite3_finalize(st);
            free(id);
            return db_fail(db, o->state, err, errlen);
        }
        sqlite3_finalize(st);
    }
    free(id);
    if (rc < 0 || known == 0) {
        sqlite3_close(db);
        return rc;
    }

    /* --resume: done = its record is in the file. A page's row comes after the frontier
     * rows of its links, in the same batch or a later one: a page done here has its
     * links in the frontier. A page recorded in --output whose row was not committed
     * before a kill -9 is fetched again, and finds its links again. */
    fpset *done = fpset_new();
    if (sqlite3_prepare_v2(db, "SELECT url FROM pages", -1, &st, NULL) == SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW)
            fpset_add(done, (const char *)sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
    }
    size_t todo = 0, finished = 0;
    if (sqlite3_prepare_v2(db, "SELECT url, max_redirect FROM frontier", -1, &st, NULL) !=
        SQLITE_OK) {
        fpset_free(done);
        return db_fail(db, o->state, err, errlen);
    }
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *url = (const char *)sqlite3_column_text(st, 0);
        crawl_mark_seen(a->crawl, url);
        if (fpset_has(done, url)) {
            finished++;
        } else {
            put(ctx, url, sqlite3_column_int(st, 1));
            todo++;
        }
    }
    sqlite3_finalize(st);
    fpset_free(done);
    sqlite3_close(db);
    log_info("--resume: %zu URL(s) done in earlier runs, %zu to do", finished, todo);
    return 0;
}
