/* test_mirror.c — crawl-queue --mirror DIR (stage3_queue/pipelines/mirror.c) against
 * sites on loopback: the files of tests/sites/mirror.site where docs/mirror.md's rules
 * put them; every relative link of every saved page and stylesheet names a saved file
 * (read by the project's own link parser and CSS tokenizer, resolved against the file's
 * file:// URL); a hostile site (escaped dot segments, %2f, backslashes, NUL, a planted
 * symbolic link, a file of the user's) writes nothing outside DIR — a sentinel
 * directory beside it is listed before and after — and each refusal is a record's
 * exception; a full disk is one line and exit 1. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <sqlite3.h>

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "css_urls.h"
#include "jsonl.h"
#include "links.h"
#include "scratch.h"
#include "signal_at.h"
#include "smallfs.h"
#include "testsite_helper.h"
#include "url.h"

static char *const dir = scratch_dir;
static testsite ts; /* the test's site: stopped by the next test or the teardown */

static char *bin(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", BIN_DIR, name);
    return path;
}

/* ---- reading a tree ---- */

typedef struct listing {
    char **v;
    size_t n;
} listing;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every entry under root, as "rel TYPE SIZE" (links not followed), sorted. */
static void list_tree(const char *root, const char *rel, listing *l)
{
    char path[4096];
    snprintf(path, sizeof path, "%s%s%s", root, rel[0] ? "/" : "", rel);
    DIR *d = opendir(path);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char sub[4096], full[8192];
        snprintf(sub, sizeof sub, "%s%s%s", rel, rel[0] ? "/" : "", e->d_name);
        snprintf(full, sizeof full, "%s/%s", root, sub);
        struct stat st;
        assert_int_equal(lstat(full, &st), 0);
        char type = S_ISLNK(st.st_mode) ? 'l' : S_ISDIR(st.st_mode) ? 'd' : 'f';
        l->v = xreallocarray(l->v, l->n + 1, sizeof *l->v);
        l->v[l->n++] = xasprintf("%s %c %lld", sub, type, (long long)st.st_size);
        if (type == 'd')
            list_tree(root, sub, l);
    }
    closedir(d);
    qsort(l->v, l->n, sizeof *l->v, cmp_str);
}

