/* kill_at_sqlite.c — an LD_PRELOAD shim for test_resume_exact: kill -9 at the moments
 * of --state's and --store's commits that a timer hardly ever hits, from the
 * environment (the files named by the ends of their paths, KILL_STATE_DB and
 * KILL_STORE_DB):
 *
 *   KILL_AT_STATE_PAGE=N  at the state's Nth pages row: what its transaction holds so
 *                         far (the URL's items rows, the rows before) is committed, then
 *                         SIGKILL before the pages row is written — a batch handed to the
 *                         writer between a URL's items and its record, then a kill;
 *                         With KILL_AT_STATE_PAGE_URL=U only the pages rows of URL U
 *                         count (the Nth record of U);
 *   KILL_STALL_STATE=N    the state's Nth COMMIT waits (at most 20 s), and the process is
 *                         killed right after the store's next COMMIT: the store's writer
 *                         ahead of the state's, its rows of URLs whose frontier rows the
 *                         state had not committed;
 *   KILL_SLOW_STATE=N     each of the state's COMMITs waits KILL_SLOW_MS ms (300) first,
 *                         and the process is killed right after the Nth: a state writer
 *                         that falls behind, so that records wait for its room (writer.h)
 *                         while the batches ahead of theirs commit — a URL counted done
 *                         before the stages after the state saw its record;
 *   KILL_HOLD_OUTPUT=FILE, KILL_HOLD_URL=U, KILL_HOLD_RECORDS=N
 *                         each COMMIT of the state waits while FILE (the --output) holds
 *                         a record of U but fewer than N (20 s at most in all): the
 *                         state's writer held from U's first record to its Nth, as a
 *                         slow disk holds it; with KILL_HOLD_QUIET_MS=Q, then on until
 *                         FILE has not grown for Q ms (every worker waits: the crawl
 *                         has stopped for the writer). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <sqlite3.h>

static atomic_long pages_seen, state_commits, held_ms;
static atomic_bool stalled;

/* Whether db's main file ends with the path in the environment variable var. */
static bool is_db(sqlite3 *db, const char *var)
{
    const char *want = getenv(var), *name = db ? sqlite3_db_filename(db, "main") : NULL;
    if (!want || !*want || !name)
        return false;
    size_t wl = strlen(want), nl = strlen(name);
    return nl >= wl && strcmp(name + nl - wl, want) == 0;
}

static long env_long(const char *var)
{
    const char *v = getenv(var);
    return v ? atol(v) : 0;
}

/* How many lines of path start as url's record does ({"url": "U", ...). */
static long records_of(const char *path, const char *url)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char head[1024], line[4096];
    snprintf(head, sizeof head, "{\"url\": \"%s\",", url);
    long n = 0;
    bool start = true;
    while (fgets(line, sizeof line, f)) {
        if (start && strncmp(line, head, strlen(head)) == 0)
            n++;
        start = strchr(line, '\n') != NULL;
    }
    fclose(f);
    return n;
}

/* KILL_HOLD_*: wait while the output holds U's first record and not its Nth. */
static void hold_state_commit(void)
{
    static atomic_bool released; /* once: the commits after it go on */
    const char *out = getenv("KILL_HOLD_OUTPUT"), *url = getenv("KILL_HOLD_URL");
    long want = env_long("KILL_HOLD_RECORDS");
    if (!out || !url || want <= 0 || released)
        return;
    struct timespec ts = {0, 10 * 1000 * 1000};
    long got = 0;
    for (; held_ms < 20000 && (got = records_of(out, url)) > 0 && got < want; held_ms += 10)
        nanosleep(&ts, NULL);
    long quiet = env_long("KILL_HOLD_QUIET_MS"), still = 0;
    struct stat st;
    off_t size = -1;
    for (; got >= want && quiet > 0 && still < quiet && held_ms < 20000; held_ms += 10) {
        nanosleep(&ts, NULL);
        off_t now = stat(out, &st) == 0 ? st.st_size : -1;
        still = now == size ? still + 10 : 0;
        size = now;
    }
    released = got >= want;
}

/* Whether st (an INSERT of a pages row) is of the URL KILL_AT_STATE_PAGE_URL names, or
 * there is none. */
static bool of_kill_url(sqlite3_stmt *st)
{
    const char *url = getenv("KILL_AT_STATE_PAGE_URL");
    if (!url || !*url)
        return true;
    char *sql = sqlite3_expanded_sql(st), want[1100];
    snprintf(want, sizeof want, "VALUES ('%s',", url);
    bool of = sql && strstr(sql, want);
    sqlite3_free(sql);
    return of;
}

int sqlite3_step(sqlite3_stmt *st)
{
    static int (*real)(sqlite3_stmt *);
    static int (*real_exec)(sqlite3 *, const char *, int (*)(void *, int, char **, char **), void *,
                            char **);
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "sqlite3_step");
    if (!real_exec)
        *(void **)&real_exec = dlsym(RTLD_NEXT, "sqlite3_exec");
    if (!real || !real_exec)
        abort();
    long n = env_long("KILL_AT_STATE_PAGE");
    const char *sql = n > 0 ? sqlite3_sql(st) : NULL;
    /* the state's INSERT of a pages row (state.c's insert_page_sql) */
    if (sql && strncmp(sql, "INSERT INTO pages (", 19) == 0 && strstr(sql, "output_end)")
        && is_db(sqlite3_db_handle(st), "KILL_STATE_DB") && of_kill_url(st) && ++pages_seen == n) {
        real_exec(sqlite3_db_handle(st), "COMMIT", NULL, NULL, NULL);
        raise(SIGKILL);
    }
    return real(st);
}

int sqlite3_exec(sqlite3 *db, const char *sql, int (*cb)(void *, int, char **, char **), void *arg,
                 char **errmsg)
{
    static int (*real)(sqlite3 *, const char *, int (*)(void *, int, char **, char **), void *,
                       char **);
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "sqlite3_exec");
    if (!real)
        abort();
    long slow = env_long("KILL_SLOW_STATE");
    if (slow > 0 && sql && strcmp(sql, "COMMIT") == 0 && is_db(db, "KILL_STATE_DB")) {
        long ms = env_long("KILL_SLOW_MS");
        struct timespec ts = {0, (ms > 0 && ms < 1000 ? ms : 300) * 1000 * 1000};
        nanosleep(&ts, NULL);
        int rc = real(db, sql, cb, arg, errmsg);
        if (++state_commits == slow)
            raise(SIGKILL);
        return rc;
    }
    long n = env_long("KILL_STALL_STATE");
    bool commit = sql && strcmp(sql, "COMMIT") == 0;
    if (commit && is_db(db, "KILL_STATE_DB"))
        hold_state_commit();
    commit = commit && n > 0;
    if (commit && is_db(db, "KILL_STATE_DB") && ++state_commits == n) {
        stalled = true;
        for (int i = 0; i < 2000; i++) { /* 20 s at most, then the kill all the same */
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        raise(SIGKILL);
    }
    int rc = real(db, sql, cb, arg, errmsg);
    if (commit && stalled && is_db(db, "KILL_STORE_DB"))
        raise(SIGKILL);
    return rc;
}
