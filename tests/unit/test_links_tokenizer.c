/* test_links_tokenizer.c — the link parser's two HTML paths side by side: the tokenizer
 * (common/web/html_tokenizer.c) must give the links libxml2's SAX parser gives, in the
 * same order, on the fuzz corpora and regressions of fuzz_links, the tricky markup of
 * tests/fuzz/corpus/tokenizer/, the pages of the scenario sites (tests/sites/, each .site),
 * their files and, when installed, Debian's python3-doc (/usr/share/doc/python3-doc/html)
 * — except for the inputs tests/fuzz/tokenizer_differences.txt lists, each
 * with why (where the standard and libxml2 disagree, the tokenizer follows the
 * standard). A listed input that no longer differs fails too. Then the tokenizer's
 * start tags and attributes against html5lib's (Debian's python3-html5lib, under
 * /usr/bin/python3; skipped without it) on the tricky markup, and its own cases.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc.h"
#include "html_tokenizer.h"
#include "links.h"
#include "links_charset.h"
#include "fuzz_common.h"
#include "links_mode.h"
#include "site.h"

#define PAGE     "http://example.com/dir/page.html"
#define FUZZ_DIR SITES_DIR "/../fuzz"
#define PYTHON   "/usr/bin/python3"

/* ---- text ------------------------------------------------------------------- */

typedef struct text {
    char *s;
    size_t len, cap;
} text;

static void text_add(text *t, const char *s, size_t n)
{
    xappend(&t->s, &t->len, &t->cap, s, n);
    xappend(&t->s, &t->len, &t->cap, "", 1);
    t->len--;
}

static void text_adds(text *t, const char *s)
{
    text_add(t, s, strlen(s));
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    text t = {0};
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        text_add(&t, buf, n);
    fclose(f);
    *len = t.len;
    return t.s ? t.s : xstrdup("");
}

/* ---- both paths ------------------------------------------------------------------ */

static void collect(void *ctx, const char *url)
{
    text_adds(ctx, url);
    text_adds(ctx, "\n");
}

/* The links (or requisites) the given path finds, in order, each with a '\n'; the
 * body fed in pieces of `piece` bytes (0: whole). */
static char *links_of(links_engine engine, const char *body, size_t len, const char *page,
                      const char *charset, bool requisites, size_t piece)
{
    text t = {0};
    links_parser *lp = links_new_engine(page, charset, requisites, engine, collect, &t);
    for (size_t off = 0; off < len || off == 0;) {
        size_t n = piece && len - off > piece ? piece : len - off;
        links_feed(lp, body + off, n);
        off += n;
        if (n == 0)
            break;
    }
    links_finish(lp);
    links_free(lp);
    return t.s ? t.s : xstrdup("");
}

/* ---- the list of differences ------------------------------------------------------- */

typedef struct listed {
    char **names; /* "tests/..." paths, or for a site's page "tests/sites/X.site /path" */
    bool *seen;
    size_t n;
} listed;

/* tokenizer_differences.txt: "KIND NAME: why" lines, KIND links or html5lib; '#' and
 * blank lines are comments. */
static listed load_listed(const char *kind)
{
    listed l = {0};
    size_t len;
    char *all = read_file(FUZZ_DIR "/tokenizer_differences.txt", &len);
    assert_non_null(all);
    size_t klen = strlen(kind);
    for (char *line = strtok(all, "\n"); line; line = strtok(NULL, "\n")) {
        if (strncmp(line, kind, klen) != 0 || line[klen] != ' ')
            continue;
        char *name = line + klen + 1;
        char *colon = strstr(name, ": ");
        assert_non_null(colon); /* every difference says why */
        l.names = xrealloc(l.names, (l.n + 1) * sizeof *l.names);
        l.seen = xrealloc(l.seen, (l.n + 1) * sizeof *l.seen);
        l.names[l.n] = xstrndup(name, (size_t)(colon - name));
        l.seen[l.n++] = false;
    }
    free(all);
    return l;
}

static bool is_listed(listed *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->names[i], name) == 0) {
            l->seen[i] = true;
            return true;
        }
    return false;
}

static void listed_free(listed *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->names[i]);
    free(l->names);
    free(l->seen);
}