static void listing_free(listing *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

static bool listed(const listing *l, const char *entry)
{
    for (size_t i = 0; i < l->n; i++)
        if (strncmp(l->v[i], entry, strlen(entry)) == 0 && l->v[i][strlen(entry)] == ' ')
            return true;
    return false;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t n = 0, cap = 0, got;
    char chunk[65536];
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (n + got + 1 > cap) {
            cap = (n + got + 1) * 2;
            buf = xrealloc(buf, cap);
        }
        memcpy(buf + n, chunk, got);
        n += got;
    }
    fclose(f);
    if (!buf)
        buf = xcalloc(1, 1);
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* ---- the links of a saved file ---- */

typedef struct check {
    const char *server;   /* "http://127.0.0.1:P/" */
    const char *base;     /* the file's file:// URL */
    int local, remote_ok; /* links to saved files; links to the server, allowed ones */
    char bad[8][512];     /* what did not resolve */
    int nbad;
    const char *const *allowed_remote; /* server URLs that may stay absolute */
} check;

static char *decode_path(const char *p)
{
    char *out = xmalloc(strlen(p) + 1), *o = out;
    for (; *p; p++) {
        unsigned v;
        if (*p == '%' && sscanf(p + 1, "%2x", &v) == 1 && p[1] && p[2]) {
            *o++ = (char)v;
            p += 2;
        } else {
            *o++ = *p;
        }
    }
    *o = '\0';
    return out;
}

static void on_link(void *ctx, const char *url)
{
    check *c = ctx;
    if (strncmp(url, "file://", 7) == 0) {
        char *path = decode_path(url + 7);
        struct stat st;
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
            c->local++;
        else if (c->nbad < 8)
            snprintf(c->bad[c->nbad++], 512, "%s (from %s)", url, c->base);
        free(path);
    } else if (strncmp(url, c->server, strlen(c->server)) == 0) {
        bool ok = false;
        for (const char *const *a = c->allowed_remote; *a && !ok; a++)
            ok = strcmp(url + strlen(c->server) - 1, *a) == 0;
        if (ok)
            c->remote_ok++;
        else if (c->nbad < 8)
            snprintf(c->bad[c->nbad++], 512, "%s still absolute (in %s)", url, c->base);
    }
}

static void on_css(void *ctx, const char *href)
{
    check *c = ctx;
    char *url = url_resolve(c->base, href);
    if (url)
        on_link(c, url);
    free(url);
}

/* Every page and stylesheet under root: their links checked. */
static void check_links(const char *root, const listing *l, check *c)
{
    for (size_t i = 0; i < l->n; i++) {
        char rel[4096];
        char type;
        long long size;
        char *sp = strrchr(l->v[i], ' ');
        *sp = '\0';
        char *tp = strrchr(l->v[i], ' ');
        sscanf(tp + 1, "%c", &type);
        sscanf(sp + 1, "%lld", &size);
        snprintf(rel, sizeof rel, "%.*s", (int)(tp - l->v[i]), l->v[i]);
        *sp = ' ';
        size_t n = strlen(rel);
        bool html = n > 5 && strcmp(rel + n - 5, ".html") == 0;
        bool css = n > 4 && strcmp(rel + n - 4, ".css") == 0;
        if (type != 'f' || (!html && !css))
            continue;
        char path[8192], *url;
        snprintf(path, sizeof path, "%s/%s", root, rel);
        /* the file's URL, each byte of its name percent-encoded where a URL needs it */
        char *enc = xcalloc(1, strlen(path) * 3 + 1), *e = enc;
        for (const unsigned char *p = (const unsigned char *)path; *p; p++)
            e += sprintf(e, strchr("?#% ", *p) || *p < 0x21 || *p > 0x7e ? "%%%02X" : "%c", *p);
        url = xasprintf("file://%s", enc);
        free(enc);
        c->base = url;
        size_t len;
        char *body = slurp(path, &len);
        assert_non_null(body);
        if (html) {
            links_parser *lp = links_new(url, NULL, false, on_link, c);
            links_feed(lp, body, len);
            links_finish(lp);
            links_free(lp);
            lp = links_new_requisites(url, NULL, on_link, c);
            links_feed(lp, body, len);
            links_finish(lp);
            links_free(lp);
        } else {
            css_urls(body, len, on_css, c);
        }
        free(body);
        free(url);
        c->base = NULL;
    }
}

/* ---- the site ---- */

static void run_mirror(crawl_run *r, const char *mirror, const char *root, const char *extra)
{
    char *argv[] = {
        bin("crawl-queue"),           "--format", "jsonl", "--mirror", (char *)mirror, (char *)root,
        extra ? (char *)extra : NULL, NULL};
    assert_int_equal(run_crawler(r, argv, 60), 0);
}

static void test_site(void **state)
{
    (void)state;
    testsite_stop(&ts); /* a failed test's, if any */
    const char *const args[] = {SITES_DIR "/mirror.site", NULL};
    assert_int_equal(testsite_start(&ts, args), 0);
    char mirror[512], host[64];
    snprintf(mirror, sizeof mirror, "%s/site", dir);
    snprintf(host, sizeof host, "127.0.0.1:%d", testsite_port(&ts));
    crawl_run r;
    run_mirror(&r, mirror, ts.url, "-v");
    if (r.exit_code != 0)
        fail_msg("exit %d: %s", r.exit_code, r.err);
    /* a -v line per file */
    char vline[1024];
    snprintf(vline, sizeof vline,
             "--mirror: %sstatic/site.css?v=2 -> %s/%s/static/site.css?v=2.css", ts.url, mirror,
             host);
    assert_non_null(strstr(r.err, vline));
    listing l = {0};
    list_tree(mirror, "", &l);
    const char *const want[] = {"index.html",         "docs/index.html",         "docs/page.html",
                                "page?id=1&x=2.html", "static/site.css?v=2.css", "static/print.css",
                                "static/icon.png",    "static/bg.png",           "static/logo.png",
                                "static/logo@2x.png"};
    size_t nfiles = 0;
    for (size_t i = 0; i < l.n; i++)
        nfiles += strstr(l.v[i], " f ") != NULL;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char e[512];
        snprintf(e, sizeof e, "%s/%s", host, want[i]);
        if (!listed(&l, e))
            fail_msg("%s not in the mirror", e);
    }
    /* the ten files, the manifest, nothing else (no temporary file left) */
    assert_int_equal(nfiles, sizeof want / sizeof want[0] + 1);
    assert_true(listed(&l, ".crawlstages-mirror"));
    /* a page only in a comment or a script is not fetched, nor saved */
    char commented[256];
    snprintf(commented, sizeof commented, "%scommented.html", ts.url);
    assert_null(crawl_run_find(&r, commented));
    const char *const allowed[] = {"/missing.html", NULL};
    check c = {.server = ts.url, .allowed_remote = allowed};
    check_links(mirror, &l, &c);
    for (int i = 0; i < c.nbad; i++)
        print_error("bad link: %s\n", c.bad[i]);
    assert_int_equal(c.nbad, 0);
    assert_true(c.local >= 25); /* the site's links, counted per parse */
    assert_true(c.remote_ok >= 1);
    /* bytes outside the rewritten values are kept */
    char path[1024];
    size_t len;
    snprintf(path, sizeof path, "%s/%s/index.html", mirror, host);
    char *page = slurp(path, &len);
    assert_non_null(strstr(page, "<!-- <a href=\"/commented.html\">not a link</a> -->"));
    assert_non_null(strstr(page, "<a href=\"docs/page.html#sec\">"));
    assert_non_null(strstr(page, "<a href='page%3Fid=1%26x=2.html'>"));
    assert_non_null(strstr(page, "<a href=\"docs/page.html\">Moved</a>")); /* a redirect */
    assert_non_null(strstr(page, "<a href=\"#top\">Top</a>"));
    assert_non_null(strstr(page, "<a href=\"http://elsewhere.example/x\">Away</a>"));
    assert_non_null(strstr(page, "<script>var s = \"<a href='/in-script.html'>\"; </script>"));
    assert_non_null(strstr(page, "<link rel=icon href=static/icon.png>"));
    assert_non_null(strstr(page, "srcset=\"static/logo.png 1x, static/logo@2x.png 2x\""));
    free(page);
    snprintf(path, sizeof path, "%s/%s/docs/index.html", mirror, host);
    page = slurp(path, &len);
    assert_non_null(strstr(page, "<base href=\"index.html\">"));
    free(page);
    /* the summary line: where, how many files */
    char sum[1024];
    snprintf(sum, sizeof sum, "mirror in '%s': 10 files,", mirror);
    assert_non_null(strstr(r.err, sum));
    /* a second run into the same DIR is refused (it holds a mirror), nothing changed */
    listing before = {0}, after = {0};
    list_tree(mirror, "", &before);
    crawl_run again;
    run_mirror(&again, mirror, ts.url, NULL);
    assert_true(crawl_run_one_line(&again, 1, "holds a mirror already"));
    list_tree(mirror, "", &after);
    assert_int_equal(before.n, after.n);
    for (size_t i = 0; i < before.n; i++)
        assert_string_equal(before.v[i], after.v[i]);
    listing_free(&before), listing_free(&after), listing_free(&l);
    crawl_run_free(&again);
    crawl_run_free(&r);
    testsite_stop(&ts);
}

/* ---- a hostile site ---- */

static const char hostile[] = "page /\n"
                              "  link /%2e%2e/%2e%2e/sentinel/pwned.html\n"
                              "  link /a/%2E%2E/%2E%2E/%2E%2E/sentinel/x.html\n"
                              "  link /x%2f..%2f..%2fsentinel%2fy.html\n"
                              "  link \"/back\\\\..\\\\sentinel.html\"\n"
                              "  link /nul%00.html\n"
                              "  link http://%2e%2e/x.html\n"
                              "  link /static/in-link.png /user.html /ok.html\n"
                              "page /static/in-link.png type=image/png body=PNG\n"
                              "page /user.html body=theirs\n"
                              "page /ok.html body=fine\n";

