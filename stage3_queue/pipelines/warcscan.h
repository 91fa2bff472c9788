/* warcscan.h — reading back a WARC file crawl-queue wrote, for --resume (docs/warc.md):
 * its whole records from the start, and where the first torn one begins.
 *
 * A crawl killed (kill -9, a crash, a power cut) may leave its archive ending inside a
 * record: a gzip member cut short (FILE.gz), or a record whose block or closing
 * "\r\n\r\n" is missing. warcscan walks the records one after the other — for FILE.gz,
 * each gzip member inflated to its end — and calls back with what an index line needs
 * for each whole one; it returns the offset where the whole records end. --resume cuts
 * the file there and appends.
 *
 * Only the head of each record and the head of its HTTP block are kept while
 * scanning (WARCSCAN_KEEP bytes): memory stays small whatever the records hold.
 */
#ifndef CRAWL_WARCSCAN_H
#define CRAWL_WARCSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http_head.h"

/* Bytes of each record read for its fields: the WARC head, and the HTTP head read by
 * the one head parser (http_head.h), at most HTTP_MAX_HEAD bytes. */
enum { WARCSCAN_KEEP = (64 << 10) + HTTP_MAX_HEAD };

/* One whole record: its fields (NUL-terminated, "" when absent), and where it lies in
 * the file (for FILE.gz: its gzip member). */
typedef struct warcscan_rec {
    const char *type, *uri, *date, *id, *payload_digest;
    int status;       /* of an HTTP response block; 0 if none */
    const char *mime; /* its Content-Type's media type, lower case ("" if none) */
    uint64_t offset, length;
} warcscan_rec;

typedef void (*warcscan_fn)(void *ctx, const warcscan_rec *r);

/* The media type of a Content-Type ("text/html; charset=x" -> "text/html", lower
 * case), malloc'd; NULL for NULL. The index's mime, for the writer and the reader. */
char *warc_media_type(const char *ct);

/* Read fd (a regular file) from offset 0: fn(ctx, rec) for each whole record, in
 * order. Returns the offset past the last whole record (the file's size when none is
 * torn), or -1 with one line in err (a read error). */
long long warcscan(int fd, bool gz, warcscan_fn fn, void *ctx, char *err, size_t errlen);

#endif
