/* store.c — the SQLite store, an item pipeline stage (store.h has the schema).
 *
 * Rows are collected on the loop thread into batches, and the background writer
 * (writer.h) writes each batch as one transaction in the thread pool. process_item
 * never waits for the disk unless two batches are already waiting: then it awaits room.
 * Its row is added before it waits, so a cancelled worker (Ctrl-C) loses nothing.
 *
 *   open           open FILE.db in the pool: WAL, the schema, one prepared INSERT
 *   process_item   a row into the filling batch (the writer takes it when full, or
 *                  STORE_BATCH_MS later)
 *   close          the writer writes what is left and closes the file
 *
 * The SQLite plumbing (open, a batch's transaction, a pages row) is shared with --state
 * (state.c), whose pages table is this one.
 */
#include "store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "redisurl.h"
#include "writer.h"
#include "extension.h"

typedef struct store {
    char *path;
    sqlite3 *db; /* touched by one pool job at a time */
    sqlite3_stmt *insert, *insert_robots, *insert_link;
    sqlite3_stmt *insert_item;
    long long crawl_id;    /* this run's row of crawls */
    char *roots, *options; /* what it says of this run */
    bool bodies;           /* the pages' bodies kept (not --store-headers-only) */
    char *state;           /* --state FILE.db, whose crawl this store's run is of, or NULL */
    bool resume;           /* --resume: this store goes on with that crawl */
    char *token;           /* that crawl's (state.h's meta 'token'): its crawls rows say it */
    writer w;
    writer_rows rows; /* of store_row */
} store;

/* A row of pages, or of robots (a robots.txt download: no record of the crawl); a
 * page's links when the engine gives them (the referrer middleware: the links table). */
typedef struct store_row {
    store_page page;
    bool robots;
    char **links;
    size_t nlinks;
    /* or (item_json set) an item a spider scraped: no page */
    char *item_url, *item_callback, *item_json;
} store_row;

/* ---- pages rows (loop thread) ---- */

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

/* at (the item's time; now when it has none) in UTC, ISO 8601 with milliseconds. */
static void utc_time(struct timespec at, char *buf, size_t len)
{
    struct timespec ts = at;
    struct tm tm;
    if (ts.tv_sec == 0 && ts.tv_nsec == 0)
        clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    size_t n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, len - n, ".%03ldZ", ts.tv_nsec / 1000000);
}

void store_utc_now(char *buf, size_t len)
{
    utc_time((struct timespec){0, 0}, buf, len);
}

void store_page_fill(store_page *p, const item *it, bool with_response)
{
    fetch_stat_copy(&p->rec, &it->record);
    if (it->response && with_response) {
        p->final_url = xstrdup(it->response->url);
        p->headers = headers_text(it->response);
        if (it->response->body_len) {
            p->body = xmemdup(it->response->body, it->response->body_len);
            p->body_len = it->response->body_len;
        }
    }
    utc_time(it->at, p->fetched_at, sizeof p->fetched_at); /* the record's fetched_at */
}