static void test_hostile(void **state)
{
    (void)state;
    char mirror[512], sentinel[512], hostdir[600], path[1024];
    snprintf(mirror, sizeof mirror, "%s/hostile", dir);
    snprintf(sentinel, sizeof sentinel, "%s/sentinel", dir);
    assert_int_equal(mkdir(sentinel, 0777), 0);
    snprintf(path, sizeof path, "%s/keep.txt", sentinel);
    FILE *f = fopen(path, "w");
    fputs("the user's", f);
    fclose(f);
    testsite_stop(&ts); /* a failed test's, if any */
    assert_int_equal(testsite_start_text(&ts, dir, "hostile", hostile, NULL), 0);
    /* planted in DIR before the crawl: a link to the sentinel, a file of the user's */
    assert_int_equal(mkdir(mirror, 0777), 0);
    snprintf(hostdir, sizeof hostdir, "%s/127.0.0.1:%d", mirror, testsite_port(&ts));
    assert_int_equal(mkdir(hostdir, 0777), 0);
    snprintf(path, sizeof path, "%s/static", hostdir);
    assert_int_equal(symlink(sentinel, path), 0);
    snprintf(path, sizeof path, "%s/user.html", hostdir);
    f = fopen(path, "w");
    fputs("mine", f);
    fclose(f);
    listing before = {0}, after = {0};
    list_tree(dir, "sentinel", &before);
    crawl_run r;
    run_mirror(&r, mirror, ts.url, NULL);
    assert_int_equal(r.exit_code, 0);
    list_tree(dir, "sentinel", &after);
    assert_int_equal(before.n, after.n);
    for (size_t i = 0; i < before.n; i++)
        assert_string_equal(before.v[i], after.v[i]);
    /* each URL with an escaped dot segment, slash, backslash or NUL: refused, its
     * record says so */
    int refused = 0;
    for (size_t i = 0; i < r.nrecords; i++) {
        const char *url = jobj_str(r.records[i], "url");
        const char *exc = jobj_str(r.records[i], "exception");
        if (strcasestr(url, "%2e") || strcasestr(url, "%2f") || strcasestr(url, "%5c")
            || strstr(url, "%00") || strchr(url + 7, '\\')) {
            if (!exc || !strstr(exc, "--mirror"))
                fail_msg("%s: not refused (%s)", url, exc ? exc : "no exception");
            refused++;
        }
    }
    assert_true(refused >= 4);
    /* the link is still a link to the sentinel, the user's file still theirs */
    struct stat st;
    snprintf(path, sizeof path, "%s/static", hostdir);
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    snprintf(path, sizeof path, "%s/user.html", hostdir);
    size_t len;
    char *mine = slurp(path, &len);
    assert_string_equal(mine, "mine");
    free(mine);
    assert_non_null(strstr(r.err, "not replaced"));
    assert_non_null(strstr(r.err, "not followed"));
    snprintf(path, sizeof path, "%s/ok.html", hostdir);
    char *ok = slurp(path, &len);
    assert_non_null(ok);
    assert_string_equal(ok, "fine");
    free(ok);
    /* nothing beside DIR and the sentinel appeared in the scratch directory */
    listing top = {0};
    list_tree(dir, "", &top);
    for (size_t i = 0; i < top.n; i++)
        if (!strchr(top.v[i], '/'))
            assert_true(strncmp(top.v[i], "hostile", 7) == 0
                        || strncmp(top.v[i], "sentinel", 8) == 0
                        || strncmp(top.v[i], "site", 4) == 0 || strncmp(top.v[i], "full", 4) == 0);
    listing_free(&top), listing_free(&before), listing_free(&after);
    crawl_run_free(&r);
    testsite_stop(&ts);
}

/* ---- a full disk ---- */

static char mounted[512]; /* the tmpfs to unmount at the end, whatever failed */

static int teardown(void **state)
{
    testsite_stop(&ts);
    if (mounted[0])
        smallfs_unmount(mounted);
    return scratch_teardown(state);
}

/* The URLs --state counts done with a 2xx (its pages rows) that DIR has no file for
 * (no "f" line in the manifest, or its file not there), as one string ("" for none),
 * and in *done how many it counts done, in *saved how many have their file. */
static char *done_unsaved(const char *db, const char *mirror, int *done, int *saved)
{
    char path[600];
    snprintf(path, sizeof path, "%s/.crawlstages-mirror", mirror);
    size_t len;
    char *manifest = slurp(path, &len);
    assert_non_null(manifest);
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(h,
                                        "SELECT DISTINCT url FROM pages WHERE status >= 200 AND "
                                        "status < 300",
                                        -1, &st, NULL),
                     SQLITE_OK);
    char *missing = xstrdup("");
    *done = *saved = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *url = (const char *)sqlite3_column_text(st, 0);
        (*done)++;
        /* its last "f\tKIND\tNAME\tURL\n" line: the name */
        char *want = xasprintf("\t%s\n", url), *name = NULL;
        for (char *p = manifest; (p = strstr(p, want)); p++) {
            char *bol = p;
            while (bol > manifest && bol[-1] != '\n')
                bol--;
            if (strncmp(bol, "f\t", 2) == 0 && bol + 4 < p) {
                free(name);
                name = xasprintf("%s/%.*s", mirror, (int)(p - bol - 4), bol + 4);
            }
        }
        struct stat sb;
        if (name && stat(name, &sb) == 0) {
            (*saved)++;
        } else {
            char *m = xasprintf("%s %s", missing, url);
            free(missing);
            missing = m;
        }
        free(name);
        free(want);
    }
    sqlite3_finalize(st);
    sqlite3_close(h);
    free(manifest);
    return missing;
}

static const char big[] = "page /\n"
                          "  link /1.bin /2.bin /3.bin /4.bin /5.bin /6.bin\n"
                          "page /1.bin type=application/octet-stream bytes=30000 fill=text\n"
                          "page /2.bin type=application/octet-stream bytes=30000 fill=text\n"
                          "page /3.bin type=application/octet-stream bytes=30000 fill=text\n"
                          "page /4.bin type=application/octet-stream bytes=30000 fill=text\n"
                          "page /5.bin type=application/octet-stream bytes=30000 fill=text\n"
                          "page /6.bin type=application/octet-stream bytes=30000 fill=text\n";

