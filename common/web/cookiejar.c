/* cookiejar.c — a Netscape cookie file: checked line by line, read, and
 * written beside the old one then renamed over it (cookiejar.h). */
#include "cookiejar.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"

#define COOKIEJAR_MAX_LINE 16384 /* a cookie line longer than this is not one */

static bool is_bool_word(const char *s, size_t n)
{
    return (n == 4 && strncmp(s, "TRUE", 4) == 0) || (n == 5 && strncmp(s, "FALSE", 5) == 0);
}

const char *cookiejar_line_check(const char *line)
{
    for (const unsigned char *p = (const unsigned char *)line; *p; p++)
        if ((*p < 0x20 && *p != '\t') || *p == 0x7f)
            return "a control character (not a text file)";
    if (strncmp(line, "#HttpOnly_", 10) == 0)
        line += 10;
    else if (line[0] == '#' || line[strspn(line, " \t")] == '\0')
        return NULL; /* a comment, an empty line */
    const char *field[7];
    size_t len[7], n = 0;
    for (const char *p = line; n < 7; n++) {
        const char *tab = strchr(p, '\t');
        field[n] = p;
        len[n] = tab ? (size_t)(tab - p) : strlen(p);
        if (!tab) {
            n++;
            break;
        }
        p = tab + 1;
    }
    if (n < 6 || (n == 7 && strchr(field[6], '\t')))
        return "not 7 fields between tabs (domain, TRUE/FALSE, path, TRUE/FALSE, expiry, "
               "name, value)";
    if (len[0] == 0 || !is_bool_word(field[1], len[1]) || !is_bool_word(field[3], len[3]))
        return "no domain, or a second or fourth field that is not TRUE or FALSE";
    if (len[2] == 0 || field[2][0] != '/')
        return "a path that does not start with '/'";
    if (len[4] == 0 || strspn(field[4], "-0123456789") < len[4])
        return "an expiry that is not a number";
    return NULL;
}

/* One line of f (without its newline) in *buf; false at the end. A line over the limit
 * is returned cut, which the check then refuses as a line too long. */
static bool next_line(FILE *f, char **buf, size_t *cap, bool *too_long)
{
    ssize_t n = getline(buf, cap, f);
    if (n < 0)
        return false;
    *too_long = n > COOKIEJAR_MAX_LINE;
    while (n > 0 && ((*buf)[n - 1] == '\n' || (*buf)[n - 1] == '\r'))
        (*buf)[--n] = '\0';
    *too_long |= strlen(*buf) != (size_t)n; /* a NUL byte inside */
    return true;
}

long cookiejar_read(const char *path, int (*add)(void *ctx, const char *line), void *ctx, char *err,
                    size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT)
            return 0;
        snprintf(err, errlen, "'%s': %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "'%s': not a regular file", path);
        fclose(f);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    long lineno = 0, cookies = 0;
    bool too_long = false;
    int rc = 0;
    while (rc == 0 && next_line(f, &line, &cap, &too_long)) {
        lineno++;
        const char *why = too_long ? "a line too long, or a NUL byte (not a text file)"
                                   : cookiejar_line_check(line);
        if (why) {
            snprintf(err, errlen,
                     "'%s' is not a Netscape cookie file (line %ld: %s): it is "
                     "neither read nor overwritten",
                     path, lineno, why);
            rc = -1;
        } else if (line[0] && (line[0] != '#' || strncmp(line, "#HttpOnly_", 10) == 0)) {
            if (add && add(ctx, line) < 0) {
                snprintf(err, errlen, "'%s': line %ld: libcurl refused the cookie", path, lineno);
                rc = -1;
            }
            cookies++;
        }
    }
    if (rc == 0 && ferror(f)) {
        snprintf(err, errlen, "'%s': %s", path, strerror(errno));
        rc = -1;
    }
    free(line);
    fclose(f);
    return rc < 0 ? -1 : cookies;
}

/* The file to replace: path, or the target of the symbolic link path is (malloc'd). */
static char *target_of(const char *path)
{
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
        char *real = realpath(path, NULL);
        if (real)
            return real;
    }
    return xstrdup(path);
}

static int write_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

int cookiejar_write(const char *path, const char *const *lines, size_t n, char *err, size_t errlen)
{
    static const char head[] = "# Netscape HTTP Cookie File\n"
                               "# https://curl.se/docs/http-cookies.html\n"
                               "# Written by crawlstages. Edit at your own risk.\n\n";
    char *target = target_of(path);
    char *tmp = xasprintf("%s.tmp-%ld", target, (long)getpid());
    struct stat st;
    mode_t mode = stat(target, &st) == 0 ? st.st_mode & 07777 : 0600;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    int rc = fd < 0 ? -1 : write_all(fd, head, sizeof head - 1);
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = write_all(fd, lines[i], strlen(lines[i])) < 0 || write_all(fd, "\n", 1) < 0 ? -1 : 0;
    if (rc == 0)
        rc = fsync(fd);
    int saved = errno;
    if (fd >= 0 && close(fd) < 0 && rc == 0) {
        saved = errno;
        rc = -1;
    }
    if (rc == 0 && rename(tmp, target) < 0) {
        saved = errno;
        rc = -1;
    }
    if (rc < 0) {
        snprintf(err, errlen, "'%s': not written (%s); the file is as it was", path,
                 strerror(saved));
        if (fd >= 0)
            unlink(tmp);
    }
    free(tmp);
    free(target);
    return rc;
}

/* RFC 6265, 4.1.1: cookie-name is an RFC 2616 token; cookie-octet. */
static bool is_token_char(unsigned char c)
{
    return c > 0x20 && c < 0x7f && !strchr("()<>@,;:\\\"/[]?={}", c);
}

static bool is_cookie_octet(unsigned char c)
{
    return c > 0x20 && c < 0x7f && c != '"' && c != ',' && c != ';' && c != '\\';
}

const char *cookiejar_pair_check(const char *pair)
{
    const char *eq = strchr(pair, '=');
    if (!eq || eq == pair)
        return "not NAME=VALUE";
    for (const char *p = pair; p < eq; p++)
        if (!is_token_char((unsigned char)*p))
            return "the name is not a token (letters, digits, !#$%&'*+-.^_`|~)";
    for (const char *p = eq + 1; *p; p++)
        if (!is_cookie_octet((unsigned char)*p))
            return "the value holds a space, a control character, '\"', ',', ';' or '\\'";
    if (strlen(pair) > 4096)
        return "over 4096 characters";
    return NULL;
}

char *cookiejar_host_line(const char *host, const char *pair)
{
    const char *eq = strchr(pair, '=');
    return xasprintf("%s\tFALSE\t/\tFALSE\t0\t%.*s\t%s", host, (int)(eq - pair), pair, eq + 1);
}
