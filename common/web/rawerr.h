/* rawerr.h — the one-line exception texts of the raw transport, written by one
 * function so that every crawler on it records failures with identical words. */
#ifndef CRAWL_RAWERR_H
#define CRAWL_RAWERR_H

#include <stddef.h>

/* "<op>: <strerror(errnum)>", e.g. "connect: Connection refused". */
const char *raw_error(char *buf, size_t len, const char *op, int errnum);
/* "timeout: no complete response within <secs> s". */
const char *raw_timeout(char *buf, size_t len, double secs);
/* The text for an https URL given to the raw transport. */
extern const char raw_https_unsupported[];

#endif
