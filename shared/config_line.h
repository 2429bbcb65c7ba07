/* The lines of a small configuration text (--suppressions, --alloc-fn
 * @FILE): one at a time, as they are, and then without the blanks around
 * them.  Each parser keeps its own checks (length, NUL bytes) in between. */
#ifndef MT_SHARED_CONFIG_LINE_H
#define MT_SHARED_CONFIG_LINE_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* The next line of text[0, len) from *pos, without its '\n', in
 * line and n; pos moves past it.  false when the text is done. */
static inline bool config_line_next(const char *text, size_t len, size_t *pos, const char **line,
                                    size_t *n)
{
    if (*pos >= len)
        return false;
    const char *nl = memchr(text + *pos, '\n', len - *pos);
    size_t end = nl ? (size_t)(nl - text) : len;
    *line = text + *pos;
    *n = end - *pos;
    *pos = end + 1;
    return true;
}

static inline bool config_line_is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* The line without the blanks at either end. */
static inline void config_line_trim(const char **line, size_t *n)
{
    while (*n && config_line_is_blank(**line)) {
        (*line)++;
        (*n)--;
    }
    while (*n && config_line_is_blank((*line)[*n - 1]))
        (*n)--;
}

#endif
