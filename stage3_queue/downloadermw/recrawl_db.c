/* recrawl_db.c — OLD.db for --recrawl, read-only (recrawl_db.h). */
#include "recrawl_db.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "alloc.h"

struct old_db {
    sqlite3 *db;
    size_t refs;
};

/* The columns a recrawl reads: a table without them was not written by --store. */
static const char probe_sql[] =
    "SELECT id, url, status, exception, headers, body, fetched_at FROM pages LIMIT 0";

/* The pages a 304 can be answered with: each URL's last whole one, its body kept (a
 * --store-headers-only row has none: its URL is fetched without a condition). */
static const char pages_sql[] =
    "SELECT id, url, headers FROM pages WHERE id IN (SELECT max(id) FROM pages"
    " WHERE status IN (200, 304) AND exception IS NULL AND headers IS NOT NULL"
    " AND (body IS NOT NULL OR (size = 0 AND status = 200)) GROUP BY url)";

static const char page_sql[] = "SELECT headers, body, fetched_at FROM pages WHERE id = ?1";

static sqlite3 *open_checked(const char *path, char *why, size_t n)
{
    struct stat st;
    if (stat(path, &st) < 0) {
        snprintf(why, n, "--recrawl '%s': %s", path, strerror(errno));
        return NULL;
    }
    sqlite3 *db = NULL;
    sqlite3_stmt *probe = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_FULLMUTEX, NULL) != SQLITE_OK
        || sqlite3_busy_timeout(db, 5000) != SQLITE_OK
        || sqlite3_prepare_v2(db, probe_sql, -1, &probe, NULL) != SQLITE_OK) {
        snprintf(why, n, "--recrawl '%s': not a database that --store wrote (%s)", path,
                 db ? sqlite3_errmsg(db) : "cannot allocate a connection");
        sqlite3_close(db);
        return NULL;
    }
    sqlite3_finalize(probe);
    return db;
}

int old_db_check(const char *path, char *why, size_t n)
{
    sqlite3 *db = open_checked(path, why, n);
    sqlite3_close(db);
    return db ? 0 : -1;
}

old_db *old_db_open(const char *path, char *why, size_t n)
{
    sqlite3 *db = open_checked(path, why, n);
    if (!db)
        return NULL;
    old_db *o = xcalloc(1, sizeof *o);
    o->db = db;
    o->refs = 1;
    return o;
}

void old_db_ref(old_db *o)
{
    o->refs++;
}

void old_db_release(old_db *o)
{
    if (o && --o->refs == 0) {
        sqlite3_close(o->db);
        free(o);
    }
}

int old_db_each_page(old_db *o,
                     void (*fn)(void *ctx, int64_t id, const char *url, const char *headers),
                     void *ctx, char *why, size_t n)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(o->db, pages_sql, -1, &st, NULL) != SQLITE_OK) {
        snprintf(why, n, "--recrawl: %s", sqlite3_errmsg(o->db));
        return -1;
    }
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *url = (const char *)sqlite3_column_text(st, 1);
        if (url)
            fn(ctx, sqlite3_column_int64(st, 0), url, (const char *)sqlite3_column_text(st, 2));
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        snprintf(why, n, "--recrawl: %s", sqlite3_errmsg(o->db));
        return -1;
    }
    return 0;
}

static char *column_text(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? xstrdup((const char *)t) : NULL;
}

void old_db_read(old_db *o, int64_t id, stored_page *out)
{
    memset(out, 0, sizeof *out);
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(o->db, page_sql, -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, id);
        rc = sqlite3_step(st);
    }
    if (rc == SQLITE_ROW) {
        out->headers = column_text(st, 0);
        const void *b = sqlite3_column_blob(st, 1);
        out->body_len = (size_t)sqlite3_column_bytes(st, 1);
        out->body = b && out->body_len ? xmemdup(b, out->body_len) : NULL;
        out->fetched_at = column_text(st, 2);
    } else {
        out->error = xstrdup(rc == SQLITE_DONE ? "its row is gone" : sqlite3_errmsg(o->db));
    }
    sqlite3_finalize(st);
}

void stored_page_clear(stored_page *p)
{
    free(p->headers);
    free(p->body);
    free(p->fetched_at);
    free(p->error);
    memset(p, 0, sizeof *p);
}

void stored_fields_each(const char *text, void (*fn)(void *ctx, const char *, const char *),
                        void *ctx)
{
    while (text && *text) {
        size_t len = strcspn(text, "\r\n");
        const char *colon = memchr(text, ':', len);
        if (colon && colon > text) {
            char *name = xstrndup(text, (size_t)(colon - text));
            const char *v = colon + 1 + strspn(colon + 1, " \t");
            char *value = xstrndup(v, len - (size_t)(v - text));
            fn(ctx, name, value);
            free(name);
            free(value);
        }
        text += len;
        text += strspn(text, "\r\n");
    }
}
