/* mirror.c — --mirror DIR's item pipeline stage and its guard (mirror.h; docs/mirror.md).
 * The files go through mirror_fs.h, their names come from mirror_name.h, the closing
 * conversion from mirror_links.h; here: which responses are saved, the manifest, the
 * map from URLs to files that the conversion reads, and the summary. */
#include "mirror.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "log.h"
#include "mirror_fs.h"
#include "mirror_links.h"
#include "mirror_name.h"
#include "recstream.h"
#include "strmap.h"
#include "extension.h"

/* A file of the mirror. */
typedef struct file {
    strmap_node node;  /* key: path */
    strmap_node fnode; /* in folds, key: fold, when it holds its name by case */
    char *path;
    char *fold; /* path with capitals lowered (mirror_fold) */
    char *url;  /* the URL whose body it holds: the base of its links */
    mirror_kind kind;
    long long size;
    bool converted;   /* a "k" line: its links were converted (an earlier run's close) */
    bool khash_known; /* and the k line says what the converted file's hash is */
    uint64_t khash;   /* mirror_hash of the converted bytes */
    char *was;        /* reading the manifest: its name before its last "m" line */
} file;

/* A URL saved, or a redirect: where its links go. */
typedef struct alias {
    strmap_node node; /* key: url */
    char *url;
    file *to;       /* the file holding it, or NULL */
    char *redirect; /* or where it redirects */
} alias;

/* A file moved aside for a name that differs only in case: where its links go now. */
typedef struct moved {
    strmap_node node; /* key: from */
    char *from, *to;
} moved;

typedef struct mirror {
    app *a;
    mirror_dir dir;
    bool resume;
    int manifest; /* DIR/.crawlstages-mirror, appended to */
    strmap paths; /* of file */
    strmap urls;  /* of alias */
    strmap folds; /* of file, by fold: the file that holds the plain name */
    strmap moved; /* of moved */
    file **files; /* in the order they were first written */
    size_t nfiles, cap;
    long long written, refused, converted, unchanged;
    char *error;               /* the first write the disk refused */
    mirror_resolved *resolved; /* during the conversion: the links resolved */
} mirror;

static file *find_file(mirror *m, const char *path)
{
    strmap_node *n = strmap_find(&m->paths, path);
    return n ? strmap_entry(n, file, node) : NULL;
}

static alias *find_alias(mirror *m, const char *url)
{
    strmap_node *n = strmap_find(&m->urls, url);
    return n ? strmap_entry(n, alias, node) : NULL;
}

static file *find_fold(mirror *m, const char *fold)
{
    strmap_node *n = strmap_find(&m->folds, fold);
    return n ? strmap_entry(n, file, fnode) : NULL;
}

/* f's path and fold set (a new file, or one moved), and f in the maps. */
static void place(mirror *m, file *f, const char *path)
{
    f->path = xstrdup(path);
    f->fold = mirror_fold(path);
    strmap_add(&m->paths, &f->node, f->path);
    if (!find_fold(m, f->fold))
        strmap_add(&m->folds, &f->fnode, f->fold);
}

static void unplace(mirror *m, file *f)
{
    strmap_remove(&m->paths, &f->node);
    if (find_fold(m, f->fold) == f)
        strmap_remove(&m->folds, &f->fnode);
    free(f->path);
    free(f->fold);
}

static const char *moved_to(mirror *m, const char *from)
{
    strmap_node *n = strmap_find(&m->moved, from);
    return n ? strmap_entry(n, moved, node)->to : NULL;
}

/* f renamed to path (on the disk already): the maps, and where its old name's links go. */
static void move_file(mirror *m, file *f, const char *path)
{
    moved *mv = xcalloc(1, sizeof *mv);
    mv->from = xstrdup(f->path);
    mv->to = xstrdup(path);
    strmap_node *old = strmap_find(&m->moved, mv->from);
    if (old)
        strmap_remove(&m->moved, old);
    strmap_add(&m->moved, &mv->node, mv->from);
    if (old) {
        moved *o = strmap_entry(old, moved, node);
        free(o->from), free(o->to), free(o);
    }
    unplace(m, f);
    place(m, f, path);
}

static file *add_file(mirror *m, const char *path)
{
    file *f = find_file(m, path);
    if (f)
        return f;
    f = xcalloc(1, sizeof *f);
    place(m, f, path);
    if (m->nfiles == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 64;
        m->files = xreallocarray(m->files, m->cap, sizeof *m->files);
    }
    m->files[m->nfiles++] = f;
    return f;
}