/* ---- inputs ---------------------------------------------------------------------- */

/* The regular files of dir, sorted. */
static char **files_of(const char *dir, size_t *n)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    char **names = NULL;
    *n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        names = xrealloc(names, (*n + 1) * sizeof *names);
        names[(*n)++] = xasprintf("%s/%s", dir, e->d_name);
    }
    closedir(d);
    for (size_t i = 1; i < *n; i++)
        for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char *tmp = names[j];
            names[j] = names[j - 1];
            names[j - 1] = tmp;
        }
    return names;
}

static void free_names(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

/* The repository path of a file under FUZZ_DIR or SITES_DIR, for the list. */
static const char *repo_path(const char *path, char *buf, size_t size)
{
    const char *fuzz = strstr(path, "/../fuzz/");
    if (fuzz)
        snprintf(buf, size, "tests/fuzz/%s", fuzz + strlen("/../fuzz/"));
    else
        snprintf(buf, size, "tests/sites/%s", path + strlen(SITES_DIR) + 1);
    return buf;
}

typedef struct tally {
    size_t inputs, same, differ, links;
    text report; /* the unlisted differences */
} tally;

/* One input, both paths; the tokenizer's whole and (when split) in pieces of 7 bytes. */
static void compare_split(tally *t, listed *l, const char *name, const char *body, size_t len,
                          const char *page, const char *charset, bool requisites, bool split)
{
    char *want = links_of(LINKS_LIBXML2, body, len, page, charset, requisites, 0);
    char *got = links_of(LINKS_TOKENIZER, body, len, page, charset, requisites, 0);
    if (split && len <= 256 * 1024) { /* the links do not depend on the pieces (bigger: slow) */
        char *pieces = links_of(LINKS_TOKENIZER, body, len, page, charset, requisites, 7);
        assert_string_equal(got, pieces);
        free(pieces);
    }
    t->inputs++;
    for (const char *p = got; *p; p++)
        t->links += *p == '\n';
    bool same = strcmp(want, got) == 0;
    if (same)
        t->same++;
    else
        t->differ++;
    bool on_list = is_listed(l, name);
    if (!same && !on_list) {
        char *msg = xasprintf("%s%s: libxml2 gives\n%s-- the tokenizer\n%s--\n",
                              requisites ? "(requisites) " : "", name, want, got);
        text_adds(&t->report, msg);
        free(msg);
    }
    free(want);
    free(got);
}

static void compare(tally *t, listed *l, const char *name, const char *body, size_t len,
                    const char *page, const char *charset, bool requisites)
{
    compare_split(t, l, name, body, len, page, charset, requisites, true);
}

/* fuzz_links's inputs: a mode byte, a chunk spec (fuzz_common.h), the body. */
static void compare_fuzz_input(tally *t, listed *l, const char *name, const char *data, size_t len)
{
    if (len < 1)
        return;
    links_mode m = links_mode_of((uint8_t)data[0]);
    if (m.xml)
        return; /* XML: libxml2 either way */
    const uint8_t *body = (const uint8_t *)data + 1;
    size_t n = len - 1;
    chunker_take(&body, &n);
    compare(t, l, name, (const char *)body, n, m.page, m.charset, m.requisites);
}

static void compare_dir(tally *t, listed *l, const char *dir, bool fuzz_format)
{
    size_t n;
    char **files = files_of(dir, &n);
    for (size_t i = 0; i < n; i++) {
        size_t len;
        char *data = read_file(files[i], &len);
        assert_non_null(data);
        char name[512];
        repo_path(files[i], name, sizeof name);
        if (fuzz_format) {
            compare_fuzz_input(t, l, name, data, len);
        } else {
            compare(t, l, name, data, len, PAGE, NULL, false);
            compare(t, l, name, data, len, PAGE, NULL, true);
        }
        free(data);
    }
    free_names(files, n);
}

/* The HTML pages of each scenario site, rendered for a server at 127.0.0.1:8000. */
static void compare_sites(tally *t, listed *l)
{
    size_t n;
    char **files = files_of(SITES_DIR, &n);
    for (size_t i = 0; i < n; i++) {
        size_t fl = strlen(files[i]);
        if (fl < 5 || strcmp(files[i] + fl - 5, ".site") != 0)
            continue;
        char err[512];
        site *s = site_load(files[i], err, sizeof err);
        if (!s)
            fail_msg("%s", err);
        site_finish(s, "http://127.0.0.1:8000");
        for (size_t k = 0; k < s->npages; k++) {
            site_page *p = s->pages[k];
            if (p->kind != BODY_HTML && p->kind != BODY_TEXT)
                continue;
            if (p->type && (!links_wanted(p->type) || strcmp(p->type, "application/xml") == 0))
                continue;
            char rel[512], name[1024], url[1024];
            snprintf(name, sizeof name, "%s %s", repo_path(files[i], rel, sizeof rel), p->path);
            snprintf(url, sizeof url, "http://127.0.0.1:8000%s", p->path);
            compare(t, l, name, p->body, p->body_len, url, p->charset, false);
            compare(t, l, name, p->body, p->body_len, url, p->charset, true);
        }
        site_free(s);
    }
    free_names(files, n);
}

/* Debian's python3-doc, when installed: the pages of a real site (533 of them). */
#define PYDOC "/usr/share/doc/python3-doc/html"
static tally *pydoc_tally;
static listed *pydoc_listed;
static size_t pydoc_root; /* the length of its real path */

static int pydoc_page(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    size_t n = strlen(path);
    if (type != FTW_F || n < 5 || strcmp(path + n - 5, ".html") != 0)
        return 0;
    size_t len;
    char *body = read_file(path, &len);
    if (!body)
        return 0;
    char *url = xasprintf("http://127.0.0.1:8000%s", path + pydoc_root);
    char *name = xasprintf(PYDOC "%s", path + pydoc_root);
    compare_split(pydoc_tally, pydoc_listed, name, body, len, url, NULL, false, false);
    compare_split(pydoc_tally, pydoc_listed, name, body, len, url, NULL, true, false);
    free(name);
    free(url);
    free(body);
    return 0;
}

static void compare_pydoc(tally *t, listed *l)
{
    if (access(PYDOC "/index.html", R_OK) != 0) {
        print_message("no " PYDOC " (Debian's python3-doc): its pages are not compared\n");
        return;
    }
    pydoc_tally = t;
    pydoc_listed = l;
    size_t before = t->inputs;
    char *root = realpath(PYDOC, NULL); /* a symbolic link (to python3.X-doc's) */
    assert_non_null(root);
    pydoc_root = strlen(root);
    nftw(root, pydoc_page, 16, FTW_PHYS);
    free(root);
    print_message("%zu inputs from " PYDOC "\n", t->inputs - before);
}

static void test_differential(void **state)
{
    (void)state;
    listed l = load_listed("links");
    tally t = {0};
    compare_dir(&t, &l, FUZZ_DIR "/corpus/links", true);
    compare_dir(&t, &l, FUZZ_DIR "/regressions/links", true);
    compare_dir(&t, &l, FUZZ_DIR "/corpus/tokenizer", false);
    compare_dir(&t, &l, SITES_DIR "/files", false);
    compare_sites(&t, &l);
    compare_pydoc(&t, &l);
    print_message("%zu inputs, %zu with the same links, %zu listed differences, %zu links\n",
                  t.inputs, t.same, t.differ, t.links);
    for (size_t i = 0; i < l.n; i++)
        if (!l.seen[i]) {
            char *msg = xasprintf("%s: listed, but both paths give the same links\n", l.names[i]);
            text_adds(&t.report, msg);
            free(msg);
        }
    if (t.report.len > 0) {
        fputs(t.report.s, stdout);
        fail_msg("differences not in tokenizer_differences.txt (above)");
    }
    assert_true(t.inputs > 100 && t.links > 500); /* the inputs were there */
    listed_free(&l);
}

/* ---- against html5lib ----------------------------------------------------------- */

static void escape_into(text *t, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p < 0x20 || *p == 0x7f || *p == '"' || *p == '\\') {
            char hex[8];
            snprintf(hex, sizeof hex, "\\x%02x", *p);
            text_adds(t, hex);
        } else {
            text_add(t, (const char *)p, 1);
        }
    }
}