static void test_disk_full(void **state)
{
    (void)state;
    char fs[512], mirror[600];
    snprintf(fs, sizeof fs, "%s/full", dir);
    if (smallfs_mount(fs, 100 * 1024) < 0) {
        print_message("no tmpfs here (%s): the full disk is not tried\n", strerror(errno));
        skip();
    }
    snprintf(mounted, sizeof mounted, "%s", fs);
    snprintf(mirror, sizeof mirror, "%s/m", fs);
    testsite_stop(&ts); /* a failed test's, if any */
    assert_int_equal(testsite_start_text(&ts, dir, "big", big, NULL), 0);
    crawl_run r;
    char db[600], out[600];
    snprintf(db, sizeof db, "%s/full.db", dir);
    snprintf(out, sizeof out, "%s/full.jsonl", dir);
    char *argv[] = {
        bin("crawl-queue"), "--format", "jsonl",    "-q", "--mirror", mirror, "--per-host", "1",
        "--state",          db,         "--output", out,  ts.url,     NULL};
    assert_int_equal(run_crawler(&r, argv, 60), 0);
    bool one = crawl_run_one_line(&r, 1, "No space left on device");
    if (!one)
        print_error("stderr: %s\n", r.err);
    assert_true(one);
    /* the URL whose file the disk refused (and those after it) not counted done by
     * --state: a --resume fetches them again */
    int done, saved;
    char *missing = done_unsaved(db, mirror, &done, &saved);
    if (missing[0])
        fail_msg("--state counts done URLs the full disk kept from DIR:%s", missing);
    free(missing);
    /* every file written is whole, no temporary file is left */
    listing l = {0};
    list_tree(mirror, "", &l);
    int whole = 0;
    for (size_t i = 0; i < l.n; i++) {
        assert_null(strstr(l.v[i], ".crawlstages-tmp"));
        const char *name = strrchr(l.v[i], '/');
        if (name && strstr(name, ".bin ")) {
            assert_non_null(strstr(l.v[i], " f 30000"));
            whole++;
        }
    }
    assert_true(whole >= 1 && whole < 6);
    listing_free(&l);
    crawl_run_free(&r);
    testsite_stop(&ts);
    smallfs_unmount(fs);
    mounted[0] = '\0';
}

/* ---- a mirror that goes on ---- */

/* The files under root (the manifest aside), each with its bytes, as "name SIZE HASH"
 * lines: two mirrors compared. */
static void fingerprint(const char *root, listing *out)
{
    listing l = {0};
    list_tree(root, "", &l);
    for (size_t i = 0; i < l.n; i++) {
        if (!strstr(l.v[i], " f ") || strncmp(l.v[i], ".crawlstages-mirror", 19) == 0)
            continue;
        char name[4096], path[8192];
        snprintf(name, sizeof name, "%.*s", (int)(strstr(l.v[i], " f ") - l.v[i]), l.v[i]);
        snprintf(path, sizeof path, "%s/%s", root, name);
        size_t len;
        char *data = slurp(path, &len);
        unsigned long long h = 1469598103934665603ULL;
        for (size_t k = 0; k < len; k++)
            h = (h ^ (unsigned char)data[k]) * 1099511628211ULL;
        free(data);
        out->v = xreallocarray(out->v, out->n + 1, sizeof *out->v);
        out->v[out->n++] = xasprintf("%s %zu %016llx", name, len, h);
    }
    listing_free(&l);
}

/* A resume test's files: a mirror made in one go (whole), and the one stopped and
 * resumed (cut) with its --state and --output. */
typedef struct resume_files {
    char whole[512], cut[512], db[512], out[512];
} resume_files;

/* The test's site (--delay delay, --generate spec) started, and the mirror of it made
 * in one go into f->whole, the files named after prefix: how many records it made. */
static size_t mirror_in_one_go(resume_files *f, const char *prefix, const char *delay,
                               const char *spec)
{
    testsite_stop(&ts); /* a failed test's, if any */
    const char *const args[] = {"--delay", delay, "--generate", spec, NULL};
    assert_int_equal(testsite_start(&ts, args), 0);
    snprintf(f->whole, sizeof f->whole, "%s/%swhole", dir, prefix);
    snprintf(f->cut, sizeof f->cut, "%s/%scut", dir, prefix);
    snprintf(f->db, sizeof f->db, "%s/%scut.db", dir, prefix);
    snprintf(f->out, sizeof f->out, "%s/%scut.jsonl", dir, prefix);
    crawl_run r;
    char *one[] = {bin("crawl-queue"), "--format", "jsonl", "--per-host", "2",
                   "--mirror",         f->whole,   ts.url,  NULL};
    assert_int_equal(run_crawler(&r, one, 60), 0);
    assert_int_equal(r.exit_code, 0);
    size_t records = r.nrecords;
    crawl_run_free(&r);
    return records;
}

/* The command line of a run of the mirror f->cut, --resume'd or not. */
enum { RESUME_ARGC = 14 };
static void resume_argv(const resume_files *f, bool resume, char *argv[RESUME_ARGC])
{
    char *v[RESUME_ARGC] = {bin("crawl-queue"),
                            "--format",
                            "jsonl",
                            "--per-host",
                            "2",
                            "--mirror",
                            (char *)f->cut,
                            "--state",
                            (char *)f->db,
                            "--output",
                            (char *)f->out,
                            ts.url,
                            resume ? "--resume" : NULL,
                            NULL};
    memcpy(argv, v, sizeof v);
}

/* The files of the mirror made in one go (a) and of the resumed one: the same, byte
 * for byte, or the first difference, after what (a failure). */
static void assert_same_mirror(const listing *a, const char *cut, const char *what)
{
    listing b = {0};
    fingerprint(cut, &b);
    for (size_t i = 0; i < a->n || i < b.n; i++)
        if (i >= a->n || i >= b.n || strcmp(a->v[i], b.v[i]) != 0)
            fail_msg("%sthe mirrors differ: %s | %s", what, i < a->n ? a->v[i] : "-",
                     i < b.n ? b.v[i] : "-");
    listing_free(&b);
}

/* A mirror stopped by SIGINT (its close converts what it saved) and resumed with
 * --state: the same files, byte for byte, as a mirror made in one go; the second
 * conversion reads the first one's links (relative, to saved files) as they are. */