static alias *add_alias(mirror *m, const char *url)
{
    alias *u = find_alias(m, url);
    if (!u) {
        u = xcalloc(1, sizeof *u);
        u->url = xstrdup(url);
        strmap_add(&m->urls, &u->node, u->url);
    }
    return u;
}

/* The crawl ends: the disk refused a write. */
static void fatal(mirror *m, const char *why)
{
    if (m->error)
        return;
    m->error = xasprintf("--mirror '%s': %s", m->dir.path, why);
    crawl_fail(m->a->crawl, m->error);
    selector_stop(m->a->loop);
}

static void manifest_line(mirror *m, const char *line)
{
    if (write_all(m->manifest, line, strlen(line)) < 0) {
        char why[512];
        snprintf(why, sizeof why, "writing %s: %s", MIRROR_MANIFEST, strerror(errno));
        fatal(m, why);
    }
}

/* A manifest line written before the file it names is renamed into place
 * (mirror_write_then): a kill -9 leaves a line whose file is missing (harmless: its
 * URL is fetched again, or its conversion skipped), never a file the manifest lacks. */
typedef struct placing {
    mirror *m;
    const char *line;
} placing;

static int place_line(void *ctx)
{
    placing *p = ctx;
    manifest_line(p->m, p->line);
    return p->m->error ? -1 : 0;
}

static const char kinds[] = "ohc"; /* MIRROR_OTHER, _HTML, _CSS in the manifest */

/* One manifest line read back, tab-separated: "f KIND PATH URL" (a file written),
 * "k PATH HASH" (its links converted; HASH: the converted bytes' mirror_hash, 16 hex
 * digits; an older manifest's "k PATH" has none), "r FROM TO" (a redirect), "m FROM TO"
 * (a file moved aside for a name that differs only in case). */
static void manifest_entry(mirror *m, char *line)
{
    char *f[4] = {0};
    size_t n = 0;
    for (char *p = line; n < 4 && p; n++) {
        f[n] = p;
        p = strchr(p, '\t');
        if (p)
            *p++ = '\0';
    }
    if (n == 4 && strcmp(f[0], "f") == 0 && strchr(kinds, f[1][0]) && f[1][0]) {
        file *fl = add_file(m, f[2]);
        free(fl->url);
        fl->url = xstrdup(f[3]);
        fl->kind = (mirror_kind)(strchr(kinds, f[1][0]) - kinds);
        add_alias(m, f[3])->to = fl;
    } else if ((n == 2 || n == 3) && strcmp(f[0], "k") == 0 && find_file(m, f[1])) {
        file *fl = find_file(m, f[1]);
        fl->converted = true;
        fl->khash_known = n == 3 && sscanf(f[2], "%16" SCNx64, &fl->khash) == 1;
    } else if (n == 3 && strcmp(f[0], "m") == 0 && find_file(m, f[1]) && !find_file(m, f[2])) {
        file *fl = find_file(m, f[1]);
        move_file(m, fl, f[2]);
        free(fl->was);
        fl->was = xstrdup(f[1]); /* finish_moves: the rename may not have been done */
    } else if (n == 3 && strcmp(f[0], "r") == 0) {
        alias *u = add_alias(m, f[1]);
        free(u->redirect);
        u->redirect = xstrdup(f[2]);
    }
}

/* --resume, --recrawl: what this mirror wrote before (a torn last line is left out). */
static int manifest_read(mirror *m, char *err, size_t errlen)
{
    char *data;
    size_t len;
    char why[512];
    if (!mirror_exists(&m->dir, MIRROR_MANIFEST))
        return 0;
    if (mirror_read(&m->dir, MIRROR_MANIFEST, &data, &len, why, sizeof why) != MIRROR_OK) {
        snprintf(err, errlen, "--mirror: %s", why);
        return -1;
    }
    for (char *p = data, *nl; (nl = memchr(p, '\n', len - (size_t)(p - data))); p = nl + 1) {
        *nl = '\0';
        manifest_entry(m, p);
    }
    free(data);
    return 0;
}

static const char *prog(const mirror *m)
{
    return m->a ? m->a->prog : "crawl-queue";
}

/* path, a name that differs only in case from a file's of the mirror (mirror_name.h):
 * the name it is saved under. The first of the two by mirror_case_first keeps the plain
 * name; when that is path, the file holding it now is moved aside first (renamed, and a
 * manifest line), so that the names do not depend on the order of the fetches. */
