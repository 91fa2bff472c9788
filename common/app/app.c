/* app.c — see app.h. */
#include "app.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/select.h>

#include "alloc.h"
#include "log.h"
#include "outpaths.h"

volatile sig_atomic_t app_interrupted;
static selector *volatile signal_loop; /* read by the handler */

static void on_signal(int sig)
{
    (void)sig;
    app_interrupted = 1;
    if (signal_loop)
        selector_interrupt(signal_loop); /* not lost if the loop has not started yet */
}

/* SIGUSR1: the loop shows the stage's work in flight at its next turn (app_dump).
 * Only a flag and a byte on the loop's self-pipe here; before the loop exists, and
 * after, the signal is ignored. */
static void on_dump_signal(int sig)
{
    (void)sig;
    if (signal_loop)
        selector_notify(signal_loop);
}

static void dump_now(selector *s, void *data)
{
    (void)s;
    app *a = data;
    if (a->dump)
        a->dump(stderr);
}

/* Installed before anything slow (libcurl's and OpenSSL's start-up): a signal that
 * arrives before the loop exists is kept in app_interrupted and handed to the loop as
 * soon as it is made (attach_signals). */
static void install_signals(void)
{
    struct sigaction su;
    memset(&su, 0, sizeof su);
    su.sa_handler = on_dump_signal;
    su.sa_flags = SA_RESTART;
    sigemptyset(&su.sa_mask);
    sigaction(SIGUSR1, &su, NULL);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESETHAND; /* a second SIGINT/SIGTERM ends the process at once */
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN); /* a peer closing mid-send is an error, not a death */
}

static void attach_signals(app *a)
{
    selector_on_notify(a->loop, dump_now, a);
    signal_loop = a->loop;
    if (app_interrupted)
        selector_interrupt(a->loop); /* it came during start-up */
}

/* Never 0, which would mean "no limit" to libcurl (the command line refuses less than
 * 1 ms; this holds for any crawl_options). */
long app_timeout_ms(const app *a)
{
    long ms = (long)(a->opt.timeout * 1000.0 + 0.5);
    return ms > 0 ? ms : 1;
}

/* The raw transport speaks plain HTTP only: refuse an https root up front. */
static int check_roots(const app *a, const char *prog)
{
    for (int i = 0; a->raw && i < a->opt.nroots; i++) {
        if (strncasecmp(a->opt.roots[i], "https:", 6) == 0) {
            fprintf(stderr,
                    "%s: ROOT '%s': https is not supported by --transport raw "
                    "(use --transport curl)\n",
                    prog, a->opt.roots[i]);
            return -1;
        }
    }
    return 0;
}

/* The raw transport cannot go through a proxy: with a variable set that libcurl would
 * honour for http URLs (http_proxy, all_proxy, ALL_PROXY; not empty, and no_proxy not
 * "*"), one line and -1 — never a crawl that silently goes round the proxy. https_proxy
 * does not matter: the raw transport fetches no https URL. */
static int refuse_proxy_vars(const app *a, const char *prog)
{
    static const char *const vars[] = {"http_proxy", "all_proxy", "ALL_PROXY", NULL};
    const char *no = getenv("no_proxy") ? getenv("no_proxy") : getenv("NO_PROXY");
    for (size_t i = 0; a->raw && !(no && strcmp(no, "*") == 0) && vars[i]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v) {
            fprintf(stderr,
                    "%s: %s is set, and the raw transport cannot go through a proxy: "
                    "unset it (or set no_proxy='*'), or use --transport curl\n",
                    prog, vars[i]);
            return -1;
        }
    }
    return 0;
}

/* Every fetch in flight holds a descriptor, and a few more are ours (NET_FD_RESERVE):
 * past the open-file limit, fetches wait for one to be closed, which is slower but not
 * an error. */

static void warn_nofile(const app *a, const char *prog, long limit)
{
    if (limit > 0 && (long)a->opt.max_tasks + NET_FD_RESERVE > limit)
        log_warn("%s: --max-tasks %d exceeds the open-file limit %ld: fetches will wait "
                 "for free descriptors",
                 prog, a->opt.max_tasks, limit);
}