static void test_resume(void **state)
{
    (void)state;
    resume_files fs;
    size_t pages = mirror_in_one_go(&fs, "", "40", "pages=60,links=4,size=600,seed=5");
    char *whole = fs.whole, *cut = fs.cut, *db = fs.db, *out = fs.out;
    crawl_run r;
    char *first[] = {
        bin("crawl-queue"), "--format", "jsonl",    "--per-host", "2",    "--mirror", cut,
        "--state",          db,         "--output", out,          ts.url, NULL};
    /* interrupted a quarter of the way, by records in --output: a moment comes, under
     * load, before the first page or after the last */
    signal_at at = {.path = out, .lines = (long long)pages / 4, .sig = SIGINT};
    assert_int_equal(run_crawler_signal_at(&r, first, 60, &at), 0);
    if (r.exit_code != 0 || !at.sent || at.late)
        fail_msg("%s: %s", signal_at_describe(&at), crawl_run_describe(&r));
    crawl_run_free(&r);
    listing part = {0};
    fingerprint(cut, &part);
    assert_true(part.n > 0 && part.n < pages); /* stopped mid-crawl */
    listing_free(&part);
    /* hard links of the user's to the files so far: each keeps the bytes it had, also
     * where the resumed run rewrites the file (the rewrite's spare, the old file, has
     * another link: it is not reused) */
    listing kept = {0};
    fingerprint(cut, &kept);
    for (size_t i = 0; i < kept.n; i++) {
        char from[8192], to[600];
        snprintf(from, sizeof from, "%s/%.*s", cut, (int)(strchr(kept.v[i], ' ') - kept.v[i]),
                 kept.v[i]);
        snprintf(to, sizeof to, "%s/kept.%zu", dir, i);
        assert_int_equal(link(from, to), 0);
    }
    char *again[] = {
        bin("crawl-queue"), "--format", "jsonl",    "--per-host", "2",        "--mirror", cut,
        "--state",          db,         "--output", out,          "--resume", ts.url,     NULL};
    assert_int_equal(run_crawler(&r, again, 60), 0);
    if (r.exit_code != 0)
        fail_msg("resume: exit %d: %s", r.exit_code, r.err);
    crawl_run_free(&r);
    listing now = {0};
    fingerprint(cut, &now);
    size_t rewritten = 0;
    for (size_t i = 0; i < kept.n; i++) {
        char to[600];
        snprintf(to, sizeof to, "%s/kept.%zu", dir, i);
        size_t len;
        char *data = slurp(to, &len);
        unsigned long long h = 1469598103934665603ULL;
        for (size_t k = 0; k < len; k++)
            h = (h ^ (unsigned char)data[k]) * 1099511628211ULL;
        free(data);
        char *line = xasprintf("%.*s %zu %016llx", (int)(strchr(kept.v[i], ' ') - kept.v[i]),
                               kept.v[i], len, h);
        if (strcmp(line, kept.v[i]) != 0)
            fail_msg("a hard link to a mirror's file was written through: %s, was %s", line,
                     kept.v[i]);
        free(line);
        bool same = false;
        for (size_t j = 0; j < now.n && !same; j++)
            same = strcmp(now.v[j], kept.v[i]) == 0;
        rewritten += !same;
        unlink(to);
    }
    print_message("%zu of %zu files rewritten by the resumed run\n", rewritten, kept.n);
    assert_true(rewritten > 0); /* the resumed run rewrote some of them */
    listing_free(&kept), listing_free(&now);
    listing a = {0};
    fingerprint(whole, &a);
    assert_true(a.n > 10);
    assert_same_mirror(&a, cut, "");
    listing_free(&a);
    testsite_stop(&ts);
}

/* kill -9 at seeded moments, --resume after each, then a run to the end: the same
 * files, byte for byte, as a mirror made in one go. Half the kills land at the Nth
 * rename of a file into place (kill_at_rename.c, preloaded), right after it or just
 * before it — between a file and its manifest line, a converted file and its "k" line,
 * or with a temporary file left — the other half at a seeded time. A resumed mirror
 * must know every file in DIR as its own, and no temporary may stay. */
#define KILLS 16

static void kill_9(pid_t pid, void *ctx)
{
    (void)ctx;
    kill(pid, SIGKILL);
}

static void test_kill_resume(void **state)
{
    (void)state;
    resume_files fs;
    mirror_in_one_go(&fs, "k-", "20", "pages=60,links=4,size=600,seed=7");
    char *whole = fs.whole, *cut = fs.cut;
    crawl_run r;
    listing a = {0};
    fingerprint(whole, &a);
    assert_true(a.n > 40);
    srand(36); /* the number: the same moments each time */
    int at_rename = 0, at_time = 0;
    for (int i = 0; i <= KILLS; i++) {
        bool last = i == KILLS;
        char *argv[RESUME_ARGC];
        resume_argv(&fs, i > 0, argv);
        char n[32];
        int rc;
        if (!last && i % 2 == 0) {
            /* the first run's renames cover the range; a resumed one has fewer left */
            /* at most 20 renames in: while the crawl goes on, a saved file; once it is
             * over, a conversion (each run converts what is left to convert) */
            snprintf(n, sizeof n, "%s%d", i % 4 ? "b" : "", 1 + rand() % 20);
            setenv("LD_PRELOAD", KILL_AT_RENAME_LIB, 1);
            setenv("ASAN_OPTIONS", "verify_asan_link_order=0", 1);
            setenv("KILL_AT_RENAME", n, 1);
            rc = run_crawler(&r, argv, 60);
            unsetenv("LD_PRELOAD");
            unsetenv("KILL_AT_RENAME");
            at_rename += r.term_signal == SIGKILL;
        } else if (!last) {
            double at = 0.05 + (double)(rand() % 250) / 1000;
            rc = run_crawler_at(&r, argv, 60, at, kill_9, NULL);
            at_time += r.term_signal == SIGKILL;
        } else {
            rc = run_crawler(&r, argv, 60);
        }
        assert_int_equal(rc, 0);
        if (r.term_signal != SIGKILL && r.exit_code != 0)
            fail_msg("run %d: %s", i, crawl_run_describe(&r));
        if (strstr(r.err, "not replaced") || strstr(r.err, "not converted"))
            fail_msg("run %d refused a file of its own: %s", i, r.err);
        crawl_run_free(&r);
    }
    print_message("%d kills after a rename, %d at a time, of %d runs\n", at_rename, at_time, KILLS);
    assert_true(at_rename >= KILLS / 4 && at_time >= KILLS / 8);
    assert_same_mirror(&a, cut, "");
    listing_free(&a);
    testsite_stop(&ts);
}