/* The file holder renamed to aside, its "m" line appended first, as a file's line comes
 * before its rename: a kill -9 between the two leaves a line whose rename a resumed run
 * does (finish_moves), never a moved file the manifest names by its old name. A rename
 * that fails after its line gets the line that undoes it. 0, or -1 with why. */
static int move_aside(mirror *m, file *holder, const char *aside, char *why, size_t whylen)
{
    if (mirror_exists(&m->dir, aside)) {
        snprintf(why, whylen, "'%s/%s' is there already: '%s' not moved aside", m->dir.path, aside,
                 holder->path);
        return -1;
    }
    char *line = xasprintf("m\t%s\t%s\n", holder->path, aside);
    manifest_line(m, line);
    free(line);
    if (m->error)
        return -1;
    if (mirror_rename(&m->dir, holder->path, aside, why, whylen) != MIRROR_OK) {
        line = xasprintf("m\t%s\t%s\n", aside, holder->path);
        manifest_line(m, line);
        free(line);
        return -1;
    }
    move_file(m, holder, aside);
    return 0;
}

/* --resume: the renames of "m" lines a kill -9 left undone (the line written, the file
 * still under its old name). */
static void finish_moves(mirror *m)
{
    for (size_t i = 0; i < m->nfiles; i++) {
        file *f = m->files[i];
        char why[1024];
        if (f->was && !mirror_exists(&m->dir, f->path) && mirror_exists(&m->dir, f->was)) {
            if (mirror_rename(&m->dir, f->was, f->path, why, sizeof why) == MIRROR_OK)
                log_info("%s: --mirror: %s/%s -> %s (the rename a killed run left undone)", prog(m),
                         m->dir.path, f->was, f->path);
            else
                log_warn("%s: --mirror: %s", prog(m), why);
        }
        free(f->was);
        f->was = NULL;
    }
}

static char *case_name(mirror *m, char *path)
{
    /* moved aside by an earlier run for a name whose file a kill -9 kept from being
     * saved: it keeps its "~" name (the name that won comes again, and goes plain) */
    const char *to = moved_to(m, path);
    if (to && find_file(m, to) && !find_file(m, path)) {
        char *v = xstrdup(to);
        free(path);
        return v;
    }
    char *fold = mirror_fold(path);
    file *holder = find_fold(m, fold);
    free(fold);
    if (!holder || strcmp(holder->path, path) == 0)
        return path;
    if (mirror_case_first(path, holder->path)) {
        char why[1024];
        char *aside = mirror_case_variant(holder->path);
        char *from = xstrdup(holder->path);
        int rc = move_aside(m, holder, aside, why, sizeof why);
        if (rc == 0)
            log_info("%s: --mirror: %s/%s -> %s (%s differs only in case)", prog(m), m->dir.path,
                     from, aside, path);
        free(from);
        if (rc == 0) {
            free(aside);
            return path;
        }
        if (!m->error)
            log_warn("%s: --mirror: %s", prog(m), why);
        free(aside);
    }
    char *v = mirror_case_variant(path);
    free(path);
    return v;
}

static void save(mirror *m, const char *url, mirror_kind kind, const char *body, size_t len)
{
    char why[1024];
    char *path = mirror_name(url, kind, why, sizeof why);
    if (!path) {
        log_warn("%s: --mirror: %s not saved: %s", prog(m), url, why);
        m->refused++;
        return;
    }
    path = case_name(m, path);
    file *f = find_file(m, path);
    char *line = xasprintf("f\t%c\t%s\t%s\n", kinds[kind], path, url);
    placing p = {m, line};
    int rc = mirror_write_then(&m->dir, path, body ? body : "", len, f != NULL, place_line, &p, why,
                               sizeof why);
    free(line);
    if (rc != MIRROR_OK) {
        if (rc == MIRROR_FAILED)
            fatal(m, why);
        else
            log_warn("%s: --mirror: %s not saved: %s", prog(m), url, why);
        m->refused += rc == MIRROR_REFUSED;
        free(path);
        return;
    }
    f = add_file(m, path);
    free(f->url);
    f->url = xstrdup(url);
    f->kind = kind;
    f->size = (long long)len;
    f->converted = false;
    f->khash_known = false;
    add_alias(m, url)->to = f;
    m->written++;
    log_info("%s: --mirror: %s -> %s/%s (%zu bytes)", prog(m), url, m->dir.path, path, len);
    free(path);
}

/* A 304 to --recrawl's conditional request: the page has not changed since the run
 * whose manifest this mirror read, so its file (converted, perhaps) stays as it is,
 * not written again. False when the mirror has no file of it (written anew). */
