/* state.c — --state / --resume: see state.h. Runs once, before the crawl. */
#include "state.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "fpset.h"
#include "log.h"
#include "settings.h"

const char state_schema[] =
    "CREATE TABLE IF NOT EXISTS frontier (url TEXT PRIMARY KEY,"
    " max_redirect INTEGER NOT NULL, depth INTEGER NOT NULL DEFAULT 0, referrer TEXT,"
    " callback TEXT) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);";

/* A file of an older crawl-queue has frontier (url, max_redirect) only: the columns
 * are added, its URLs get depth 0 and no referrer (that much is lost: a -v line). */
static const char upgrade[] =
    "ALTER TABLE frontier ADD COLUMN depth INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE frontier ADD COLUMN referrer TEXT;"
    "ALTER TABLE frontier ADD COLUMN callback TEXT;";

static int upgrade_frontier(sqlite3 *db, const char *path)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT depth, referrer, callback FROM frontier LIMIT 0", -1,
                           &st, NULL) == SQLITE_OK) {
        sqlite3_finalize(st);
        return 0;
    }
    log_info("--state '%s': a file of an older crawl-queue: its URLs get depth 0 and no "
             "referrer", path);
    return sqlite3_exec(db, upgrade, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

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
    const settings *s = settings_of(a);
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(s->state, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
            SQLITE_OK ||
        sqlite3_busy_timeout(db, 5000) != SQLITE_OK ||
        sqlite3_exec(db, "PRAGMA journal_mode=WAL;", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(db, state_schema, NULL, NULL, NULL) != SQLITE_OK ||
        upgrade_frontier(db, s->state) < 0)
        return db_fail(db, s->state, err, errlen);

    sqlite3_stmt *st;
    long long known = 0;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM frontier", -1, &st, NULL) != SQLITE_OK)
        return db_fail(db, s->state, err, errlen);
    if (sqlite3_step(st) == SQLITE_ROW)
        known = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);

    char *id = crawl_identity(o);
    int rc = 0;
    if (known > 0 && !s->resume) {
        snprintf(err, errlen, "--state '%s' holds a crawl already (%lld URLs): add --resume "
                 "to go on with it, or name a new file", s->state, known);
        rc = -1;
    } else if (known > 0) {
        const unsigned char *was = NULL;
        if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'crawl'", -1, &st,
                               NULL) != SQLITE_OK) {
            free(id);
            return db_fail(db, s->state, err, errlen);
        }
        if (sqlite3_step(st) == SQLITE_ROW)
            was = sqlite3_column_text(st, 0);
        if (!was || strcmp((const char *)was, id) != 0) {
            snprintf(err, errlen, "--state '%s' is the crawl of other roots or options "
                     "(--resume needs the same roots, --max-redirect, --max-pages, "
                     "--exclude and --strict)", s->state);
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
            return db_fail(db, s->state, err, errlen);
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
    if (sqlite3_prepare_v2(db, "SELECT url, max_redirect, depth, referrer, callback FROM frontier",
                           -1, &st, NULL) != SQLITE_OK) {
        fpset_free(done);
        return db_fail(db, s->state, err, errlen);
    }
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *url = (const char *)sqlite3_column_text(st, 0);
        crawl_mark_seen(a->crawl, url);
        if (fpset_has(done, url)) {
            finished++;
        } else {
            crawl_request r = {url, sqlite3_column_int(st, 1), sqlite3_column_int(st, 2),
                               (const char *)sqlite3_column_text(st, 3),
                               (const char *)sqlite3_column_text(st, 4)};
            put(ctx, &r);
            todo++;
        }
    }
    sqlite3_finalize(st);
    fpset_free(done);
    sqlite3_close(db);
    log_info("--resume: %zu URL(s) done in earlier runs, %zu to do", finished, todo);
    return 0;
}