/* A --state writer that falls behind (each commit 300 ms late: kill_at_sqlite.c's
 * KILL_SLOW_STATE, preloaded), killed right after its Nth commit: the records that
 * waited for its room (writer.h) while the batches ahead of theirs committed are URLs
 * it counts done. Each of them must have its file in DIR at that moment (with the
 * mirror after the state, as it was, a resumed run never wrote them: a link to such a
 * page stayed absolute), and the resumed mirror is the one made in one go. */
static void test_state_behind_kill(void **state)
{
    (void)state;
    resume_files fs;
    mirror_in_one_go(&fs, "s-", "20", "pages=150,links=4,size=600,seed=9");
    crawl_run r;
    static const char *const at[] = {"4", "3", "5", "4"}; /* commits: each run goes on */
    int behind = 0;
    for (size_t i = 0; i <= sizeof at / sizeof at[0]; i++) {
        bool last = i == sizeof at / sizeof at[0];
        char *argv[RESUME_ARGC];
        resume_argv(&fs, i > 0, argv);
        if (!last) {
            setenv("LD_PRELOAD", KILL_AT_SQLITE_LIB, 1);
            setenv("ASAN_OPTIONS", "verify_asan_link_order=0", 1);
            setenv("KILL_STATE_DB", "/s-cut.db", 1);
            setenv("KILL_SLOW_STATE", at[i], 1);
        }
        assert_int_equal(run_crawler(&r, argv, 60), 0);
        unsetenv("LD_PRELOAD");
        unsetenv("KILL_SLOW_STATE");
        unsetenv("KILL_STATE_DB");
        if (!last && r.term_signal != SIGKILL)
            fail_msg("run %zu was not killed at the state's commit %s: %s", i, at[i],
                     crawl_run_describe(&r));
        if (last && r.exit_code != 0)
            fail_msg("the last run: %s", crawl_run_describe(&r));
        crawl_run_free(&r);
        if (last)
            break;
        /* records written that the state had not committed: they waited behind it */
        size_t len;
        char *text = slurp(fs.out, &len);
        int lines = 0, done, saved;
        for (size_t k = 0; k < len; k++)
            lines += text[k] == '\n';
        free(text);
        char *missing = done_unsaved(fs.db, fs.cut, &done, &saved);
        print_message("kill %zu: %d records, %d done, %d with their file\n", i, lines, done, saved);
        behind += lines > done;
        if (missing[0])
            fail_msg("kill %zu: --state counts done URLs that have no file in DIR:%s", i, missing);
        free(missing);
    }
    assert_true(behind > 0); /* the state was behind the records at a kill at least */
    listing a = {0};
    fingerprint(fs.whole, &a);
    assert_true(a.n > 100);
    assert_same_mirror(&a, fs.cut, "");
    listing_free(&a);
    testsite_stop(&ts);
}

/* ---- names that differ only in case, names Windows reserves ---- */

/* The two orders of a site whose pages differ only in case, and a reserved name. */
static const char *const case_sites[] = {"page /\n"
                                         "  link /A.html /a.html /con.html\n"
                                         "page /A.html body=upper\n"
                                         "page /a.html body=lower\n"
                                         "page /con.html body=device\n",
                                         "page /\n"
                                         "  link /a.html /A.html /con.html\n"
                                         "page /a.html body=lower\n"
                                         "page /A.html body=upper\n"
                                         "page /con.html body=device\n"};

/* /A.html and /a.html are two files whatever the order they are fetched in (one at
 * a "~HASH" name, the same in both orders: when /A.html comes first, it is moved
 * aside as /a.html arrives), /con.html is "%63on.html", and the home page links
 * to each. */
static void test_case_names(void **state)
{
    (void)state;
    char names[2][2][512];
    for (int order = 0; order < 2; order++) {
        testsite_stop(&ts); /* a failed test's, if any */
        char sitename[32], mirror[512], host[64], path[1024];
        snprintf(sitename, sizeof sitename, "case%d", order);
        assert_int_equal(testsite_start_text(&ts, dir, sitename, case_sites[order], NULL), 0);
        snprintf(mirror, sizeof mirror, "%s/case%d", dir, order);
        snprintf(host, sizeof host, "127.0.0.1:%d", testsite_port(&ts));
        crawl_run r;
        char *argv[] = {bin("crawl-queue"), "--format", "jsonl", "--per-host", "1",
                        "--mirror",         mirror,     "-v",    ts.url,       NULL};
        assert_int_equal(run_crawler(&r, argv, 60), 0);
        if (r.exit_code != 0)
            fail_msg("exit %d: %s", r.exit_code, r.err);
        if (order == 0) /* /A.html first: moved aside when /a.html came */
            assert_non_null(strstr(r.err, "differs only in case"));
        listing l = {0};
        snprintf(path, sizeof path, "%s/%s", mirror, host);
        list_tree(path, "", &l);
        /* index.html, a.html, A~HASH.html, %63on.html */
        assert_int_equal(l.n, 4);
        const char *aside = NULL;
        for (size_t i = 0; i < l.n; i++)
            if (strncmp(l.v[i], "A~", 2) == 0)
                aside = l.v[i];
        if (!aside)
            fail_msg("no A~HASH.html in %s", path);
        assert_int_equal(strcspn(aside, " "), strlen("A~12345678.html"));
        assert_memory_equal(aside + strlen("A~12345678"), ".html ", 6);
        assert_true(listed(&l, "a.html"));
        assert_true(listed(&l, "%63on.html"));
        snprintf(names[order][0], sizeof names[order][0], "%.*s", (int)strcspn(aside, " "), aside);
        size_t len;
        char file[2048];
        snprintf(file, sizeof file, "%s/%s", path, names[order][0]);
        char *body = slurp(file, &len);
        assert_string_equal(body, "upper");
        free(body);
        snprintf(file, sizeof file, "%s/a.html", path);
        body = slurp(file, &len);
        assert_string_equal(body, "lower");
        free(body);
        snprintf(file, sizeof file, "%s/%%63on.html", path);
        body = slurp(file, &len);
        assert_string_equal(body, "device");
        free(body);
        /* the home page links to each of the three files */
        snprintf(file, sizeof file, "%s/index.html", path);
        body = slurp(file, &len);
        char want[600];
        snprintf(want, sizeof want, "href=\"%s\"", names[order][0]);
        if (!strstr(body, want) || !strstr(body, "href=\"a.html\"")
            || !strstr(body, "href=\"%2563on.html\""))
            fail_msg("links not converted to each file: %s", body);
        free(body);
        const char *const none[] = {NULL};
        check c = {.server = ts.url, .allowed_remote = none};
        listing all = {0};
        list_tree(mirror, "", &all);
        check_links(mirror, &all, &c);
        for (int i = 0; i < c.nbad; i++)
            print_error("bad link: %s\n", c.bad[i]);
        assert_int_equal(c.nbad, 0);
        assert_int_equal(c.local, 3); /* three links (no requisite among them) */
        listing_free(&all), listing_free(&l);
        crawl_run_free(&r);
        testsite_stop(&ts);
    }
    /* the same name, whichever came first */
    assert_string_equal(names[0][0], names[1][0]);
}