static bool keep_unchanged(mirror *m, const char *url, size_t len)
{
    alias *u = find_alias(m, url);
    if (!u || !u->to || !mirror_exists(&m->dir, u->to->path))
        return false;
    m->unchanged++;
    u->to->size = (long long)len; /* a page's: its converted size, once read again */
    log_info("%s: --mirror: %s unchanged (304): %s/%s kept", prog(m), url, m->dir.path,
             u->to->path);
    return true;
}

static bool clean(const char *s)
{
    return !strpbrk(s, "\t\n\r");
}

/* A record: its file saved, or its redirect remembered. */
static void record(mirror *m, const item *it)
{
    const fetch_stat *rec = &it->record;
    const response *r = it->response;
    if (!r || m->error || !clean(rec->url))
        return;
    if (rec->status >= 300 && rec->status < 400 && rec->next_url && clean(rec->next_url)) {
        alias *u = add_alias(m, rec->url);
        free(u->redirect);
        u->redirect = xstrdup(rec->next_url);
        char *line = xasprintf("r\t%s\t%s\n", rec->url, rec->next_url);
        manifest_line(m, line);
        free(line);
        return;
    }
    if ((rec->status < 200 || rec->status > 299) && !r->not_modified)
        return;
    if (r->truncated) {
        log_warn("%s: --mirror: %s not saved: its body was cut at --max-size", prog(m), rec->url);
        m->refused++;
        return;
    }
    if (r->not_modified && keep_unchanged(m, rec->url, r->body_len))
        return;
    save(m, rec->url, mirror_kind_of(rec->content_type), r->body, r->body_len);
}

static coro *mirror_process_item(void *self, item *it, bool *drop)
{
    mirror *m = self;
    record(m, it);
    /* the disk refused a file (this record's, or one before it): the stages after
     * (--state first) never see the record, so that a resumed crawl fetches it again */
    *drop = m->error != NULL;
    return NULL;
}

/* ---- the closing step: links converted ---- */

typedef struct link_ctx {
    mirror *m;
    const file *from;
} link_ctx;

/* A file converted already is read with this base, followed by its name: its relative
 * links, which name files of the mirror, resolve under it (.invalid is no host of the
 * web, RFC 2606), and are written again as they were; its absolute links are looked
 * up as any. That makes the conversion idempotent, for a mirror that goes on. */
#define CONVERTED_BASE "http://mirror.invalid/"

/* The base of a converted file's links: CONVERTED_BASE and its name, percent-encoded
 * (a link from "", the top, to it). */
static char *converted_base(const file *f)
{
    char *rel = mirror_relative("", f->path);
    char *base = xasprintf(CONVERTED_BASE "%s", rel);
    free(rel);
    return base;
}

/* A URL under CONVERTED_BASE: the name of the mirror's file it stands for (decoded;
 * malloc'd). */
static char *converted_name(const char *url)
{
    const char *p = url + strlen(CONVERTED_BASE);
    char *name = xmalloc(strlen(p) + 1), *o = name;
    for (; *p; p++) {
        unsigned v;
        if (*p == '%' && p[1] && p[2] && sscanf(p + 1, "%2x", &v) == 1) {
            *o++ = (char)v;
            p += 2;
        } else {
            *o++ = *p;
        }
    }
    *o = '\0';
    return name;
}

/* mirror_link_fn: a saved URL (through its redirects, ten at most) as a relative link
 * from the file converted. */
static char *local_link(void *ctx, const char *url)
{
    link_ctx *l = ctx;
    if (strncmp(url, CONVERTED_BASE, strlen(CONVERTED_BASE)) == 0) {
        char *name = converted_name(url);
        const char *to = moved_to(l->m, name);
        char *link = mirror_relative(l->from->path, to ? to : name);
        free(name);
        return link;
    }
    alias *u = find_alias(l->m, url);
    for (int hops = 0; u && !u->to && u->redirect && hops < 10; hops++)
        u = find_alias(l->m, u->redirect);
    return u && u->to ? mirror_relative(l->from->path, u->to->path) : NULL;
}

