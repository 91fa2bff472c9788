/* threaded.c — crawl-threads: the chapter's "traditional approach", kept for the
 * benchmarks (docs/benchmarks.md), not a stage. One thread per fetch, blocking
 * sockets, pthreads; the shared crawl core (HTTP parsing, links, URL policy, the seen
 * set, the records, the report) under one mutex.
 *
 *   crawl-threads [--stack-size KB] [the crawlers' options] ROOT...
 *
 * --max-tasks N caps the threads alive at once. A URL that arrives while N threads
 * are alive waits in a FIFO; a thread whose fetch is done takes the next URL from it
 * before it ends, and a new thread is started only when a URL arrives and fewer than
 * N are alive. --stack-size sets each thread's stack (default: the system's, the
 * RLIMIT_STACK soft limit, usually 8 MB of address space of which a few pages are
 * touched).
 *
 * When a thread cannot be created (EAGAIN: `ulimit -u`, kernel.threads-max,
 * vm.max_map_count, or memory), the URL goes back into the FIFO, a warning naming the
 * limits is printed once, and the crawl goes on with the threads it has — it never
 * crashes and never loses a URL. Only if no thread at all can run is it a fatal
 * error (exit 1). The summary's peak_in_flight says how many fetches really ran at
 * once; threads_failed (on stderr) how often creation failed.
 *
 * Only plain http (the raw transport); --selector is accepted and ignored.
 */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "cli.h"
#include "crawl.h"
#include "http.h"
#include "jobq.h"
#include "libmem.h"
#include "log.h"
#include "net.h"
#include "rawerr.h"
#include "url.h"

#define PROG       "crawl-threads"
#define READ_CHUNK 4096 /* on the thread's stack, which --stack-size may make 64 KB */

typedef struct crawler {
    crawl_options opt;
    crawl *c;
    resolver *res;
    pthread_mutex_t lock; /* everything below, the crawl core and the resolver */
    pthread_cond_t idle;  /* signalled when the last thread ends */
    pthread_attr_t attr;
    jobq waiting; /* URLs with no thread yet */
    size_t alive; /* threads started and not yet ended */
    size_t peak_alive;
    size_t create_failures;
    int create_errno; /* the first pthread_create failure */
    bool stopping;    /* SIGINT/SIGTERM: start nothing more */
} crawler;

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- one fetch, blocking: connect, send, recv until the parser is done ---- */

/* Returns NULL on success (the response went to f's sink), else the error text. */
static const char *fetch_once(crawler *cr, const char *url, crawl_fetch *f, char *err,
                              size_t errlen)
{
    char *scheme = NULL, *host = NULL, *path = NULL;
    int port = 0;
    struct sockaddr_storage addr;
    socklen_t alen = 0;
    if (url_split(url, &scheme, &host, &port, &path) < 0) {
        free(scheme), free(host), free(path);
        return "not an http URL";
    }
    pthread_mutex_lock(&cr->lock); /* the resolver's cache is not shared-safe */
    int r = resolver_lookup(cr->res, host, port, &addr, &alen, err, errlen);
    pthread_mutex_unlock(&cr->lock);
    free(scheme), free(host), free(path);
    if (r < 0)
        return err;

    double deadline = now_s() + cr->opt.timeout;
    int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return raw_error(err, errlen, "connect", errno);
    struct timeval tv = {(time_t)cr->opt.timeout,
                         (suseconds_t)((cr->opt.timeout - (double)(time_t)cr->opt.timeout) * 1e6)};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv); /* bounds connect too */
    const char *fail = NULL;
    size_t reqlen = 0;
    char *req = NULL;
    http_parser *p = NULL;
    if (connect(fd, (struct sockaddr *)&addr, alen) < 0) {
        fail = errno == EINPROGRESS ? raw_timeout(err, errlen, cr->opt.timeout)
                                    : raw_error(err, errlen, "connect", errno);
        goto out;
    }
    req = http_build_get(url, NULL, NULL, &reqlen);
    p = http_parser_new(crawl_fetch_sink(f));
    if (!req) {
        fail = "not an http URL";
        goto out;
    }
    for (size_t sent = 0; sent < reqlen;) {
        ssize_t n = send(fd, req + sent, reqlen - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            fail = (errno == EAGAIN || errno == EWOULDBLOCK)
                ? raw_timeout(err, errlen, cr->opt.timeout)
                : raw_error(err, errlen, "send", errno);
            goto out;
        }
        sent += (size_t)n;
    }
    char buf[READ_CHUNK];
    for (;;) {
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || now_s() > deadline) {
            fail = (n >= 0 || errno == EAGAIN || errno == EWOULDBLOCK)
                ? raw_timeout(err, errlen, cr->opt.timeout)
                : raw_error(err, errlen, "recv", errno);
            break;
        }
        int rc = n > 0 ? http_parser_feed(p, buf, (size_t)n) : http_parser_eof(p);
        if (rc < 0) {
            snprintf(err, errlen, "%s", http_parser_error(p));
            fail = err;
            break;
        }
        if (rc == 1 || n == 0)
            break;
    }