static void dump_start(void *ctx, const char *name, const char *const *atts, bool self_closing)
{
    (void)self_closing;
    text *t = ctx;
    escape_into(t, name);
    for (size_t i = 0; atts[i]; i += 2) {
        text_adds(t, " ");
        escape_into(t, atts[i]);
        text_adds(t, "=\"");
        escape_into(t, atts[i + 1]);
        text_adds(t, "\"");
    }
    text_adds(t, "\n");
}

static void feed_tokenizer(void *ctx, const char *utf8, size_t len)
{
    html_tokenizer_feed(ctx, utf8, len);
}

/* The start tags the tokenizer gives for a body, in html5lib_tokens.py's format. */
static char *tokens_of(const char *body, size_t len)
{
    text t = {0};
    static const html_tokenizer_ops ops = {dump_start, NULL, NULL};
    html_tokenizer *tok = html_tokenizer_new(&ops, &t, 1 << 16, (size_t)1 << 27);
    charset_decoder dec;
    charset_decoder_init(&dec, NULL, feed_tokenizer, tok);
    charset_decoder_feed(&dec, body, len);
    charset_decoder_finish(&dec);
    charset_decoder_free(&dec);
    html_tokenizer_finish(tok);
    html_tokenizer_free(tok);
    return t.s ? t.s : xstrdup("");
}

