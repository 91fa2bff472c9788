/* idealsim.c — the best wall time any crawler can reach on a generated site, for the
 * latency section of docs/benchmarks.md.
 *
 *   idealsim --generate SPEC --delay MS --max-tasks N
 *
 * The ideal, pages x delay / max_tasks, assumes every slot is busy from the
 * first millisecond. It cannot be: at the start only the root is known, then only its
 * links. idealsim crawls the site of testsite --generate SPEC with a crawler that costs
 * nothing: each fetch takes exactly MS milliseconds of simulated time, a slot that frees
 * takes the oldest URL waiting (FIFO, as the stages do), and parsing, the seen set and
 * the host policy are the real ones (the crawl core of common/, fed testsite's own pages
 * through the HTTP parser). It prints one line:
 *
 *   pages=2000 formula_s=1.000 bound_s=1.100 slot_s=1.0945
 *
 * bound_s is the simulated finish; slot_s the finish if, after the first two rounds,
 * every slot were busy until the end (a floor that ignores the last round's tail).
 * No sockets, no clock: the result depends only on the arguments.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "cli.h"
#include "crawl.h"
#include "gen.h"
#include "http.h"

#define BASE "http://127.0.0.1:8"

typedef struct pending {
    char *url;
    int max_redirect;
} pending;

typedef struct sim {
    pending *fifo; /* URLs waiting for a slot */
    size_t head, tail, cap;
} sim;

static void add_url(void *ctx, const crawl_request *r)
{
    sim *s = ctx;
    const char *url = r->url;
    int max_redirect = r->max_redirect; /* the simulation keeps no more than that */
    if (s->tail == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 1024;
        s->fifo = xreallocarray(s->fifo, s->cap, sizeof *s->fifo);
    }
    s->fifo[s->tail].url = xstrdup(url);
    s->fifo[s->tail++].max_redirect = max_redirect;
}

/* One fetch, all at once: testsite's page, through the HTTP parser into the core.
 * p is a copy: the links it adds may move s->fifo. */
static int fetch(crawl *c, const gen_spec *g, pending p, sim *s)
{
    const char *path = p.url + strlen(BASE);
    long i = gen_page_index(g, path);
    if (i < 0) {
        fprintf(stderr, "idealsim: %s is not a page of the site\n", p.url);
        return -1;
    }
    size_t blen = 0;
    char *body = gen_render(g, BASE, i, &blen);
    char head[256];
    int hlen = snprintf(head, sizeof head,
                        "HTTP/1.0 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
                        "Content-Length: %zu\r\n\r\n",
                        blen);
    crawl_request req = {p.url, p.max_redirect, 0, NULL, NULL};
    crawl_fetch *f = crawl_fetch_new(c, &req);
    http_parser *hp = http_parser_new(crawl_fetch_sink(f));
    int r = http_parser_feed(hp, head, (size_t)hlen);
    if (r == 0)
        r = http_parser_feed(hp, body, blen);
    http_parser_free(hp);
    free(body);
    if (r != 1) {
        fprintf(stderr, "idealsim: %s: could not parse the page\n", p.url);
        crawl_fetch_discard(f);
        return -1;
    }
    crawl_fetch_done(f, add_url, s);
    return 0;
}

__attribute__((format(printf, 1, 2))) static int usage(const char *msg, ...)
{
    va_list ap;
    va_start(ap, msg);
    fprintf(stderr, "idealsim: ");
    vfprintf(stderr, msg, ap);
    va_end(ap);
    fprintf(stderr, "\nusage: idealsim --generate SPEC --delay MS --max-tasks N\n");
    return 2;
}

int main(int argc, char **argv)
{
    const char *spec = NULL;
    long delay = -1, tasks = -1;
    for (int i = 1; i < argc; i += 2) {
        const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (strcmp(opt, "--generate") && strcmp(opt, "--delay") && strcmp(opt, "--max-tasks"))
            return usage("unknown option '%s'", opt);
        if (!val)
            return usage("'%s' needs a value", opt);
        if (!strcmp(opt, "--generate")) {
            spec = val;
        } else if (!strcmp(opt, "--delay")) {
            delay = strtol(val, &end, 10);
            if (end == val || *end || delay < 1 || delay > 3600000)
                return usage("bad --delay '%s' (milliseconds, 1 to 3600000)", val);
        } else {
            tasks = strtol(val, &end, 10);
            if (end == val || *end || tasks < 1 || tasks > 1000000)
                return usage("bad --max-tasks '%s' (1 to 1000000)", val);
        }
    }
    if (!spec || delay < 0 || tasks < 0)
        return usage("%s", "--generate, --delay and --max-tasks are all needed");
    gen_spec g;
    char err[256];
    if (gen_parse_spec(spec, &g, err, sizeof err) < 0)
        return usage("%s", err);

    char tasks_arg[32];
    snprintf(tasks_arg, sizeof tasks_arg, "%ld", tasks);
    char *cargv[] = {"idealsim",    "-q",      "--output", "/dev/null",
                     "--max-tasks", tasks_arg, BASE "/",   NULL};
    crawl_options o;
    const cli_command cmd = {.prog = "idealsim", .default_transport = "raw"};
    if (cli_parse(&o, 7, cargv, &cmd) != CLI_OK)
        return 1;
    crawl *c = crawl_new(&o, "ideal", err, sizeof err);
    if (!c) {
        fprintf(stderr, "idealsim: %s\n", err);
        return 1;
    }

    /* Rounds are exact: every fetch takes `delay`, so all slots started together end
     * together, and a round is the set of fetches started at the same instant. */
    sim s = {0};
    crawl_add_roots(c, add_url, &s);
    long rounds = 0, pages = 0, early_slots = 0;
    int rc = 0;
    while (s.head < s.tail && rc == 0) {
        size_t n = s.tail - s.head < (size_t)tasks ? s.tail - s.head : (size_t)tasks;
        size_t first = s.head;
        s.head += n;
        if (rounds < 2)
            early_slots += (long)n;
        for (size_t k = first; k < first + n && rc == 0; k++)
            rc = fetch(c, &g, s.fifo[k], &s);
        pages += (long)n;
        rounds++;
    }
    for (size_t k = 0; k < s.tail; k++)
        free(s.fifo[k].url);
    free(s.fifo);
    size_t done = crawl_done_count(c);
    crawl_free(c);
    if (rc)
        return 1;
    double d = (double)delay / 1000.0;
    double formula = (double)done * d / (double)tasks;
    /* The floor: the first two rounds as they are, then every slot busy. */
    double rest = (double)(pages - early_slots) * d / (double)tasks;
    double slot = (rounds >= 2 ? 2 * d : (double)rounds * d) + (rest > 0 ? rest : 0);
    printf("pages=%zu formula_s=%.3f bound_s=%.3f slot_s=%.4f\n", done, formula, (double)rounds * d,
           slot);
    return 0;
}
