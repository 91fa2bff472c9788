/* main.c — testsite: a local HTTP/1.1 server for the crawler's tests.
 *
 *   testsite [--port N] [--bind ADDR] [--delay MS] [--selector NAME]
 *            [--log FILE [--log-header NAME]...]
 *            (SITEFILE | --generate pages=N,links=K,size=B,seed=S)
 *
 * Prints its base URL as the first line of stdout, then serves until SIGTERM or
 * SIGINT. Bad arguments or a bad site file: one line on stderr, exit status 2. */
#include "gen.h"
#include "log.h"
#include "net.h"
#include "selector.h"
#include "server.h"
#include "site.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
    "usage: testsite [--port N] [--bind ADDR] [--delay MS] [--selector NAME]\n"
    "                [--log FILE [--log-header NAME]... [--log-sent]]\n"
    "                (SITEFILE | --generate pages=N,links=K,size=B,seed=S)\n"
    "  --log FILE  a line per request when it ends: BEGIN_MS END_MS HOST PATH HOW\n"
    "              (monotonic ms; HOW served, dropped or aborted; server.h)\n"
    "  --log-header NAME  and then the request's NAME fields: \"-\" for none, else\n"
    "              \"=\" and the values, percent-encoded (up to 8 NAMEs)\n"
    "  --log-sent  and last the response's STATUS (- for raw) and the BYTES sent\n";

typedef struct options {
    int port;
    const char *bind;
    long delay_ms;
    const char *selector;
    const char *site_file;
    const char *generate;
    const char *log;
    const char *log_headers[SERVER_MAX_LOG_HEADERS];
    size_t nlog_headers;
    bool log_sent;
} options;

static int wake_pipe[2] = {-1, -1};

static void on_signal(int sig)
{
    (void)sig;
    int saved = errno;
    char b = 1;
    ssize_t n = write(wake_pipe[1], &b, 1); /* full pipe: a wake-up is pending anyway */
    (void)n;
    errno = saved;
}

static void on_wake(selector *s, int fd, int events, void *data)
{
    (void)events;
    (void)data;
    char buf[64];
    while (read(fd, buf, sizeof buf) > 0)
        ;
    selector_stop(s);
}

__attribute__((format(printf, 1, 2))) static int bad_usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "testsite: ");
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (try --help)\n");
    return -1;
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* Returns 0, 1 for --help, -1 on a bad command line (message printed). */
static int parse_args(int argc, char **argv, options *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            return 1;
        if (a[0] != '-' || !a[1]) {
            if (o->site_file)
                return bad_usage("more than one site file ('%s')", a);
            o->site_file = a;
            continue;
        }
        if (!strcmp(a, "--log-sent")) {
            o->log_sent = true;
            continue;
        }
        static const char *const with_value[] = {
            "--port", "--bind", "--delay", "--selector", "--generate", "--log", "--log-header"};
        const char *val = NULL;
        size_t k;
        for (k = 0; k < sizeof with_value / sizeof *with_value; k++) {
            size_t n = strlen(with_value[k]);
            if (!strncmp(a, with_value[k], n) && (a[n] == '\0' || a[n] == '=')) {
                if (a[n] == '=')
                    val = a + n + 1;
                else if (i + 1 < argc)
                    val = argv[++i];
                else
                    return bad_usage("%s needs a value", a);
                break;
            }
        }
        long v;
        switch (k) {
        case 0:
            if (parse_long(val, 0, 65535, &v) < 0)
                return bad_usage("bad --port '%s' (0..65535)", val);
            o->port = (int)v;
            break;
        case 1: o->bind = val; break;
        case 2:
            if (parse_long(val, 0, 3600000, &v) < 0)
                return bad_usage("bad --delay '%s' (milliseconds, 0..3600000)", val);
            o->delay_ms = v;
            break;
        case 3: o->selector = val; break;
        case 4: o->generate = val; break;
        case 5: o->log = val; break;
        case 6:
            if (o->nlog_headers == SERVER_MAX_LOG_HEADERS)
                return bad_usage("too many --log-header ('%s')", val);
            o->log_headers[o->nlog_headers++] = val;
            break;
        default: return bad_usage("unknown option '%s'", a);
        }
    }
    if (!o->site_file && !o->generate)
        return bad_usage("%s", "give a SITEFILE or --generate SPEC");
    if (o->site_file && o->generate)
        return bad_usage("%s", "give a SITEFILE or --generate SPEC, not both");
    if (o->log_sent && !o->log)
        return bad_usage("%s", "--log-sent adds to the lines of --log FILE: give --log");
    if (o->nlog_headers && !o->log)
        return bad_usage("%s", "--log-header adds to the lines of --log FILE: give --log");
    return 0;
}

