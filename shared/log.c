#include "shared/log.h"
#include "shared/text_escape.h"

#include <stdarg.h>
#include <stdio.h>

/* Process-wide by nature: there is one stderr and one -q flag. */
static bool log_quiet;
static const char *log_program = "memtrace";

void log_set_quiet(bool quiet) { log_quiet = quiet; }
void log_set_program(const char *name) { log_program = name; }

static void log_line(const char *kind, const char *fmt, va_list ap)
{
    char raw[1024], line[4 * sizeof(raw)];
    vsnprintf(raw, sizeof(raw), fmt, ap); // NOLINT(clang-analyzer-valist.Uninitialized): the callers va_start it
    /* Messages name paths and names a traced program or a peer chose:
     * escaped, so that a line stays one line and leaves the terminal be. */
    text_escape_buf(line, sizeof(line), raw);
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
