/* cli.h — the command line every crawler shares, and the table a crawler may add.
 *
 *   PROG [options] ROOT...
 * Exit codes: 0 the crawl completed (failed fetches are records in the report),
 * 1 a fatal error, 2 bad usage (one line on stderr naming the bad argument).
 *
 * Every flag is a row (cli_flag: name, argument, range, default, help, where the value
 * goes), as Scrapy declares its settings: the crawl core's own rows fill crawl_options
 * (cli.c), and a crawler with more features declares its own table, whose rows fill
 * its own struct. From the rows alone cli_parse makes getopt's options, checks each
 * value and its range, prints --help, and runs the table's cross checks. A crawler
 * that passes no table refuses every other flag as unknown.
 */
#ifndef CRAWL_CLI_H
#define CRAWL_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "options.h"

enum { CLI_OK = 0, CLI_EXIT_OK = -1, CLI_USAGE = 2 };

/* What follows a flag of the table, and what is stored at the row's offset. */
typedef enum {
    CLI_ARG_NONE,   /* a switch: int, set to 1 */
    CLI_ARG_INT,    /* a whole number in [min, max]: int */
    CLI_ARG_BYTES,  /* a whole number in [min, max] (max 0: no bound): long long */
    CLI_ARG_DOUBLE, /* a decimal number in [min, max] (no hex, inf or nan): double */
    CLI_ARG_STRING, /* const char *, argv's own (last one given wins) */
    CLI_ARG_LIST,   /* repeatable: each value appended to a cli_list */
    CLI_ARG_LONG,   /* a whole number in [min, max] (max 0: no bound): long */
    CLI_ARG_CHOICE, /* one of choices: const char *, the list's own string */
    CLI_ARG_COUNT,  /* a switch that counts: int, one more each time given */
    CLI_ARG_VALUE,  /* a value for set alone (nothing stored at offset) */
} cli_arg;

/* The values of a repeatable flag, in the order given (argv's own strings). */
typedef struct cli_list {
    const char **v;
    size_t n;
} cli_list;
void cli_list_clear(cli_list *l);

/* One flag of a table. */
typedef struct cli_flag {
    const char *name; /* the long option without "--": "max-depth" */
    cli_arg arg;
    const char *metavar;        /* the value's name in --help: "N", "SECS", "FILE" */
    double min, max;            /* CLI_ARG_INT, _LONG, _BYTES, _DOUBLE: the range */
    const char *noun;           /* CLI_ARG_DOUBLE: "is not a number of NOUN" (NULL: seconds) */
    size_t offset;              /* where the value goes: offsetof(the crawler's struct, field) */
    char short_name;            /* 0, or its one-letter form: 'v' for -v (core rows) */
    bool clears;                /* CLI_ARG_NONE: stores 0, not 1 (--lenient clears strict) */
    bool show_range;            /* --help says "MIN to MAX" before the default */
    const char *const *choices; /* CLI_ARG_CHOICE: the values, NULL-ended */
    /* NULL (the help has its own "[...]"), or the default --help shows in brackets
     * after the help, its choices and its range; "" (core rows): the value the core's
     * defaults hold */
    const char *def;
    /* NULL, or called after the value is stored: checks it (returns -1 with one line
     * in why, which is the whole message after "PROG: ") or sets more fields. */
    int (*set)(void *settings, const char *value, char *why, size_t whylen);
    bool out_file;   /* a file the crawl writes: no two of them (nor --output or
                             * --trace-events) may be one file; each is claimed */
    bool out_sqlite; /* with out_file: a SQLite database, whose -wal, -shm and
                             * -journal siblings count as the same file */
    bool out_keep;   /* with out_file: one that holds data is never replaced —
                             * refused unless the crawl appends (opt.append_output) */
    /* with out_file: taken as --output is, by one rule (app.c's claim_files): a crawl
     * that goes on (opt.keep_output) refuses one that holds data, and says how to go
     * on; else a plain crawl replaces it and a resumed one (opt.append_output) adds to it,
     * both done by the stage that writes it, at its open */
    bool out_as_output;
    /* A requirement, declared: given, this row needs the row named needs (of the same
     * table) to hold a value (a switch on, a number not 0, a string, a list not empty);
     * else bad usage, "--NAME ['VALUE'] NEEDS_WHY: give --NEEDS too". */
    const char *needs;
    const char *needs_why;
    const char *section; /* NULL, or a heading --help prints before this row */
    const char *help;    /* its lines in --help, '\n' between them, "[default]" last */
} cli_flag;

/* Rows that fill a struct of their own rather than the table's: an extension's own
 * flags and options, as it declares them beside its code. Zeroed, then its defaults,
 * before parsing; --help lists the rows after the table's, under the title. */
typedef struct cli_group {
    const char *title;            /* NULL: no heading */
    const cli_flag *flags;        /* ended by a row whose name is NULL */
    void *base;                   /* the struct the rows' offsets are into */
    size_t size;                  /* its size */
    void (*defaults)(void *base); /* NULL: all zero */
} cli_group;

/* A crawler's table. */
typedef struct cli_table {
    const char *title;                /* --help's heading for the rows */
    const cli_flag *flags;            /* ended by a row whose name is NULL */
    void (*defaults)(void *settings); /* before parsing (NULL: all zero) */
    /* NULL, or called once the whole command line is read and the core's checks
     * passed: the rules between flags (one flag needs another, or refuses one), which
     * may read the core's options, and what the core must know of the crawler's
     * flags, which it sets in o. Returns -1 with one line in why (as above). */
    int (*finish)(void *settings, crawl_options *o, char *why, size_t whylen);
    /* NULL, or the groups of rows of their own (cli_group), *n of them. */
    const cli_group *(*groups)(size_t *n);
} cli_table;

/* What is parsing. prog names the program in messages; default_transport is its own.
 * table and settings: the crawler's flags and the struct they fill (both NULL: the
 * core's flags only). unknown_note: NULL, or words added to an unknown option's line
 * (where the other options are). */
typedef struct cli_command {
    const char *prog;
    const char *default_transport;
    const cli_table *table;
    void *settings;
    const char *unknown_note;
} cli_command;

/* Free what cli_parse put in settings (the lists of CLI_ARG_LIST rows). */
void cli_table_free(const cli_table *t, void *settings);

/* Parse argv. Returns CLI_OK, CLI_EXIT_OK (help or version was printed: exit 0) or
 * CLI_USAGE (one line was printed on stderr: exit 2). Roots are checked here: each
 * must be accepted by url_fix. */
int cli_parse(crawl_options *o, int argc, char **argv, const cli_command *cmd);

#endif
