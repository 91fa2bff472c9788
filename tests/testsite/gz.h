/* gz.h — bodies sent with Content-Encoding: gzip (encoding=gzip in a site file). */
#ifndef TESTSITE_GZ_H
#define TESTSITE_GZ_H

#include <stddef.h>
#include <stdint.h>

#include "gen.h"

/* data[0, len) as a gzip stream (malloc'd, *out_len bytes). */
char *gz_compress(const char *data, size_t len, size_t *out_len);

/* len bytes of a filler (gen_fill) as a gzip stream, made in a few milliseconds
 * whatever len: one block of GZ_BLOCK bytes is compressed once, with a full flush
 * (it decodes alone), and repeated. Zeros compress about 1000 to 1, so
 * fill=nul bytes=1073741824 is a gzip bomb of about 1 MB. */
#define GZ_BLOCK (1u << 20)
char *gz_compress_fill(gen_fill_kind kind, uint64_t len, size_t *out_len);

#endif