void store_page_clear(store_page *p)
{
    fetch_stat_clear(&p->rec);
    free(p->final_url);
    free(p->headers);
    free(p->body);
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
    "INSERT INTO pages (" STORE_PAGE_COLUMNS
    ", crawl_id, elapsed, url_normalized) VALUES (" STORE_PAGE_VALUES ", ?14, ?15, ?16)";

/* The store's own tables (store.h): its runs, and the robots.txt it fetched. */
static const char crawls_schema[] =
    "CREATE TABLE IF NOT EXISTS crawls ("
    " id INTEGER PRIMARY KEY, started TEXT NOT NULL, finished TEXT, roots TEXT NOT NULL,"
    " options TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS robots ("
    " id INTEGER PRIMARY KEY, crawl_id INTEGER NOT NULL REFERENCES crawls(id),"
    " url TEXT NOT NULL, final_url TEXT, status INTEGER, headers TEXT, body BLOB,"
    " fetched_at TEXT NOT NULL);"
    "CREATE INDEX IF NOT EXISTS robots_url ON robots (url);";

/* A store of an older crawl-queue: pages without crawl_id. Its rows get a crawls row
 * of their own, from their first fetch to their last; its roots and options are not
 * known. */
static const char upgrade_sql[] =
    "ALTER TABLE pages ADD COLUMN crawl_id INTEGER REFERENCES crawls(id);"
    "INSERT INTO crawls (started, finished, roots, options)"
    " SELECT min(fetched_at), max(fetched_at), '[]', '(not recorded: an older crawl-queue)'"
    " FROM pages HAVING count(*) > 0;"
    "UPDATE pages SET crawl_id = (SELECT max(id) FROM crawls) WHERE crawl_id IS NULL;";

/* Each page's links, filled by the referrer middleware (not with --chapter). */
static const char links_schema[] =
    "CREATE TABLE IF NOT EXISTS links (from_url TEXT NOT NULL, to_url TEXT NOT NULL,"
    " crawl_id INTEGER);"
    "CREATE INDEX IF NOT EXISTS links_to ON links (to_url);";
static const char insert_link_sql[] =
    "INSERT INTO links (from_url, to_url, crawl_id) VALUES (?1, ?2, ?3)";

/* The items a spider scraped (docs/spiders.md): the URL whose response gave it, the
 * callback, the item as JSON (SQLite's json_extract reads it). */
static const char items_schema[] =
    "CREATE TABLE IF NOT EXISTS items (id INTEGER PRIMARY KEY, url TEXT NOT NULL,"
    " callback TEXT NOT NULL, json TEXT NOT NULL, crawl_id INTEGER);";
static const char insert_item_sql[] =
    "INSERT INTO items (url, callback, json, crawl_id) VALUES (?1, ?2, ?3, ?4)";

/* Columns added to a store of an older crawl-queue as to a new one; the rows it holds
 * keep NULL: the record's elapsed and url_normalized (NULL where it is url; store.h),
 * the run's crawl_id in links and items, the --state crawl in crawls. */
static const struct {
    const char *table, *column, *add;
} added_columns[] = {
    {"pages", "elapsed", "ALTER TABLE pages ADD COLUMN elapsed REAL"},
    {"pages", "url_normalized", "ALTER TABLE pages ADD COLUMN url_normalized TEXT"},
    {"links", "crawl_id", "ALTER TABLE links ADD COLUMN crawl_id INTEGER"},
    {"items", "crawl_id", "ALTER TABLE items ADD COLUMN crawl_id INTEGER"},
    {"crawls", "state_token", "ALTER TABLE crawls ADD COLUMN state_token TEXT"},
};

/* A robots.txt URL that an earlier run of this --state crawl (its token, ?8) stored is
 * not stored again: a --resume fetches robots.txt anew, as --warc archives it once. */
static const char insert_robots_sql[] =
    "INSERT INTO robots (crawl_id, url, final_url, status, headers, body, fetched_at)"
    " SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7 WHERE ?8 IS NULL OR NOT EXISTS (SELECT 1 FROM"
    " robots r JOIN crawls c ON c.id = r.crawl_id WHERE r.url = ?2 AND c.id != ?1"
    " AND c.state_token = ?8)";

coro_error *store_db_error(sqlite3 *db, const char *what, const char *path, const char *step)
{
    return coro_error_new(CORO_ERROR, 0, "%s '%s': %s: %s", what, path, step,
                          db ? sqlite3_errmsg(db) : "cannot allocate a connection");
}

sqlite3 *store_db_open(const char *what, const char *path, const char *more_schema,
                       coro_error **err)
{
    sqlite3 *db = NULL;
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    if (sqlite3_open_v2(path, &db, flags, NULL) != SQLITE_OK
        || sqlite3_busy_timeout(db, 5000) != SQLITE_OK
        || sqlite3_exec(db, schema, NULL, NULL, NULL) != SQLITE_OK
        || (more_schema && sqlite3_exec(db, more_schema, NULL, NULL, NULL) != SQLITE_OK)) {
        *err = store_db_error(db, what, path, "open");
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

static void bind_text(sqlite3_stmt *st, int i, const char *v)
{
    if (v)
        sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, i);
}

void store_page_bind(sqlite3_stmt *st, const store_page *p)
{
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    bind_text(st, 1, p->rec.url);
    bind_text(st, 2, p->final_url);
    bind_text(st, 3, p->rec.next_url);
    if (p->rec.status >= 0)
        sqlite3_bind_int(st, 4, p->rec.status);
    bind_text(st, 5, p->rec.exception);
    sqlite3_bind_int64(st, 6, p->rec.size);
    bind_text(st, 7, p->rec.content_type);
    bind_text(st, 8, p->rec.encoding);
    sqlite3_bind_int(st, 9, p->rec.num_urls);
    sqlite3_bind_int(st, 10, p->rec.num_new_urls);
    bind_text(st, 11, p->headers);
    if (p->body)
        sqlite3_bind_blob64(st, 12, p->body, p->body_len, SQLITE_STATIC);
    bind_text(st, 13, p->fetched_at);
}

coro_value store_write_rows(sqlite3 *db, const char *what, const char *path, const void *rows,
                            size_t n, size_t size, int (*insert)(void *self, const void *row),
                            void *self, coro_error **err)
{
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
        *err = store_db_error(db, what, path, "begin");
        return (coro_value){NULL, 0};
    }
    for (size_t i = 0; i < n; i++) {
        if (insert(self, (const char *)rows + i * size) < 0) {
            *err = store_db_error(db, what, path, "insert");
            sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
            return (coro_value){NULL, 0};
        }
    }
    if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        *err = store_db_error(db, what, path, "commit");
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return (coro_value){NULL, 0};
    }
    return (coro_value){NULL, (long long)n};
}