/* The select backend cannot watch a descriptor at or over FD_SETSIZE; the selector says
 * so per descriptor ("fd N is over FD_SETSIZE"), the command line says what to do. */
static void warn_select(const app *a, const char *prog)
{
    if (strcmp(a->opt.selector, "select") == 0
        && (long)a->opt.max_tasks + NET_FD_RESERVE > FD_SETSIZE)
        log_warn("%s: --selector select watches descriptors below %d only: fetches past "
                 "that fail; use --selector epoll or poll for --max-tasks %d",
                 prog, FD_SETSIZE, a->opt.max_tasks);
}

/* The thread pool the stage asked for (opt.threads), and the raw transport's lookups
 * in it (or the stage's own: opt.pool_dns). */
static int start_pool(app *a, char *err, size_t errlen)
{
    a->pool = threadpool_new(a->loop, a->opt.threads, 64 * (size_t)a->opt.threads, err, errlen);
    if (!a->pool)
        return -1;
    if (a->raw || a->opt.pool_dns) {
        dns_config cfg = {.cache_size = DNS_CACHE_SIZE,
                          .ttl_ms = DNS_TTL_MS,
                          .timeout_ms = (uint64_t)(a->opt.dns_timeout * 1000.0 + 0.5)};
        a->dns = dns_new(a->loop, a->pool, &cfg);
    }
    return 0;
}

/* -v: how names are resolved, and (after the crawl) how many lookups that took. */
static void log_resolver(const app *a, const char *prog)
{
    if (a->curl)
        log_info("%s: libcurl's resolver: %s; one DNS cache for every transfer", prog,
                 curl_glue_resolver());
    else if (a->dns)
        log_info("%s: DNS in the thread pool (%d threads), cached, timeout %g s", prog,
                 a->opt.threads, a->opt.dns_timeout);
    else
        log_info("%s: DNS: getaddrinfo on the loop thread, cached", prog);
}

static void log_lookups(const app *a, const char *prog)
{
    if (a->dns)
        log_info("%s: DNS: %zu lookup(s) in the thread pool", prog, dns_lookups(a->dns));
    else if (a->resolver)
        log_info("%s: DNS: %zu lookup(s) on the loop thread", prog, resolver_lookups(a->resolver));
}

/* Claim every file the crawl writes (outclaim.h), before anything is written. A crawler
 * that goes on (keep_output) never replaces --output or an out_as_output row's file that
 * holds data (one rule, one line for them all: here, and only here); nor does any crawl
 * replace an out_keep row's (a WARC archive) unless it appends to it. */
static int claim_files(app *a, const char *prog)
{
    const crawl_options *o = &a->opt;
    char err[1024];
    size_t n;
    cli_output *out = cli_outputs(o, &a->stage.cli, &n);
    int rc = 0;
    a->claim = outclaim_new();
    for (size_t i = 0; i < n && rc == 0; i++) {
        long long size = 0;
        if (!out[i].path)
            continue;
        if (outclaim_add(a->claim, out[i].flag, out[i].path, &size, err, sizeof err) < 0) {
            fprintf(stderr, "%s: %s\n", prog, err);
            rc = -1;
        } else if (out[i].as_output && size > 0 && o->keep_output) {
            fprintf(stderr,
                    "%s: %s '%s' holds a crawl already (%lld bytes): %s, or "
                    "name a new file\n",
                    prog, out[i].flag, out[i].path, size, o->keep_output);
            rc = -1;
        } else if (out[i].keep && size > 0 && !o->append_output) {
            fprintf(stderr,
                    "%s: %s '%s' holds a crawl already (%lld bytes): %s, or name a "
                    "new file\n",
                    prog, out[i].flag, out[i].path, size,
                    o->keep_files ? o->keep_files : "it is never replaced");
            rc = -1;
        }
    }
    free(out);
    return rc;
}

int app_open_outputs(app *a)
{
    char err[512];
    if (crawl_open_files(a->crawl, err, sizeof err) < 0) {
        fprintf(stderr, "%s: %s\n", a->prog, err);
        return -1;
    }
    outclaim_keep(a->claim);
    return 0;
}

