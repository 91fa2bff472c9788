/* outfile.h — the files a crawl writes (the report's --output, --trace-events): opened
 * without ever blocking and closed with the reason of any failed write.
 *
 * fopen(path, "w") on a FIFO waits until some process opens it for reading: a crawl
 * started with its report going to a FIFO nobody reads would hang before fetching
 * anything. outfile_open never waits: a FIFO without a reader is an error at once
 * ("a FIFO with no reader"), one with a reader is written as usual (writes then wait
 * for the reader, as they do on a pipe to stdout).
 */
#ifndef CRAWL_OUTFILE_H
#define CRAWL_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

/* open(path, flags | O_CLOEXEC, 0666) without waiting for a FIFO's reader (O_NONBLOCK,
 * cleared once open): the descriptor, or -1 with one line in err ("cannot open <what>
 * '<path>': a FIFO with no reader (start its reader first)", or the errno's reason). */
int outfile_open_fd(const char *path, int flags, const char *what, char *err, size_t errlen);

/* Create or truncate path for writing. what names it in messages ("--output"). NULL
 * with one line in err ("cannot open --output 'x': No such file or directory"). */
FILE *outfile_open(const char *path, const char *what, char *err, size_t errlen);

/* For a crawl resumed: open the JSONL report of earlier runs to add to it. What a killed run
 * left half-written (a last line without its newline) and the summary line that ends a
 * finished or interrupted run are cut first, so the file stays one record a line. A
 * missing file is created. NULL with one line in err. */
FILE *outfile_open_append(const char *path, const char *what, char *err, size_t errlen);

/* A file of lines written with one write(2) each (a stage's list of items, say), to go
 * on with: a kill -9 in the middle of a write leaves a last line without its newline,
 * cut here (a warning says so). *size: the file's size, then where its last whole line
 * ends. 0, or -1 with one line in err ("reading <what> '<path>': ..."). */
int outfile_cut_torn_line(int fd, long long *size, const char *what, const char *path, char *err,
                          size_t errlen);

/* Flush f; 0, or -1 with "writing <what> '<path>' failed: <reason>" in err. The reason
 * is the one of the write that failed now or, for a write that failed earlier and left
 * only the stream's error flag, "write error". f stays open. */
int outfile_flush(FILE *f, const char *what, const char *path, char *err, size_t errlen);

/* outfile_flush, then fclose (also when the flush failed). */
int outfile_close(FILE *f, const char *what, const char *path, char *err, size_t errlen);

#endif