/* Whether table has this column. */
static bool has_column(sqlite3 *db, const char *table, const char *column)
{
    sqlite3_stmt *st;
    char sql[96];
    snprintf(sql, sizeof sql, "SELECT %s FROM %s LIMIT 0", column, table);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return false;
    sqlite3_finalize(st);
    return true;
}

static bool add_columns(sqlite3 *db)
{
    for (size_t i = 0; i < sizeof added_columns / sizeof added_columns[0]; i++)
        if (!has_column(db, added_columns[i].table, added_columns[i].column)
            && sqlite3_exec(db, added_columns[i].add, NULL, NULL, NULL) != SQLITE_OK)
            return false;
    return true;
}

/* This run's row of crawls: when it started, its roots and options. */
static int add_crawl(store *s)
{
    char now[32];
    sqlite3_stmt *st;
    store_utc_now(now, sizeof now);
    if (sqlite3_prepare_v2(s->db,
                           "INSERT INTO crawls (started, roots, options, state_token)"
                           " VALUES (?1, ?2, ?3, ?4)",
                           -1, &st, NULL)
        != SQLITE_OK)
        return -1;
    sqlite3_bind_text(st, 1, now, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, s->roots, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, s->options, -1, SQLITE_STATIC);
    bind_text(st, 4, s->token);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
    sqlite3_finalize(st);
    s->crawl_id = sqlite3_last_insert_rowid(s->db);
    return rc;
}

/* The rows of the URLs that --state's crawl will fetch again (scheduled, not done: a
 * kill -9 came before the state committed their records), as none may be there twice:
 * their pages, links and items go, and come again with the fetch. */
static const char redo_sql[] = "CREATE TEMP TABLE redo AS SELECT url FROM st.frontier"
                               " WHERE url NOT IN (SELECT url FROM st.pages);"
                               "DELETE FROM main.pages WHERE url IN (SELECT url FROM redo);"
                               "DELETE FROM main.links WHERE from_url IN (SELECT url FROM redo);"
                               "DELETE FROM main.items WHERE url IN (SELECT url FROM redo);"
                               "DROP TABLE temp.redo;";

/* And the rows this crawl's earlier runs (crawls rows with its token) wrote of any URL
 * the state does not count done: this store's writer can commit a page's rows before
 * the state's writer commits the frontier row of its URL (two writers, batches of
 * their own), and a kill -9 between the two leaves rows of a URL the state never
 * scheduled; the page is found again and fetched again. (docs/state.md, "Nothing
 * twice", step 5.) */
static const char redo_token_sql[] =
    "CREATE TEMP TABLE mine AS SELECT id FROM main.crawls WHERE state_token ="
    " (SELECT value FROM st.meta WHERE key = 'token');"
    "DELETE FROM main.pages WHERE crawl_id IN (SELECT id FROM temp.mine)"
    " AND url NOT IN (SELECT url FROM st.pages);"
    "DELETE FROM main.links WHERE crawl_id IN (SELECT id FROM temp.mine)"
    " AND from_url NOT IN (SELECT url FROM st.pages);"
    "DELETE FROM main.items WHERE crawl_id IN (SELECT id FROM temp.mine)"
    " AND url NOT IN (SELECT url FROM st.pages);"
    "DROP TABLE temp.mine;";

/* Attached as st (outside a transaction, as SQLite wants). */
static bool attach_state(store *s)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "ATTACH DATABASE ?1 AS st", -1, &st, NULL) != SQLITE_OK)
        return false;
    sqlite3_bind_text(st, 1, s->state, -1, SQLITE_STATIC);
    bool ok = sqlite3_step(st) == SQLITE_DONE;
    sqlite3_finalize(st);
    return ok;
}