/* html5lib_tokens.py's output for the files (one python run), or NULL when it cannot run. */
static char *html5lib_tokens(char **files, size_t n)
{
    text cmd = {0};
    text_adds(&cmd, PYTHON " " FUZZ_DIR "/html5lib_tokens.py");
    for (size_t i = 0; i < n; i++) {
        text_adds(&cmd, " '");
        text_adds(&cmd, files[i]);
        text_adds(&cmd, "'");
    }
    text_adds(&cmd, " 2>/dev/null");
    FILE *p = popen(cmd.s, "r");
    free(cmd.s);
    if (!p)
        return NULL;
    text t = {0};
    char buf[4096];
    size_t k;
    while ((k = fread(buf, 1, sizeof buf, p)) > 0)
        text_add(&t, buf, k);
    int st = pclose(p);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        free(t.s);
        return NULL;
    }
    return t.s ? t.s : xstrdup("");
}

/* One file's part of that output (after its "== FILE" line), copied. */
static char *part_of(const char *all, const char *file)
{
    char *head = xasprintf("== %s\n", file);
    const char *p = strstr(all, head);
    assert_non_null(p);
    p += strlen(head);
    free(head);
    const char *end = strstr(p, "\n== ");
    return xstrndup(p, end ? (size_t)(end - p) + 1 : strlen(p));
}

static void test_html5lib(void **state)
{
    (void)state;
    if (access(PYTHON, X_OK) != 0 || system(PYTHON " -c 'import html5lib' >/dev/null 2>&1") != 0) {
        print_message("skipped: no html5lib under " PYTHON " (Debian's python3-html5lib)\n");
        skip();
    }
    listed l = load_listed("html5lib");
    text report = {0};
    size_t n, same = 0;
    char **files = files_of(FUZZ_DIR "/corpus/tokenizer", &n);
    char *all = html5lib_tokens(files, n);
    assert_non_null(all);
    for (size_t i = 0; i < n; i++) {
        size_t len;
        char *body = read_file(files[i], &len);
        char *want = part_of(all, files[i]);
        char *got = tokens_of(body, len);
        char name[512];
        repo_path(files[i], name, sizeof name);
        bool on_list = is_listed(&l, name);
        if (strcmp(want, got) == 0)
            same++;
        else if (!on_list) {
            char *msg =
                xasprintf("%s: html5lib gives\n%s-- the tokenizer\n%s--\n", name, want, got);
            text_adds(&report, msg);
            free(msg);
        }
        free(want);
        free(got);
        free(body);
    }
    free(all);
    print_message("%zu files, %zu with html5lib's start tags\n", n, same);
    for (size_t i = 0; i < l.n; i++)
        if (!l.seen[i]) {
            char *msg =
                xasprintf("%s: listed for html5lib, but not a file of the corpus\n", l.names[i]);
            text_adds(&report, msg);
            free(msg);
        }
    free_names(files, n);
    listed_free(&l);
    if (report.len > 0) {
        fputs(report.s, stdout);
        fail_msg("differences not in tokenizer_differences.txt (above)");
    }
    assert_true(n > 40);
}