/* kill -9 just before and just after /A.html's rename aside (test_case_names' first
 * order), then --resume: the same files, byte for byte, as in one go. The "m" line goes
 * before the rename: after it (the old order) a kill leaves A~HASH.html unknown to the
 * manifest, and the resumed run cannot move A.html there; and a resumed run does a
 * rename whose line is there and whose file is not (without that, A.html stays). */
static void test_case_kill(void **state)
{
    (void)state;
    testsite_stop(&ts); /* a failed test's, if any */
    assert_int_equal(testsite_start_text(&ts, dir, "casek", case_sites[0], NULL), 0);
    char whole[512];
    snprintf(whole, sizeof whole, "%s/casek-whole", dir);
    crawl_run r;
    char *one[] = {bin("crawl-queue"), "--format", "jsonl", "--per-host", "1",
                   "--mirror",         whole,      ts.url,  NULL};
    assert_int_equal(run_crawler(&r, one, 60), 0);
    assert_int_equal(r.exit_code, 0);
    crawl_run_free(&r);
    listing a = {0};
    fingerprint(whole, &a);
    assert_int_equal(a.n, 4);
    static const char *const at[] = {"bm1", "m1"}; /* before the rename, after it */
    for (int k = 0; k < 2; k++) {
        char cut[512], db[512], out[512];
        snprintf(cut, sizeof cut, "%s/casek-%s", dir, at[k]);
        snprintf(db, sizeof db, "%s/casek-%s.db", dir, at[k]);
        snprintf(out, sizeof out, "%s/casek-%s.jsonl", dir, at[k]);
        for (int i = 0; i < 2; i++) {
            char *argv[] = {bin("crawl-queue"),
                            "--format",
                            "jsonl",
                            "--per-host",
                            "1",
                            "--mirror",
                            cut,
                            "--state",
                            db,
                            "--output",
                            out,
                            ts.url,
                            i ? "--resume" : NULL,
                            NULL};
            if (i == 0) {
                setenv("LD_PRELOAD", KILL_AT_RENAME_LIB, 1);
                setenv("ASAN_OPTIONS", "verify_asan_link_order=0", 1);
                setenv("KILL_AT_RENAME", at[k], 1);
            }
            assert_int_equal(run_crawler(&r, argv, 60), 0);
            unsetenv("LD_PRELOAD");
            unsetenv("KILL_AT_RENAME");
            if (i == 0 && r.term_signal != SIGKILL)
                fail_msg("not killed at %s: %s %s", at[k], crawl_run_describe(&r), r.err);
            if (i == 1 && r.exit_code != 0)
                fail_msg("resumed after %s: %s", at[k], crawl_run_describe(&r));
            if (strstr(r.err, "not replaced") || strstr(r.err, "not moved aside"))
                fail_msg("run %d after %s refused a file of its own: %s", i, at[k], r.err);
            crawl_run_free(&r);
        }
        char what[64];
        snprintf(what, sizeof what, "killed at %s, ", at[k]);
        assert_same_mirror(&a, cut, what);
    }
    listing_free(&a);
    testsite_stop(&ts);
}

/* ---- a mirror updated by a recrawl ---- */

/* Version 1 or 2 of a site with validators (ETag, Last-Modified): in version 2, /b.html
 * and /c.html change (/b.html now links to /a.html and to /new.html, a new page),
 * /gone.html is deleted. */
static void write_update_site(const char *path, int version)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("page /\n  link /a.html /b.html /c.html /gone.html /s.css\n"
          "  header ETag: \"root-1\"\n"
          "  header Last-Modified: Thu, 01 Jan 2026 10:00:00 GMT\n"
          "page /a.html\n  link /b.html\n"
          "  header ETag: \"a-1\"\n"
          "  header Last-Modified: Thu, 01 Jan 2026 10:00:00 GMT\n"
          "page /s.css type=text/css body=\"p { color: red }\"\n"
          "  header ETag: \"s-1\"\n"
          "  header Last-Modified: Thu, 01 Jan 2026 10:00:00 GMT\n",
          f);
    if (version == 1)
        fputs("page /b.html body=\"<p>b, revision 1</p>\"\n"
              "  header ETag: \"b-1\"\n"
              "  header Last-Modified: Thu, 01 Jan 2026 10:00:00 GMT\n"
              "page /gone.html body=\"<p>gone</p>\"\n"
              "  header ETag: \"gone-1\"\n"
              "  header Last-Modified: Thu, 01 Jan 2026 10:00:00 GMT\n",
              f);
    else
        fputs("page /b.html\n  link /a.html /new.html\n"
              "  header ETag: \"b-2\"\n"
              "  header Last-Modified: Fri, 02 Jan 2026 10:00:00 GMT\n"
              "page /new.html body=\"<p>new</p>\"\n",
              f);
    fprintf(f,
            "page /c.html body=\"<p>c, revision %d</p>\"\n"
            "  header ETag: \"c-%d\"\n"
            "  header Last-Modified: %s Jan 2026 10:00:00 GMT\n",
            version, version, version == 1 ? "Thu, 01" : "Fri, 02");
    assert_int_equal(fclose(f), 0);
}

typedef struct filestat {
    const char *name;
    struct stat st;
} filestat;

static bool same_file(const struct stat *a, const struct stat *b)
{
    return a->st_ino == b->st_ino && a->st_mtim.tv_sec == b->st_mtim.tv_sec
        && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec && a->st_size == b->st_size;
}