static bool forget_redone(store *s)
{
    return sqlite3_exec(s->db, redo_sql, NULL, NULL, NULL) == SQLITE_OK
        && sqlite3_exec(s->db, redo_token_sql, NULL, NULL, NULL) == SQLITE_OK;
}

/* The state's crawl's token (state.c makes it before the store opens): 0, or -1. */
static int read_token(store *s)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT value FROM st.meta WHERE key = 'token'", -1, &st, NULL)
        != SQLITE_OK)
        return -1;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW && sqlite3_column_text(st, 0))
        s->token = xstrdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

/* The file, its tables (an older one upgraded in place, in one transaction), this
 * run's crawls row, the INSERTs. */
static coro_value open_work(void *arg, coro_error **err)
{
    store *s = arg;
    s->db = store_db_open("store", s->path, crawls_schema, err);
    if (!s->db)
        return (coro_value){NULL, 0};
    bool ok = !s->state || (attach_state(s) && read_token(s) == 0);
    ok = ok && sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK;
    ok = ok
        && (has_column(s->db, "pages", "crawl_id")
            || sqlite3_exec(s->db, upgrade_sql, NULL, NULL, NULL) == SQLITE_OK);
    ok = ok
        && sqlite3_exec(s->db,
                        "CREATE INDEX IF NOT EXISTS pages_crawl_id ON pages"
                        " (crawl_id)",
                        NULL, NULL, NULL)
            == SQLITE_OK;
    ok = ok && sqlite3_exec(s->db, links_schema, NULL, NULL, NULL) == SQLITE_OK;
    ok = ok && sqlite3_exec(s->db, items_schema, NULL, NULL, NULL) == SQLITE_OK;
    ok = ok && add_columns(s->db);
    ok = ok && (!s->state || !s->resume || forget_redone(s));
    ok = ok && add_crawl(s) == 0 && sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK;
    if (s->state)
        sqlite3_exec(s->db, "DETACH DATABASE st", NULL, NULL, NULL);
    ok = ok && sqlite3_prepare_v2(s->db, insert_sql, -1, &s->insert, NULL) == SQLITE_OK
        && sqlite3_prepare_v2(s->db, insert_robots_sql, -1, &s->insert_robots, NULL) == SQLITE_OK
        && sqlite3_prepare_v2(s->db, insert_link_sql, -1, &s->insert_link, NULL) == SQLITE_OK
        && sqlite3_prepare_v2(s->db, insert_item_sql, -1, &s->insert_item, NULL) == SQLITE_OK;
    if (!ok) {
        *err = store_db_error(s->db, "store", s->path, "open");
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    }
    return (coro_value){NULL, 0};
}

static int insert_robots(store *s, const store_page *p)
{
    sqlite3_stmt *st = s->insert_robots;
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    sqlite3_bind_int64(st, 1, s->crawl_id);
    bind_text(st, 2, p->rec.url);
    bind_text(st, 3, p->final_url);
    if (p->rec.status >= 0)
        sqlite3_bind_int(st, 4, p->rec.status);
    bind_text(st, 5, p->headers);
    if (p->body)
        sqlite3_bind_blob64(st, 6, p->body, p->body_len, SQLITE_STATIC);
    bind_text(st, 7, p->fetched_at);
    bind_text(st, 8, s->token);
    return sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
}

static int insert_page(void *self, const void *row)
{
    store *s = self;
    const store_row *r = row;
    if (r->robots)
        return insert_robots(s, &r->page);
    if (r->item_json) {
        sqlite3_reset(s->insert_item);
        bind_text(s->insert_item, 1, r->item_url);
        bind_text(s->insert_item, 2, r->item_callback);
        bind_text(s->insert_item, 3, r->item_json);
        sqlite3_bind_int64(s->insert_item, 4, s->crawl_id);
        return sqlite3_step(s->insert_item) == SQLITE_DONE ? 0 : -1;
    }
    store_page_bind(s->insert, &r->page);
    sqlite3_bind_int64(s->insert, 14, s->crawl_id);
    if (r->page.rec.with_times && r->page.rec.elapsed >= 0)
        sqlite3_bind_double(s->insert, 15, r->page.rec.elapsed);
    bind_text(s->insert, 16, r->page.rec.url_normalized); /* NULL: url is normal */
    if (sqlite3_step(s->insert) != SQLITE_DONE)
        return -1;
    for (size_t i = 0; i < r->nlinks; i++) {
        sqlite3_reset(s->insert_link);
        sqlite3_bind_text(s->insert_link, 1, r->page.rec.url, -1, SQLITE_STATIC);
        sqlite3_bind_text(s->insert_link, 2, r->links[i], -1, SQLITE_STATIC);
        sqlite3_bind_int64(s->insert_link, 3, s->crawl_id);
        if (sqlite3_step(s->insert_link) != SQLITE_DONE)
            return -1;
    }
    return 0;
}