/* One page or stylesheet rewritten in place. -1: the disk refused it (fatal). */
static int convert(mirror *m, file *f)
{
    char why[1024];
    char *text, *out;
    size_t len, outlen = 0;
    int got = mirror_read(&m->dir, f->path, &text, &len, why, sizeof why);
    if (got == MIRROR_MISSING)
        return 0; /* a manifest line whose file a kill -9 left unwritten */
    if (got != MIRROR_OK) {
        log_warn("%s: --mirror: %s not converted: %s", prog(m), f->path, why);
        return 0;
    }
    link_ctx l = {m, f};
    char *self = mirror_relative(f->path, f->path);
    /* converted, unless a kill -9 came between the k line and the file's rename (or the
     * file was written again after it): the hash tells */
    if (f->converted && f->khash_known && mirror_hash(text, len) != f->khash)
        f->converted = false;
    char *base = f->converted ? converted_base(f) : xstrdup(f->url);
    out = f->kind == MIRROR_HTML
        ? mirror_convert_html(text, len, base, self, local_link, &l, m->resolved, &outlen)
        : mirror_convert_css(text, len, base, local_link, &l, m->resolved, &outlen);
    free(base);
    free(self);
    if (!out) {
        free(text);
        return 0;
    }
    if (outlen == len && memcmp(out, text, len) == 0) {
        /* converted already, and its links still lead where they did: not written (a
         * --recrawl's 304 keeps a file as it is); its k line, with the hash, if it has
         * none that holds */
        uint64_t h = mirror_hash(text, len);
        f->size = (long long)len;
        free(text);
        free(out);
        if (!f->converted || !f->khash_known || f->khash != h) {
            char *line = xasprintf("k\t%s\t%016" PRIx64 "\n", f->path, h);
            manifest_line(m, line);
            free(line);
            f->converted = f->khash_known = true;
            f->khash = h;
        }
        return m->error ? -1 : 0;
    }
    free(text);
    uint64_t h = mirror_hash(out, outlen);
    char *line = xasprintf("k\t%s\t%016" PRIx64 "\n", f->path, h);
    placing p = {m, line};
    int rc =
        mirror_write_then(&m->dir, f->path, out, outlen, true, place_line, &p, why, sizeof why);
    free(line);
    free(out);
    if (rc == MIRROR_FAILED) {
        fatal(m, why);
        return -1;
    }
    if (rc == MIRROR_OK) {
        f->size = (long long)outlen;
        m->converted++;
        f->converted = true;
        f->khash_known = true;
        f->khash = h;
    }
    return m->error ? -1 : 0;
}

typedef struct {
    coro co;
    mirror *m;
} close_frame;

static int close_body(coro *co)
{
    close_frame *f = (close_frame *)co;
    CORO_BEGIN(co);
    CORO_RAISE(co, CORO_OSERROR, 0, "%s", f->m->error);
    CORO_END(co);
}

static const coro_def close_def = {"mirror_close", __FILE__, close_body, NULL, sizeof(close_frame)};

static coro *fail_coro(mirror *m)
{
    close_frame *f = (close_frame *)coro_new(&close_def);
    f->m = m;
    return &f->co;
}

static coro *mirror_close(void *self)
{
    mirror *m = self;
    m->resolved = mirror_resolved_new();
    for (size_t i = 0; i < m->nfiles && !m->error; i++)
        if (m->files[i]->kind != MIRROR_OTHER)
            convert(m, m->files[i]);
    mirror_resolved_free(m->resolved);
    m->resolved = NULL;
    if (m->error)
        return fail_coro(m);
    long long bytes = 0;
    for (size_t i = 0; i < m->nfiles; i++)
        bytes += m->files[i]->size;
    if (log_level >= LOG_WARN)
        fprintf(stderr,
                "%s: mirror in '%s': %zu files, %lld bytes (%lld written by this run, %lld "
                "unchanged, %lld converted, %lld not saved)\n",
                prog(m), m->dir.path, m->nfiles, bytes, m->written, m->unchanged, m->converted,
                m->refused);
    return NULL;
}

static coro *mirror_open(void *self, engine *e)
{
    ((mirror *)self)->a = engine_app(e);
    return NULL;
}

static void drop_file(strmap_node *n)
{
    file *f = strmap_entry(n, file, node);
    free(f->path);
    free(f->fold);
    free(f->url);
    free(f->was);
    free(f);
}

static void drop_moved(strmap_node *n)
{
    moved *mv = strmap_entry(n, moved, node);
    free(mv->from);
    free(mv->to);
    free(mv);
}

static void drop_alias(strmap_node *n)
{
    alias *u = strmap_entry(n, alias, node);
    free(u->url);
    free(u->redirect);
    free(u);
}