out:
    http_parser_free(p);
    free(req);
    close(fd);
    return fail;
}

static void add_url(void *ctx, const crawl_request *r);

/* crawling.py's fetch with its retries, for one URL; the crawl core under the lock. */
static void fetch(crawler *cr, const crawl_request *r)
{
    const char *url = r->url;
    char err[256], last[256] = "error";
    if (strncmp(url, "https:", 6) == 0) {
        pthread_mutex_lock(&cr->lock);
        crawl_record_failure(cr->c, url, raw_https_unsupported);
        pthread_mutex_unlock(&cr->lock);
        return;
    }
    for (int tries = 0; tries < cr->opt.max_tries; tries++) {
        pthread_mutex_lock(&cr->lock);
        crawl_fetch *f = crawl_fetch_new(cr->c, r);
        pthread_mutex_unlock(&cr->lock);
        /* The sink (link parser included) runs in this thread, without the lock: it
         * touches only f, and reads the policy. */
        const char *fail = fetch_once(cr, url, f, err, sizeof err);
        pthread_mutex_lock(&cr->lock);
        if (!fail) {
            crawl_fetch_done(f, add_url, cr); /* may call add_url: lock held */
            pthread_mutex_unlock(&cr->lock);
            return;
        }
        crawl_fetch_discard(f);
        pthread_mutex_unlock(&cr->lock);
        snprintf(last, sizeof last, "%s", fail);
    }
    pthread_mutex_lock(&cr->lock);
    crawl_record_failure(cr->c, url, last);
    pthread_mutex_unlock(&cr->lock);
}

/* ---- threads ---- */

typedef struct start_arg {
    crawler *cr;
    crawl_request *r;
} start_arg;

static void *thread_main(void *arg)
{
    start_arg *sa = arg;
    crawler *cr = sa->cr;
    crawl_request *r = sa->r;
    free(sa);
    for (;;) {
        fetch(cr, r);
        free(r);
        pthread_mutex_lock(&cr->lock);
        bool more = !cr->stopping && !interrupted && (r = jobq_pop(&cr->waiting));
        if (!more) {
            if (--cr->alive == 0)
                pthread_cond_signal(&cr->idle);
            pthread_mutex_unlock(&cr->lock);
            return NULL;
        }
        pthread_mutex_unlock(&cr->lock);
    }
}

/* Lock held. Start a thread for r; false if none could be made. */
static bool start_thread(crawler *cr, const crawl_request *r)
{
    start_arg *sa = xmalloc(sizeof *sa);
    crawl_request *copy = crawl_request_dup(r);
    *sa = (start_arg){cr, copy};
    pthread_t t;
    int e = pthread_create(&t, &cr->attr, thread_main, sa);
    if (e != 0) {
        if (cr->create_failures++ == 0) {
            cr->create_errno = e;
            struct rlimit nproc;
            getrlimit(RLIMIT_NPROC, &nproc);
            log_error("%s: pthread_create failed with %zu threads alive: %s "
                      "(limits: ulimit -u %lld, /proc/sys/kernel/threads-max, "
                      "/proc/sys/vm/max_map_count, memory); going on with the threads "
                      "there are, the URL waits",
                      PROG, cr->alive, strerror(e),
                      nproc.rlim_cur == RLIM_INFINITY ? -1LL : (long long)nproc.rlim_cur);
        }
        free(copy);
        free(sa);
        return false;
    }
    cr->alive++;
    if (cr->alive > cr->peak_alive)
        cr->peak_alive = cr->alive;
    return true;
}

/* The crawl core's add_url (lock held): a thread of its own, or the FIFO. */
static void add_url(void *ctx, const crawl_request *r)
{
    crawler *cr = ctx;
    if (cr->alive < (size_t)cr->opt.max_tasks && !cr->stopping && start_thread(cr, r))
        return;
    jobq_push(&cr->waiting, r);
}

