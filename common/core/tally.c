/* tally.c — see tally.h. */
#include "tally.h"

#include <stdbool.h>
#include <string.h>

/* What an engine's downloader middleware's IgnoreRequest record says first. */
#define IGNORED_PREFIX "IgnoreRequest:"

tally_class tally_class_of(int status, const char *exception)
{
    if (status < 0 && exception && strncmp(exception, IGNORED_PREFIX, strlen(IGNORED_PREFIX)) == 0)
        return TALLY_IGNORED;
    if (status < 0)
        return TALLY_FAILED;
    if (status >= 200 && status < 600)
        return (tally_class)(TALLY_2XX + (status / 100 - 2));
    return TALLY_OTHER;
}

const char *tally_class_name(tally_class k)
{
    static const char *const names[TALLY_NCLASSES] = {"2xx",    "3xx",     "4xx",  "5xx",
                                                      "failed", "ignored", "other"};
    return (unsigned)k < TALLY_NCLASSES ? names[k] : "?";
}

void tally_add(tally *t, int status, const char *exception, long long size)
{
    t->n[tally_class_of(status, exception)]++;
    if (size > 0)
        t->bytes += size;
}

size_t tally_total(const tally *t)
{
    size_t n = 0;
    for (int k = 0; k < TALLY_NCLASSES; k++)
        n += t->n[k];
    return n;
}

/* The classes a line shows: every one but "other", which only when it happened. */
static bool shown(const tally *t, int k)
{
    return k != TALLY_OTHER || t->n[k] > 0;
}

void tally_write_json(const tally *t, FILE *out)
{
    const char *sep = "";
    fputs(", \"by_status\": {", out);
    for (int k = 0; k < TALLY_NCLASSES; k++)
        if (shown(t, k)) {
            fprintf(out, "%s\"%s\": %zu", sep, tally_class_name((tally_class)k), t->n[k]);
            sep = ", ";
        }
    fprintf(out, "}, \"bytes_received\": %lld", t->bytes);
}

void tally_write_text(const tally *t, FILE *out)
{
    const char *sep = "";
    for (int k = 0; k < TALLY_NCLASSES; k++)
        if (shown(t, k)) {
            fprintf(out, "%s%s %zu", sep, tally_class_name((tally_class)k), t->n[k]);
            sep = ", ";
        }
}