static void mirror_free(void *self)
{
    mirror *m = self;
    if (m->manifest >= 0)
        close(m->manifest);
    mirror_dir_close(&m->dir);
    strmap_clear(&m->paths, drop_file);
    strmap_free(&m->paths);
    strmap_clear(&m->urls, drop_alias);
    strmap_free(&m->urls);
    strmap_free(&m->folds); /* its files are paths' */
    strmap_clear(&m->moved, drop_moved);
    strmap_free(&m->moved);
    free(m->files);
    free(m->error);
    free(m);
}

int mirror_pipeline(app *a, const char *dir, bool resume, item_pipeline *out, char *err,
                    size_t errlen)
{
    mirror *m = xcalloc(1, sizeof *m);
    m->a = a;
    m->manifest = -1;
    m->dir.fd = m->dir.last_fd = -1;
    m->resume = resume;
    strmap_init(&m->paths);
    strmap_init(&m->urls);
    strmap_init(&m->folds);
    strmap_init(&m->moved);
    if (mirror_dir_open(&m->dir, dir, err, errlen) < 0) {
        mirror_free(m);
        return -1;
    }
    if (!resume && mirror_exists(&m->dir, MIRROR_MANIFEST)) {
        snprintf(err, errlen,
                 "--mirror '%s' holds a mirror already (%s): name another directory, or go "
                 "on with it with --state and --resume, or --recrawl",
                 dir, MIRROR_MANIFEST);
        mirror_free(m);
        return -1;
    }
    if (resume && manifest_read(m, err, errlen) < 0) {
        mirror_free(m);
        return -1;
    }
    if (resume) {
        mirror_clean_temporaries(&m->dir); /* a killed run's */
        finish_moves(m);
    }
    m->manifest = openat(m->dir.fd, MIRROR_MANIFEST,
                         O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (m->manifest < 0) {
        snprintf(err, errlen, "--mirror '%s': %s: %s", dir, MIRROR_MANIFEST, strerror(errno));
        mirror_free(m);
        return -1;
    }
    *out = (item_pipeline){.name = "mirror",
                           .self = m,
                           .wants_body = true,
                           .open = mirror_open,
                           .process_item = mirror_process_item,
                           .close = mirror_close,
                           .free = mirror_free};
    return 0;
}

/* ---- the guard: a URL without a safe name is not fetched ---- */

static coro *guard_request(void *self, request *req, mw_result *out)
{
    (void)self;
    char why[512];
    char *name = mirror_name(req->url, MIRROR_OTHER, why, sizeof why);
    if (name)
        mw_continue(out);
    else
        mw_ignore(out, "--mirror: no safe name for it: %s", why);
    free(name);
    return NULL;
}

/* ---- the descriptors (extension.h) ---- */

/* Its own flag: --mirror DIR. */
static struct mirror_opts {
    const char *dir;
} opts;

/* clang-format off */
static const cli_flag flags[] = {
    {.name = "mirror", .arg = CLI_ARG_STRING, .metavar = "DIR",
     .offset = offsetof(struct mirror_opts, dir),
     .section = "Mirror (docs/mirror.md):",
     .help = "save every page and requisite under DIR/HOST/PATH\n"
             "and convert their links to read offline, as\n"
             "wget -m -k -p -E (turns on --requisites) [none]"},
    {0}};
/* clang-format on */

bool mirror_requested(void)
{
    return opts.dir != NULL;
}

static bool on(const settings *s)
{
    (void)s;
    return opts.dir != NULL;
}

static int make(engine *e, const settings *s, item_pipeline *out, char *err, size_t errlen)
{
    return mirror_pipeline(engine_app(e), opts.dir, s->resume || s->recrawl, out, err, errlen);
}

static int make_guard(engine *e, const settings *s, downloader_middleware *out, char *err,
                      size_t errlen)
{
    (void)e, (void)s, (void)err, (void)errlen;
    *out = (downloader_middleware){.name = "mirror", .process_request = guard_request};
    return 0;
}

/* The descriptors (extension.h): --mirror, an item pipeline stage of order 90 (before
 * --state: a URL's file is in place before the state's row that counts it done is
 * made, so that no kill -9 leaves a URL done without its file), and its guard, a
 * downloader middleware of order 150 (after robots.txt), both on with the flag. */
const extension mirror_extension = {"mirror",
                                    EXT_PIPELINE,
                                    90,
                                    on,
                                    .make_pipeline = make,
                                    .flags = flags,
                                    .opts = &opts,
                                    .opts_size = sizeof opts};
const extension mirror_guard_extension = {"mirror-guard", EXT_DOWNLOADER_MW, 150, on,
                                          .make_middleware = make_guard};
