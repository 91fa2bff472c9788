/* log.h — messages on stderr, filtered by -v / -q. */
#ifndef CRAWL_LOG_H
#define CRAWL_LOG_H

enum { LOG_ERROR = -1, LOG_WARN = 0, LOG_INFO = 1, LOG_DEBUG = 2 };

/* Messages above this level are dropped. -q sets LOG_ERROR, -v LOG_INFO, -vv LOG_DEBUG. */
extern int log_level;

void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...)  log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...)  log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