static int setup_signals(selector *sel)
{
    if (pipe2(wake_pipe, O_NONBLOCK | O_CLOEXEC) < 0)
        return -1;
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    if (sigaction(SIGTERM, &sa, NULL) < 0 || sigaction(SIGINT, &sa, NULL) < 0)
        return -1;
    signal(SIGPIPE, SIG_IGN);
    return selector_register(sel, wake_pipe[0], SEL_READ, on_wake, NULL);
}

int main(int argc, char **argv)
{
    options o = {.bind = "127.0.0.1"};
    int rc = parse_args(argc, argv, &o);
    if (rc != 0) {
        if (rc > 0)
            fputs(usage, stdout);
        return rc > 0 ? 0 : 2;
    }
    char err[600];
    gen_spec gen;
    server srv = {.listen_fd = -1,
                  .delay_ms = (uint64_t)o.delay_ms,
                  .nlog_headers = o.nlog_headers,
                  .log_sent = o.log_sent};
    memcpy(srv.log_headers, o.log_headers, sizeof srv.log_headers);
    if (o.generate) {
        if (gen_parse_spec(o.generate, &gen, err, sizeof err) < 0) {
            fprintf(stderr, "testsite: %s\n", err);
            return 2;
        }
        srv.gen = &gen;
    } else if (!(srv.site = site_load(o.site_file, err, sizeof err))) {
        fprintf(stderr, "testsite: %s\n", err);
        return 2;
    }
    if (o.log && !(srv.log = fopen(o.log, "w"))) {
        fprintf(stderr, "testsite: cannot open --log '%s': %s\n", o.log, strerror(errno));
        site_free(srv.site);
        return 2;
    }
    net_raise_nofile(); /* 10,000 connections need more than the usual 1024 */
    srv.sel = selector_new(o.selector, err, sizeof err);
    if (!srv.sel) {
        fprintf(stderr, "testsite: %s\n", err);
        site_free(srv.site);
        if (srv.log)
            fclose(srv.log);
        return 2;
    }
    int status = 0;
    bool listening = server_listen(&srv, o.bind, o.port, err, sizeof err) == 0;
    if (listening && srv.site)
        site_finish(srv.site, srv.base); /* {base} needs the port */
    if (!listening) {
        fprintf(stderr, "testsite: %s\n", err);
        status = 2;
    } else if (setup_signals(srv.sel) < 0 || server_start(&srv) < 0) {
        fprintf(stderr, "testsite: cannot start: %s\n", strerror(errno));
        status = 1;
    } else {
        printf("%s/\n", srv.base);
        fflush(stdout);
        if (selector_run(srv.sel) < 0) {
            fprintf(stderr, "testsite: %s\n", selector_error(srv.sel));
            status = 1;
        }
    }
    server_shutdown(&srv);
    if (wake_pipe[0] >= 0) {
        selector_unregister(srv.sel, wake_pipe[0]);
        close(wake_pipe[0]);
        close(wake_pipe[1]);
    }
    selector_free(srv.sel);
    site_free(srv.site);
    if (srv.log)
        fclose(srv.log);
    return status;
}
