/* recstream.h — --format jsonl written as the crawl goes: each record on disk the
 * moment its URL finishes, so that nothing finished is lost to a crash.
 *
 * Each line (a record, then the summary at the end) is formatted in memory and handed
 * to the kernel by write(2) as a whole, at once: no stdio buffer holds finished
 * records. A process killed at any moment (kill -9, the out-of-memory killer, a
 * crash) leaves every record finished before as a complete line; only a line being
 * written at that instant can be torn, and then it is the last one and does not end
 * in '\n' (a reader drops a last line without its newline). After the power goes,
 * what the file system kept is the kernel's business (no fsync per record).
 *
 * A write that fails (a full disk, a closed pipe) stops the stream: a torn line is
 * never followed by more lines. The failure is reported when the summary is written.
 */
#ifndef CRAWL_RECSTREAM_H
#define CRAWL_RECSTREAM_H

#include <stdbool.h>
#include <stddef.h>

#include "report.h"

typedef struct recstream recstream;

/* Write to fd (not owned: the caller closes it); what and path name it in messages
 * ("--output", "x.jsonl"; "the report to", "stdout"). */
recstream *recstream_new(int fd, const char *what, const char *path);
void recstream_free(recstream *s);

/* One record: one line, written at once. Nothing after a failed write. */
void recstream_record(recstream *s, const fetch_stat *st);
/* Every record from now on names the process that fetched it (report.h:
 * report_write_jsonl_record_by); NULL: none. */
void recstream_set_fetched_by(recstream *s, const char *name);
/* Records written so far (whole lines handed to the kernel). */
size_t recstream_count(const recstream *s);
/* Where the last line written ends in the file (the file's offset when the stream
 * started, if none yet); -1 when the file has no offsets (a pipe, a terminal). */
long long recstream_end(const recstream *s);
/* Whether a write failed; if so, "writing <what> '<path>' failed: <reason>" in err. */
bool recstream_failed(const recstream *s, char *err, size_t errlen);

/* The summary line ({"summary": {...}}, done: the records of the crawl). Returns 0, or
 * -1 with "writing <what> '<path>' failed: <reason>" in err when this or any earlier
 * write failed. */
int recstream_summary(recstream *s, size_t done, const report_summary *sum, char *err,
                      size_t errlen);

/* Write len bytes at p to fd, going on after a partial write or EINTR. 0, or -1 with
 * errno set. */
int write_all(int fd, const void *p, size_t len);

#endif
