/* rawerr.c — see rawerr.h. */
#include "rawerr.h"

#include <stdio.h>
#include <string.h>

const char raw_https_unsupported[] = "https is not supported by the raw transport";

const char *raw_error(char *buf, size_t len, const char *op, int errnum)
{
    snprintf(buf, len, "%s: %s", op, strerror(errnum));
    return buf;
}

const char *raw_timeout(char *buf, size_t len, double secs)
{
    snprintf(buf, len, "timeout: no complete response within %g s", secs);
    return buf;
}
