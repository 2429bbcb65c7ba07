/* Diagnostics of memtrace itself: always on stderr, one line each. */
#ifndef MT_UTIL_LOG_H
#define MT_UTIL_LOG_H

#include <stdbool.h>

/* Set once from the command line (-q); read by mt_info only. */
void log_set_quiet(bool quiet);
void log_set_program(const char *name);

void mt_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void mt_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void mt_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
