/* outpaths.c — see outpaths.h. */
#include "outpaths.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"

cli_output *cli_outputs(const crawl_options *o, const cli_command *cmd, size_t *n)
{
    bool to_stdout = !o->output || strcmp(o->output, "-") == 0;
    size_t rows = 0;
    for (const cli_flag *f = cmd && cmd->table ? cmd->table->flags : NULL; f && f->name; f++)
        rows += f->out_file && f->arg == CLI_ARG_STRING;
    size_t ngroups = 0;
    const cli_group *g =
        cmd && cmd->table && cmd->table->groups ? cmd->table->groups(&ngroups) : NULL;
    for (size_t i = 0; i < ngroups; i++)
        for (const cli_flag *f = g[i].flags; f && f->name; f++)
            rows += f->out_file && f->arg == CLI_ARG_STRING;
    cli_output *out = xcalloc(2 + rows, sizeof *out);
    out[0] = (cli_output){"--output", to_stdout ? NULL : o->output, false, false, true};
    out[1] = (cli_output){"--trace-events", o->trace_events, false, false, false};
    *n = 2;
    for (const cli_flag *f = cmd && cmd->table ? cmd->table->flags : NULL; f && f->name; f++) {
        if (!f->out_file || f->arg != CLI_ARG_STRING)
            continue;
        cli_output *x = &out[(*n)++];
        snprintf(x->flag, sizeof x->flag, "--%s", f->name);
        x->path = *(const char *const *)((const char *)cmd->settings + f->offset);
        x->sqlite = f->out_sqlite;
        x->keep = f->out_keep;
        x->as_output = f->out_as_output;
    }
    for (size_t i = 0; i < ngroups; i++)
        for (const cli_flag *f = g[i].flags; f && f->name; f++) {
            if (!f->out_file || f->arg != CLI_ARG_STRING)
                continue;
            cli_output *x = &out[(*n)++];
            snprintf(x->flag, sizeof x->flag, "--%s", f->name);
            x->path = *(const char *const *)((const char *)g[i].base + f->offset);
            x->sqlite = f->out_sqlite;
            x->keep = f->out_keep;
            x->as_output = f->out_as_output;
        }
    return out;
}

/* dev+ino of a path's directory, and where its last component starts. */
static bool stat_dir_of(const char *path, struct stat *st, const char **last)
{
    const char *slash = strrchr(path, '/');
    *last = slash ? slash + 1 : path;
    if (!slash)
        return stat(".", st) == 0;
    char *dir = xstrndup(path, slash == path ? 1 : (size_t)(slash - path));
    bool ok = stat(dir, st) == 0;
    free(dir);
    return ok;
}

/* Whether a and b name one file. Both exist: the same device and inode. Neither
 * exists: the same directory (device and inode) and the same last component. */
static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    bool ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
    if (ea && eb)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino && !S_ISCHR(sa.st_mode);
    if (ea || eb)
        return false;
    const char *la, *lb;
    if (!stat_dir_of(a, &sa, &la) || !stat_dir_of(b, &sb, &lb))
        return strcmp(a, b) == 0;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino && strcmp(la, lb) == 0;
}

/* Whether path is the file stdout writes to (the report, without --output). */
static bool is_stdout(const char *path)
{
    struct stat sp, so;
    return stat(path, &sp) == 0 && fstat(STDOUT_FILENO, &so) == 0 && sp.st_dev == so.st_dev
        && sp.st_ino == so.st_ino && !S_ISCHR(sp.st_mode);
}

/* The names an output stands for: itself, and a SQLite file's siblings. */
static const char *const sibling[] = {"", "-wal", "-shm", "-journal"};
#define NAMES(out) ((out)->sqlite ? sizeof sibling / sizeof sibling[0] : 1)

static char *name_of(const cli_output *out, size_t k)
{
    return xasprintf("%s%s", out->path, sibling[k]);
}

/* Whether a (one of its names: *ka) and b (*kb) are one file. */
static bool overlap(const cli_output *a, const cli_output *b, size_t *ka, size_t *kb)
{
    for (*ka = 0; *ka < NAMES(a); ++*ka)
        for (*kb = 0; *kb < NAMES(b); ++*kb) {
            char *na = name_of(a, *ka), *nb = name_of(b, *kb);
            bool same = same_file(na, nb);
            free(na);
            free(nb);
            if (same)
                return true;
        }
    return false;
}

int cli_check_outputs(const cli_output *out, size_t n, bool report_to_stdout, char *err,
                      size_t errlen)
{
    for (size_t i = 1; i < n; i++)
        for (size_t j = 0; j < i && out[i].path; j++) {
            size_t kj, ki;
            if (!out[j].path || !overlap(&out[j], &out[i], &kj, &ki))
                continue;
            if (kj == 0 && ki == 0) {
                snprintf(err, errlen,
                         "%s '%s' and %s '%s' are the same file (give each its "
                         "own)",
                         out[j].flag, out[j].path, out[i].flag, out[i].path);
            } else {
                const cli_output *db = kj ? &out[j] : &out[i];
                char *name = name_of(db, kj ? kj : ki);
                snprintf(err, errlen,
                         "%s '%s' and %s '%s' are the same file: SQLite writes "
                         "'%s' beside %s '%s' and deletes it (give each its own)",
                         out[j].flag, out[j].path, out[i].flag, out[i].path, name, db->flag,
                         db->path);
                free(name);
            }
            return -1;
        }
    for (size_t i = 0; report_to_stdout && i < n; i++)
        for (size_t k = 0; out[i].path && k < NAMES(&out[i]); k++) {
            char *name = name_of(&out[i], k);
            bool same = is_stdout(name);
            free(name);
            if (same) {
                snprintf(err, errlen,
                         "%s '%s' is where the report goes (stdout); give it a "
                         "file of its own",
                         out[i].flag, out[i].path);
                return -1;
            }
        }
    return 0;
}