/* ---- the tokenizer's own cases --------------------------------------------------- */

static void decoded(const char *in, const char *want)
{
    char out[256];
    size_t n = html_decode_attr(in, strlen(in), out);
    assert_int_equal(n, strlen(out));
    assert_string_equal(out, want);
}

/* Attribute values as the standard decodes them (13.2.5.72 on). */
static void test_decode_attr(void **state)
{
    (void)state;
    decoded("a&amp;b", "a&b");
    decoded("a&ampb", "a&ampb");   /* legacy name followed by an alphanumeric */
    decoded("a&amp=b", "a&amp=b"); /* ... or by '=' */
    decoded("a&amp b", "a& b");    /* ... else decoded */
    decoded("&amp", "&");          /* at the end of the value too */
    decoded("&notin;&notit;", "\xE2\x88\x89&notit;");
    decoded("&copy;&COPY&lt", "\xC2\xA9\xC2\xA9<");
    decoded("&unknown;&;&", "&unknown;&;&");
    decoded("&#65;&#x42;&#X43;&#0068&#x45", "ABCDE");
    decoded("&#128;&#x9F;&#x81;", "\xE2\x82\xAC\xC5\xB8\xC2\x81"); /* windows-1252's C1 */
    decoded("&#0;&#xD800;&#x110000;&#99999999999999;",
            "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
    decoded("&#;&#x;&#xg", "&#;&#x;&#xg");
    decoded("&nLt;", "\xE2\x89\xAA\xE2\x83\x92"); /* two code points */
    decoded("a\rb\r\nc\n", "a\nb\nc\n");
    char nul[] = {'a', '\0', 'b'};
    char out[16];
    assert_int_equal(html_decode_attr(nul, 3, out), 5);
    assert_string_equal(out,
                        "a\xEF\xBF\xBD"
                        "b");
}

/* Links of a small page on the tokenizer path, whole and byte by byte. */
static void tok_links(const char *body, const char *want)
{
    char *whole = links_of(LINKS_TOKENIZER, body, strlen(body), PAGE, NULL, false, 0);
    char *bytes = links_of(LINKS_TOKENIZER, body, strlen(body), PAGE, NULL, false, 1);
    assert_string_equal(whole, want);
    assert_string_equal(bytes, want);
    free(whole);
    free(bytes);
}

/* The states where libxml2 departs from the standard, on the tokenizer path. */
static void test_standard_states(void **state)
{
    (void)state;
    tok_links("<!--><a href=/a><!---><a href=/b>", "http://example.com/a\nhttp://example.com/b\n");
    tok_links("<!-- x --!><a href=/a>", "http://example.com/a\n");
    tok_links("<title><a href=/in></title><a href=/out>", "http://example.com/out\n");
    tok_links("<textarea><a href=/in></TEXTAREA ><a href=/out>", "http://example.com/out\n");
    tok_links("<script><!--<script></script><a href=/in></script>--></script><a href=/out>",
              "http://example.com/out\n");
    tok_links("<script></scriptx><a href=/in></script><a href=/out>", "http://example.com/out\n");
    tok_links("<style></style foo='>'><a href=/out>", "http://example.com/out\n");
    tok_links("<plaintext><a href=/in>", "");
    tok_links("<a href=/a><a href=/cut", "http://example.com/a\n");
    tok_links("<a href=/first href=/second>", "http://example.com/first\n");
    tok_links("<a href='/x?a=1&amp;b=2&copy=3'>", "http://example.com/x?a=1&b=2&copy=3\n");
    tok_links("<base href=/b/><base href=/c/><a href=x>", "http://example.com/b/x\n");
    tok_links("<a/href=/slash>", "http://example.com/slash\n");
    tok_links("<!DOCTYPE x \"a>b\"><a href=/after>", "http://example.com/after\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decode_attr),
        cmocka_unit_test(test_standard_states),
        cmocka_unit_test(test_differential),
        cmocka_unit_test(test_html5lib),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