/* Our one option, taken out of argv before the shared parser sees the rest. */
static long take_stack_size(int *argc, char **argv)
{
    long kb = 0;
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i];
        const char *v = NULL;
        if (strcmp(a, "--stack-size") == 0 && i + 1 < *argc)
            v = argv[++i];
        else if (strncmp(a, "--stack-size=", 13) == 0)
            v = a + 13;
        if (v) {
            char *end;
            kb = strtol(v, &end, 10);
            if (*end || kb < 16 || kb > 1024 * 1024) {
                fprintf(stderr, "%s: --stack-size: '%s' is not a size in KB (16 to 1048576)\n",
                        PROG, v);
                exit(2);
            }
            continue;
        }
        argv[out++] = argv[i];
    }
    *argc = out;
    argv[out] = NULL;
    return kb;
}

int main(int argc, char **argv)
{
    long stack_kb = take_stack_size(&argc, argv);
    crawler cr;
    memset(&cr, 0, sizeof cr);
    const cli_command cmd = {.prog = PROG, .default_transport = "raw"};
    int r = cli_parse(&cr.opt, argc, argv, &cmd);
    if (r == CLI_EXIT_OK)
        return 0;
    if (r != CLI_OK)
        return 2;
    if (strcmp(cr.opt.transport, "raw") != 0) {
        fprintf(stderr, "%s: only --transport raw (blocking sockets)\n", PROG);
        return 2;
    }
    net_raise_nofile();
    alloc_set_progname(PROG);
    libmem_init(); /* once, before threads use libxml2 and libcurl */
    char err[512];
    cr.c = crawl_new(&cr.opt, "threads", err, sizeof err);
    if (!cr.c) {
        fprintf(stderr, "%s: %s\n", PROG, err);
        return 1;
    }
    cr.res = resolver_new();
    pthread_mutex_init(&cr.lock, NULL);
    pthread_cond_init(&cr.idle, NULL);
    pthread_attr_init(&cr.attr);
    pthread_attr_setdetachstate(&cr.attr, PTHREAD_CREATE_DETACHED);
    if (stack_kb > 0 && pthread_attr_setstacksize(&cr.attr, (size_t)stack_kb * 1024) != 0) {
        fprintf(stderr, "%s: --stack-size %ld KB refused\n", PROG, stack_kb);
        return 2;
    }
    jobq_init(&cr.waiting);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    int status = 0;
    pthread_mutex_lock(&cr.lock);
    crawl_add_roots(cr.c, add_url, &cr);
    /* Wait for the last thread. URLs that found no thread (creation failed) are
     * started here once a thread is free again — or by the threads themselves. */
    while (cr.alive > 0 || (jobq_size(&cr.waiting) > 0 && !interrupted)) {
        if (cr.alive == 0) {
            crawl_request *next = jobq_pop(&cr.waiting);
            bool ok = start_thread(&cr, next);
            if (!ok) {
                fprintf(stderr, "%s: cannot start any thread: %s\n", PROG,
                        strerror(cr.create_errno ? cr.create_errno : ENOMEM));
                jobq_push(&cr.waiting, next);
                free(next);
                status = 1;
                break;
            }
            free(next);
            continue;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100 * 1000000L; /* look at `interrupted` ten times a second */
        if (ts.tv_nsec >= 1000000000L)
            ts.tv_sec++, ts.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&cr.idle, &cr.lock, &ts);
        if (interrupted) {
            cr.stopping = true; /* report now; the threads are abandoned */
            break;
        }
    }
    size_t todo = jobq_size(&cr.waiting) + cr.alive;
    if (cr.create_failures)
        log_error("%s: %zu thread creation(s) failed (%s); at most %zu threads ran at once", PROG,
                  cr.create_failures, strerror(cr.create_errno), cr.peak_alive);
    char werr[1024];
    if (crawl_write_report(cr.c, todo, "raw", "threads", interrupted, werr, sizeof werr) < 0) {
        fprintf(stderr, "%s: %s\n", PROG, werr);
        status = 1;
    }
    pthread_mutex_unlock(&cr.lock);
    if (cr.alive > 0)
        _exit(status ? status : 0); /* interrupted with threads blocked in recv */
    jobq_clear(&cr.waiting);
    crawl_free(cr.c);
    resolver_free(cr.res);
    return status;
}
