/* outpaths.h — the files a crawl writes, named on the command line: checked against
 * each other before any of them is opened (cli.c), then claimed (outclaim.h) before
 * the crawl's checks and its first write (app.c).
 *
 * Two outputs are one file when they name the same device and inode (a link, "./x",
 * /dev/stdout, /proc/self/fd/1 are seen through) or, for files that do not exist yet,
 * the same name in the same directory. A SQLite file (a row marked out_sqlite) is also
 * its siblings: SQLite writes FILE-wal, FILE-shm and FILE-journal beside it, and deletes
 * them. Character devices (/dev/null, a terminal) are never one file: writing both
 * there corrupts nothing.
 */
#ifndef CRAWL_OUTPATHS_H
#define CRAWL_OUTPATHS_H

#include <stdbool.h>
#include <stddef.h>

#include "cli.h"
#include "options.h"

typedef struct cli_output {
    char flag[48];    /* "--output" */
    const char *path; /* NULL: not given */
    bool sqlite;      /* with its -wal, -shm and -journal siblings */
    bool keep;        /* never replaced when it holds data (cli_flag's out_keep) */
    bool as_output;   /* taken as --output is (cli_flag's out_as_output) */
} cli_output;

/* The outputs the command line names: --output (unless the report goes to stdout),
 * --trace-events, then the rows of cmd's table marked out_file, in the table's order;
 * *n of them, paths NULL where not given (free the array). */
cli_output *cli_outputs(const crawl_options *o, const cli_command *cmd, size_t *n);

/* No two of the n outputs are one file, and none is stdout when the report goes there
 * (report_to_stdout). 0, or -1 with one line in err naming both (bad usage). */
int cli_check_outputs(const cli_output *out, size_t n, bool report_to_stdout, char *err,
                      size_t errlen);

#endif