static coro_value write_work(void *arg, coro_error **err)
{
    writer_rows_job *j = arg;
    store *s = j->self;
    return store_write_rows(s->db, "store", s->path, j->b->rows, j->b->n, sizeof(store_row),
                            insert_page, s, err);
}

/* The run is over (also after Ctrl-C; a run killed has no finished). */
static coro_value close_work(void *arg, coro_error **err)
{
    store *s = arg;
    char now[32];
    sqlite3_stmt *st;
    store_utc_now(now, sizeof now);
    if (sqlite3_prepare_v2(s->db, "UPDATE crawls SET finished = ?1 WHERE id = ?2", -1, &st, NULL)
            != SQLITE_OK
        || sqlite3_bind_text(st, 1, now, -1, SQLITE_STATIC) != SQLITE_OK
        || sqlite3_bind_int64(st, 2, s->crawl_id) != SQLITE_OK || sqlite3_step(st) != SQLITE_DONE)
        *err = store_db_error(s->db, "store", s->path, "close");
    sqlite3_finalize(st);
    sqlite3_finalize(s->insert);
    sqlite3_finalize(s->insert_robots);
    sqlite3_finalize(s->insert_link);
    sqlite3_finalize(s->insert_item);
    s->insert = s->insert_robots = s->insert_link = s->insert_item = NULL;
    sqlite3_close(s->db); /* the WAL is checkpointed into the file */
    s->db = NULL;
    return (coro_value){NULL, 0};
}

static const writer_ops store_ops = {
    .name = "store_writer",
    .open = open_work,
    .write = write_work,
    .close = close_work,
};

/* ---- the pipeline stage ---- */

/* The roots, as a JSON array. */
static char *roots_json(const crawl_options *o)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *m = open_memstream(&buf, &size);
    if (!m)
        alloc_oom(0);
    fputc('[', m);
    for (int i = 0; i < o->nroots; i++) {
        if (i)
            fputs(", ", m);
        json_write_string(m, o->roots[i]);
    }
    fputc(']', m);
    if (fclose(m) != 0)
        alloc_oom(0);
    return buf;
}

/* The options of the command line (what came before the roots), as a shell would take
 * them back; a Redis URL's password is never shown. */
static char *options_text(const app *a)
{
    static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                "0123456789_-+=.,/:@%";
    char *out = xstrdup("");
    size_t len = 0, cap = 1;
    int end = a->opt.roots && a->argv ? (int)(a->opt.roots - a->argv) : 0;
    for (int i = 1; i < end && i < a->argc; i++) {
        char shown[1024];
        const char *arg = a->argv[i], *redis = strstr(arg, "redis://");
        if (redis) {
            char url[900];
            redis_url_shown(redis, url, sizeof url);
            snprintf(shown, sizeof shown, "%.*s%s", (int)(redis - arg), arg, url);
            arg = shown;
        }
        if (i > 1)
            xappend(&out, &len, &cap, " ", 1);
        if (arg[0] && strspn(arg, plain) == strlen(arg)) {
            xappend(&out, &len, &cap, arg, strlen(arg));
            continue;
        }
        xappend(&out, &len, &cap, "'", 1);
        for (const char *c = arg; *c; c++)
            if (*c == '\'')
                xappend(&out, &len, &cap, "'\\''", 4);
            else
                xappend(&out, &len, &cap, c, 1);
        xappend(&out, &len, &cap, "'", 1);
    }
    xappend(&out, &len, &cap, "", 1);
    return out;
}

static coro *store_open(void *self, engine *e)
{
    store *s = self;
    const app *a = engine_app(e);
    s->roots = roots_json(&a->opt);
    s->options = options_text(a);
    return writer_open(&s->w, e);
}

static void page_free(void *row)
{
    store_row *r = row;
    store_page_clear(&r->page);
    for (size_t i = 0; i < r->nlinks; i++)
        free(r->links[i]);
    free(r->links);
    free(r->item_url);
    free(r->item_callback);
    free(r->item_json);
}

