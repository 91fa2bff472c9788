/* statsampler.c — sample testsite's /__stats every few milliseconds, for the plots in
 * docs/benchmarks.md (fetches in flight over time).
 *
 *   statsampler [-i MS] [-o FILE] [-a] BASE_URL
 *
 * Polls BASE_URL/__stats over one keep-alive HTTP/1.1 connection (reconnecting when the
 * server closes it) every MS milliseconds (default 50) and prints one line per sample:
 *
 *   t_ms in_progress connections served
 *
 * t_ms counts from the first sample; with -a it is the monotonic clock in ms (as in
 * runstat -s), to line the samples up with another tool's. Runs until SIGTERM/SIGINT,
 * or until the server
 * cannot be reached any more; exits 0. Only http://127.0.0.1:PORT/-style URLs (an IPv4
 * literal host) are supported: it samples the local testsite, nothing else.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int connect_to(const struct sockaddr_in *sa)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct timeval tv = {2, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (const struct sockaddr *)sa, sizeof *sa) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static long field(const char *body, const char *key)
{
    const char *p = strstr(body, key);
    return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

/* One GET /__stats on fd; fills the three numbers. 0, or -1 (reconnect). */
static int sample(int fd, const char *hostport, long *inprog, long *conns, long *served)
{
    char req[256];
    int n =
        snprintf(req, sizeof req,
                 "GET /__stats HTTP/1.1\r\nHost: %s\r\nUser-Agent: statsampler\r\n\r\n", hostport);
    if (send(fd, req, (size_t)n, MSG_NOSIGNAL) != n)
        return -1;
    char buf[4096];
    size_t len = 0;
    long clen = -1;
    char *body = NULL;
    while (len < sizeof buf - 1) {
        ssize_t r = recv(fd, buf + len, sizeof buf - 1 - len, 0);
        if (r <= 0)
            return -1;
        len += (size_t)r;
        buf[len] = '\0';
        if (!body && (body = strstr(buf, "\r\n\r\n"))) {
            body += 4;
            const char *cl = strcasestr(buf, "content-length:");
            clen = cl ? strtol(cl + 15, NULL, 10) : -1;
        }
        if (body && clen >= 0 && (long)(len - (size_t)(body - buf)) >= clen)
            break;
    }
    if (!body)
        return -1;
    *inprog = field(body, "\"in_progress\": ");
    *conns = field(body, "\"connections\": ");
    *served = field(body, "\"served\": ");
    return 0;
}

int main(int argc, char **argv)
{
    long interval = 50;
    const char *out = NULL;
    int absolute = 0;
    int i = 1;
    while (i < argc && argv[i][0] == '-') {
        if (strcmp(argv[i], "-a") == 0) {
            absolute = 1;
            i++;
            continue;
        }
        if (i + 1 >= argc)
            break;
        if (strcmp(argv[i], "-i") == 0)
            interval = strtol(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "-o") == 0)
            out = argv[i + 1];
        else
            break;
        i += 2;
    }
    if (i != argc - 1 || interval <= 0) {
        fprintf(stderr, "usage: statsampler [-i MS] [-o FILE] [-a] http://127.0.0.1:PORT/\n");
        return 2;
    }
    char host[64];
    int port;
    if (sscanf(argv[i], "http://%63[0-9.]:%d", host, &port) != 2) {
        fprintf(stderr, "statsampler: want http://IPV4:PORT/, got %s\n", argv[i]);
        return 2;
    }
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
        fprintf(stderr, "statsampler: bad address %s\n", host);
        return 2;
    }
    char hostport[96];
    snprintf(hostport, sizeof hostport, "%s:%d", host, port);
    FILE *f = out ? fopen(out, "w") : stdout;
    if (!f) {
        perror("statsampler");
        return 1;
    }
    struct sigaction sa_sig = {.sa_handler = on_signal};
    sigemptyset(&sa_sig.sa_mask);
    sigaction(SIGTERM, &sa_sig, NULL);
    sigaction(SIGINT, &sa_sig, NULL);

    int fd = -1, failures = 0;
    double t0 = -1, next = now_ms();
    while (!stop && failures < 20) {
        if (fd < 0)
            fd = connect_to(&sa);
        long inprog, conns, served;
        if (fd < 0 || sample(fd, hostport, &inprog, &conns, &served) < 0) {
            if (fd >= 0)
                close(fd);
            fd = -1;
            failures++;
        } else {
            failures = 0;
            double t = now_ms();
            if (t0 < 0)
                t0 = absolute ? 0 : t;
            fprintf(f, "%.0f %ld %ld %ld\n", t - t0, inprog, conns, served);
            fflush(f);
        }
        next += (double)interval;
        double wait = next - now_ms();
        if (wait < 0)
            next = now_ms();
        else {
            struct timespec ts = {(time_t)(wait / 1e3), (long)(wait * 1e6) % 1000000000L};
            while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !stop)
                ;
        }
    }
    if (fd >= 0)
        close(fd);
    if (f != stdout)
        fclose(f);
    return 0;
}
