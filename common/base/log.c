#include "log.h"

#include <stdarg.h>
#include <stdio.h>

int log_level = LOG_WARN;

void log_msg(int level, const char *fmt, ...)
{
    if (level > log_level)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}