int app_open(app *a, int argc, char **argv, const app_stage *stage)
{
    char err[512];
    memset(a, 0, sizeof *a);
    const char *prog = stage->cli.prog;
    a->prog = prog;
    a->argc = argc;
    a->argv = argv;
    alloc_set_progname(prog); /* "PROG: out of memory (N bytes)" */
    a->stage = *stage;
    a->settings = stage->cli.settings;
    int r = cli_parse(&a->opt, argc, argv, &stage->cli);
    a->opt.trace_pid = stage->number;
    if (r == CLI_EXIT_OK)
        return -1;
    if (r != CLI_OK)
        return 2;
    a->raw = strcmp(a->opt.transport, "raw") == 0;
    if (check_roots(a, prog) < 0 || refuse_proxy_vars(a, prog) < 0)
        return 2;

    if (claim_files(a, prog) < 0) {
        app_close(a);
        return 1;
    }
    install_signals();
    warn_nofile(a, prog, net_raise_nofile());
    warn_select(a, prog);
    a->loop = selector_new(a->opt.selector, err, sizeof err);
    if (a->loop)
        a->crawl = stage->open_outputs_late ? crawl_prepare(&a->opt, stage->name, err, sizeof err)
                                            : crawl_new(&a->opt, stage->name, err, sizeof err);
    if (a->crawl && !stage->open_outputs_late)
        outclaim_keep(a->claim);
    if (a->crawl && (a->opt.threads <= 0 || start_pool(a, err, sizeof err) == 0)) {
        if (!a->raw)
            a->curl = curl_glue_new(a->loop, a->opt.max_tasks + a->opt.own_transfers, a->opt.cacert,
                                    err, sizeof err);
        else if (!a->dns)
            a->resolver = resolver_new();
        if (a->curl) {
            curl_glue_set_user_agent(a->curl, a->opt.user_agent);
            curl_glue_set_http2(a->curl, a->opt.http2);
            curl_glue_set_insecure(a->curl, a->opt.insecure);
        }
    }
    if (!a->loop || !a->crawl || (!a->resolver && !a->dns && !a->curl)) {
        fprintf(stderr, "%s: %s\n", prog, err);
        app_close(a);
        return 1;
    }
    attach_signals(a);
    return 0;
}

/* The pool before the DNS cache: a lookup still running ends into the cache, or is
 * cancelled, before the cache goes. Both before the selector. */
void app_close(app *a)
{
    signal_loop = NULL;
    curl_glue_free(a->curl);
    threadpool_free(a->pool);
    dns_free(a->dns);
    resolver_free(a->resolver);
    crawl_free(a->crawl);
    selector_free(a->loop);
    cli_table_free(a->stage.cli.table, a->settings);
    outclaim_free(a->claim); /* last: SQLite's files are closed */
    memset(a, 0, sizeof *a);
}

int app_main(int argc, char **argv, const app_stage *stage, int (*crawl_fn)(app *a))
{
    app a;
    const char *prog = stage->cli.prog;
    int r = app_open(&a, argc, argv, stage);
    if (r != 0)
        return r < 0 ? 0 : r;

    log_resolver(&a, prog);
    int rc = crawl_fn(&a);
    if (rc == APP_NOT_STARTED) { /* its one line said why; nothing to report */
        app_close(&a);
        return 1;
    }
    int status = rc < 0 ? 1 : 0;
    log_lookups(&a, prog);
    char err[1024];
    if (app_interrupted)
        log_warn("%s: interrupted; %zu URL(s) left to do", prog, a.todo);
    if (crawl_write_report(a.crawl, a.todo, a.opt.transport, selector_backend(a.loop),
                           app_interrupted, err, sizeof err)
        < 0) {
        fprintf(stderr, "%s: %s\n", prog, err);
        status = 1;
    }
    if (status == 0 && a.summary && !a.opt.quiet)
        a.summary(&a);
    if (status == 0)
        status = a.exit_status;
    app_close(&a);
    return status;
}