static char *read_in(const char *hostdir, const char *name)
{
    char path[1024];
    size_t len;
    snprintf(path, sizeof path, "%s/%s", hostdir, name);
    char *body = slurp(path, &len);
    if (!body)
        fail_msg("%s: not in the mirror", path);
    return body;
}

/* --recrawl OLD.db --store NEW.db --mirror DIR updates the mirror: the changed pages
 * written again and converted, a new page added, the unchanged files (304s) not
 * written at all (inode and mtime as they were), a deleted page's file kept (as wget
 * -m keeps it), the manifest saying so. */
static void test_recrawl_update(void **state)
{
    (void)state;
    testsite_stop(&ts); /* a failed test's, if any */
    char site[512], mirror[512], old_db[512], new_db[512], hostdir[600], portarg[16];
    snprintf(site, sizeof site, "%s/update.site", dir);
    snprintf(mirror, sizeof mirror, "%s/update", dir);
    snprintf(old_db, sizeof old_db, "%s/update-old.db", dir);
    snprintf(new_db, sizeof new_db, "%s/update-new.db", dir);
    int port = testsite_free_port();
    assert_true(port > 0);
    snprintf(portarg, sizeof portarg, "%d", port);
    snprintf(hostdir, sizeof hostdir, "%s/127.0.0.1:%d", mirror, port);
    write_update_site(site, 1);
    const char *const args[] = {"--port", portarg, site, NULL};
    assert_int_equal(testsite_start(&ts, args), 0);
    crawl_run r;
    char *first[] = {bin("crawl-queue"), "--format", "jsonl", "--mirror", mirror,
                     "--store",          old_db,     ts.url,  NULL};
    assert_int_equal(run_crawler(&r, first, 60), 0);
    if (r.exit_code != 0)
        fail_msg("exit %d: %s", r.exit_code, r.err);
    crawl_run_free(&r);
    testsite_stop(&ts);
    static const char *const names[] = {"index.html", "a.html", "s.css",
                                        "b.html",     "c.html", "gone.html"};
    enum { NNAMES = sizeof names / sizeof names[0], NKEPT = 3 };
    struct stat before[NNAMES];
    for (size_t i = 0; i < NNAMES; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", hostdir, names[i]);
        if (stat(path, &before[i]) != 0)
            fail_msg("%s: not in the first mirror", path);
    }
    char *b1 = read_in(hostdir, "b.html");
    assert_non_null(strstr(b1, "revision 1"));
    free(b1);
    usleep(20 * 1000); /* a file written again has a later mtime, even on a coarse clock */

    write_update_site(site, 2);
    assert_int_equal(testsite_start(&ts, args), 0);
    char *update[] = {
        bin("crawl-queue"), "--format", "jsonl", "--recrawl", old_db, "--store", new_db,
        "--mirror",         mirror,     "-v",    ts.url,      NULL};
    assert_int_equal(run_crawler(&r, update, 60), 0);
    if (r.exit_code != 0)
        fail_msg("recrawl: exit %d: %s", r.exit_code, r.err);
    /* the unchanged: 304s, not written */
    for (size_t i = 0; i < NKEPT; i++) {
        char path[1024];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", hostdir, names[i]);
        assert_int_equal(stat(path, &st), 0);
        if (!same_file(&before[i], &st))
            fail_msg("%s was written again, unchanged (inode %llu -> %llu)", names[i],
                     (unsigned long long)before[i].st_ino, (unsigned long long)st.st_ino);
        char url[512];
        snprintf(url, sizeof url, "%s%s", ts.url, strcmp(names[i], "index.html") ? names[i] : "");
        const jobj *rec = crawl_run_find(&r, url);
        assert_non_null(rec);
        assert_int_equal(jobj_int(rec, "status", 0), 304);
    }
    /* the changed: written again, with their new bodies, links converted */
    for (size_t i = NKEPT; i < NKEPT + 2; i++) {
        char path[1024];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", hostdir, names[i]);
        assert_int_equal(stat(path, &st), 0);
        if (same_file(&before[i], &st))
            fail_msg("%s changed on the server, not in the mirror", names[i]);
    }
    char *b2 = read_in(hostdir, "b.html");
    if (!strstr(b2, "href=\"a.html\"") || !strstr(b2, "href=\"new.html\""))
        fail_msg("b.html's links not converted: %s", b2);
    free(b2);
    char *c2 = read_in(hostdir, "c.html");
    assert_non_null(strstr(c2, "revision 2"));
    free(c2);
    char *added = read_in(hostdir, "new.html");
    assert_string_equal(added, "<p>new</p>");
    free(added);
    /* the deleted page: a 404 now, its file kept, and still linked */
    char gone_url[512];
    snprintf(gone_url, sizeof gone_url, "%sgone.html", ts.url);
    const jobj *gone = crawl_run_find(&r, gone_url);
    assert_non_null(gone);
    assert_int_equal(jobj_int(gone, "status", 0), 404);
    char *g = read_in(hostdir, "gone.html");
    assert_string_equal(g, "<p>gone</p>");
    free(g);
    char *home = read_in(hostdir, "index.html");
    assert_non_null(strstr(home, "href=\"gone.html\""));
    free(home);
    /* every link of the updated mirror resolves */
    listing all = {0};
    list_tree(mirror, "", &all);
    const char *const none[] = {NULL};
    check c = {.server = ts.url, .allowed_remote = none};
    check_links(mirror, &all, &c);
    for (int i = 0; i < c.nbad; i++)
        print_error("bad link: %s\n", c.bad[i]);
    assert_int_equal(c.nbad, 0);
    char sum[1024];
    snprintf(sum, sizeof sum, "mirror in '%s': 7 files,", mirror);
    if (!strstr(r.err, sum))
        fail_msg("no '%s' in: %s", sum, r.err);
    listing_free(&all);
    crawl_run_free(&r);
    testsite_stop(&ts);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_site),           cmocka_unit_test(test_hostile),
        cmocka_unit_test(test_disk_full),      cmocka_unit_test(test_resume),
        cmocka_unit_test(test_kill_resume),    cmocka_unit_test(test_state_behind_kill),
        cmocka_unit_test(test_case_names),     cmocka_unit_test(test_case_kill),
        cmocka_unit_test(test_recrawl_update),
    };
    return cmocka_run_group_tests(tests, scratch_setup, teardown);
}
