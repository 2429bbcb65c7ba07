#include "shared/log.h"

#include <stdarg.h>
#include <stdio.h>

/* Process-wide by nature: there is one stderr and one -q flag. */
static bool log_quiet;
static const char *log_program = "memtrace";

void log_set_quiet(bool quiet) { log_quiet = quiet; }
void log_set_program(const char *name) { log_program = name; }

static void log_line(const char *kind, const char *fmt, va_list ap)
{
    char line[1024];
    vsnprintf(line, sizeof(line), fmt, ap); // NOLINT(clang-analyzer-valist.Uninitialized): the callers va_start it
    if (kind)
        fprintf(stderr, "%s: %s: %s\n", log_program, kind, line);
    else
        fprintf(stderr, "%s: %s\n", log_program, line);
}

void mt_info(const char *fmt, ...)
{
    if (log_quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    log_line(NULL, fmt, ap);
    va_end(ap);
}

void mt_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_line("warning", fmt, ap);
    va_end(ap);
}

void mt_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_line("error", fmt, ap);
    va_end(ap);
}
