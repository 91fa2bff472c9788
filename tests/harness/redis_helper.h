/* redis_helper.h — a redis-server of the test's own, on a free 127.0.0.1 port.
 *
 *   redis_server rs;
 *   assert_int_equal(redis_server_start(&rs, NULL), 0);   // rs.port, rs.url
 *   ... connect to 127.0.0.1:rs.port ...
 *   redis_server_stop(&rs);
 *
 * The server runs in a directory of its own under the build tree (BUILD_DIR/redis-tmp/),
 * with no config file: everything is on its command line, --save '' and --appendonly no
 * unless extra_args says otherwise (later arguments win). With "--requirepass", "PW"
 * among them, the helper's own commands (the start's PING, redis_server_cmd) send
 * AUTH PW first. It dies with the test process (PR_SET_PDEATHSIG), so a test that
 * fails or crashes leaves no server behind; put
 * redis_server_stop in the test's teardown all the same. Every wait is bounded: the
 * start waits 10 s at most for the server to answer PING.
 */
#ifndef CRAWL_REDIS_HELPER_H
#define CRAWL_REDIS_HELPER_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct redis_server {
    pid_t pid; /* 0 when not running */
    int port;
    char dir[PATH_MAX]; /* its working directory ("" once removed) */
    char *args[40];     /* the command line, for a restart (owned) */
    char password[128]; /* --requirepass PW in extra_args: "" when none */
} redis_server;

/* Start redis-server (REDIS_SERVER_BIN) with extra_args (NULL-terminated, may be NULL)
 * after ours. Returns 0, or -1 with one line on stderr (the child is gone). */
int redis_server_start(redis_server *rs, const char *const extra_args[]);
/* Start it again, on the same port, directory and arguments (after a kill: AOF tests).
 * Returns 0 or -1. */
int redis_server_restart(redis_server *rs);
/* SIGKILL the server now (a crash), and reap it. The directory stays. */
void redis_server_kill(redis_server *rs);
/* SIGTERM, wait up to 5 s, then SIGKILL; remove its directory. Idempotent. */
void redis_server_stop(redis_server *rs);
/* Send one command line ("DBSIZE", "GET k"), read the first line of the reply (5 s
 * at most) into out without its CRLF. A bulk reply gives its first line of content.
 * Returns 0, or -1. */
int redis_server_cmd(const redis_server *rs, const char *line, char *out, size_t outlen);
/* "redis://127.0.0.1:PORT/name" into out ("redis://:PW@127.0.0.1:PORT/name" for a
 * server started with --requirepass PW). */
void redis_server_url(const redis_server *rs, const char *name, char *out, size_t outlen);

#endif
