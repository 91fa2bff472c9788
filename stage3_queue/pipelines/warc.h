/* warc.h — WARC/1.1 archives (ISO 28500), an item pipeline stage: --warc FILE, with
 * --cdx FILE for a CDXJ index (docs/warc.md).
 *
 * The file starts with a warcinfo record. Then, per response the crawl received (a
 * page, a redirect, an error status; not a network failure, which has no response),
 * a request record (the request head as sent) and a response record
 * (application/http;msgtype=response) whose block is the response as it came over the
 * wire: status line, headers and body, chunk framing and compression kept. A response
 * whose payload is identical to one already archived in this crawl (same
 * WARC-Payload-Digest, payload not empty) becomes a revisit record (profile
 * identical-payload-digest) holding only the head; so does a 304 that answered
 * --recrawl's conditional request (response.not_modified: profile server-not-modified,
 * referring to the earlier capture's URI and date). FILE ending in ".gz": each record
 * is its own gzip member, so a reader can seek to any record. The engine's own
 * downloads of robots.txt are archived the same way (process_download).
 *
 * --resume appends to FILE (and rewrites the --cdx index with every record, earlier
 * runs' included), after cutting a record a killed run left torn; a crawl that does
 * not resume never writes over an archive that holds data (the command line refuses
 * it). --warc-max-size BYTES: FILE-00000.warc.gz, FILE-00001.warc.gz, ..., each
 * beginning with a warcinfo record.
 *
 * Records are built on the loop thread and written by the background writer (writer.h)
 * through the thread pool, one write at a time, as the store's batches are; process_item
 * waits only when WARC_MAX_PENDING bytes are already waiting for the disk.
 */
#ifndef CRAWL_WARC_H
#define CRAWL_WARC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine.h"

/* What the archive is, from the command line (settings.h): copied by warc_pipeline. */
typedef struct warc_config {
    const char *path;     /* --warc FILE as given (rotated: the files' names derive from it) */
    const char *cdx_path; /* --cdx FILE: a CDXJ index (NULL: none) */
    long long max_size;   /* --warc-max-size BYTES: rotate past it (0: one file) */
    bool resume;          /* --resume: go on with the archive (cut a torn record first) */
    bool ignore_robots;   /* --ignore-robots: said in the warcinfo record */
    const char *state;    /* --state FILE.db, with resume: the fetches counted done */
} warc_config;

/* The archive stage. */
item_pipeline warc_pipeline(const warc_config *cfg);

/* The archive as the command line gave it (for the WARC stage and --state's reading). */
struct settings;
warc_config warc_config_of(const struct settings *s);

/* --warc-max-size: the name of file n of the archive base ("a.warc.gz", 3 ->
 * "a-00003.warc.gz"; ".warc", ".gz" and other names alike, "a" -> "a-00003").
 * malloc'd. */
char *warc_file_name(const char *base, unsigned n);

/* Bytes of records waiting for the writer past which process_item waits. */
enum { WARC_MAX_PENDING = 8 << 20 };

/* The digest WARC writes: "sha1:" and the base32 (RFC 4648) of the SHA-1 of the bytes,
 * 32 characters: out needs 38 bytes. */
void warc_sha1_base32(const void *data, size_t len, char out[38]);

/* The SURT form a CDXJ index sorts by: "http://www.Example.com:8080/a?b" ->
 * "com,example:8080)/a?b" (scheme and a leading "www." dropped, host reversed, lower case).
 * malloc'd. */
char *warc_surt(const char *url);

/* --resume with --state: fn(ctx, uri) for the target URI of each whole response and
 * revisit record of the archive cfg names (every file, with --warc-max-size), before the
 * crawl — what an earlier run archived. A missing file holds none. 0, or -1 with one
 * line in err. */
int warc_archived(const warc_config *cfg, void (*fn)(void *ctx, const char *uri), void *ctx,
                  char *err, size_t errlen);

/* One line of the CDXJ index, in the fields and form of pywb and warcio's cdx-index:
 * the record of url at offset (length bytes, in the file named filename); digest with
 * or without "sha1:". malloc'd, ending in '\n'. */
char *warc_cdx_line(const char *url, const char *stamp, const char *mime, int status,
                    const char *digest, uint64_t length, uint64_t offset, const char *filename);

#endif