static coro *store_process_spider_item(void *self, spider_item *it, bool *drop)
{
    (void)drop;
    store *s = self;
    store_row *r = writer_row(&s->rows);
    r->item_url = xstrdup(it->request->url);
    r->item_callback = xstrdup(it->request->callback ? it->request->callback : "parse");
    r->item_json = xstrdup(it->json);
    writer_row_added(&s->rows);
    return writer_room(&s->w);
}

/* --store-headers-only: the row keeps no body (its size is the record's). */
static void drop_body(store_page *p)
{
    free(p->body);
    p->body = NULL;
    p->body_len = 0;
}

static coro *store_process_item(void *self, item *it, bool *drop)
{
    (void)drop;
    store *s = self;
    store_row *r = writer_row(&s->rows);
    store_page_fill(&r->page, it, true);
    if (!s->bodies)
        drop_body(&r->page);
    r->links = it->nlinks ? xcalloc(it->nlinks, sizeof *r->links) : NULL;
    for (r->nlinks = 0; r->nlinks < it->nlinks; r->nlinks++)
        r->links[r->nlinks] = xstrdup(it->links[r->nlinks].url);
    writer_row_added(&s->rows);
    return writer_room(&s->w);
}

/* A robots.txt download: a row of robots. */
static void store_process_download(void *self, const request *req, const response *resp)
{
    (void)req;
    store *s = self;
    store_row *r = writer_row(&s->rows);
    r->robots = true;
    item it = {.record = {.url = resp->url, .status = resp->status}, .response = resp};
    store_page_fill(&r->page, &it, true);
    if (!s->bodies)
        drop_body(&r->page);
    writer_row_added(&s->rows);
}

static coro *store_close(void *self)
{
    return writer_close(&((store *)self)->w);
}

static void store_free(void *self)
{
    store *s = self;
    writer_rows_clear(&s->rows);
    writer_clear(&s->w);
    if (s->db) {
        sqlite3_finalize(s->insert);
        sqlite3_finalize(s->insert_robots);
        sqlite3_finalize(s->insert_link);
        sqlite3_finalize(s->insert_item);
        sqlite3_close(s->db);
    }
    free(s->roots);
    free(s->options);
    free(s->path);
    free(s->state);
    free(s->token);
    free(s);
}

item_pipeline store_pipeline(const char *path, bool bodies)
{
    store *s = xcalloc(1, sizeof *s);
    s->path = xstrdup(path);
    s->bodies = bodies;
    writer_init(&s->w, &store_ops, s, NULL);
    writer_rows_init(&s->rows, &s->w, sizeof(store_row), STORE_BATCH_ROWS, STORE_BATCH_MS,
                     page_free);
    return (item_pipeline){
        .name = "store",
        .self = s,
        .wants_body = bodies,
        .open = store_open,
        .process_item = store_process_item,
        .process_download = store_process_download,
        .process_spider_item = store_process_spider_item,
        .close = store_close,
        .free = store_free,
    };
}

/* ---- the descriptor (extension.h) ---- */

/* Its own flag: --store-headers-only. */
static struct store_opts {
    int headers_only;
} opts;

/* clang-format off */
static const cli_flag flags[] = {
    {.name = "store-headers-only", .arg = CLI_ARG_NONE,
     .offset = offsetof(struct store_opts, headers_only), .needs = "store",
     .needs_why = "keeps --store's pages without their bodies",
     .help = "with --store: no bodies (records, headers, links\n"
             "and items kept: a link check's database) [bodies kept]"},
    {0}};
/* clang-format on */

static bool on(const settings *s)
{
    return s->store != NULL;
}

static int make(engine *e, const settings *s, item_pipeline *out, char *err, size_t errlen)
{
    (void)e, (void)err, (void)errlen;
    *out = store_pipeline(s->store, !opts.headers_only);
    out->wants_links = s->referrer; /* the links table */
    if (s->state) {
        store *st = out->self;
        st->state = xstrdup(s->state);
        st->resume = s->resume;
    }
    return 0;
}

/* The descriptor (extension.h): --store, order 300, with a flag of its own. */
const extension store_extension = {"store",
                                   EXT_PIPELINE,
                                   300,
                                   on,
                                   .make_pipeline = make,
                                   .flags = flags,
                                   .opts = &opts,
                                   .opts_size = sizeof opts};
