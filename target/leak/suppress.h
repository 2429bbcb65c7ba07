/* Leak suppressions in LeakSanitizer's file format, so that existing files
 * work:
 *
 *     # comment
 *     leak:PATTERN
 *
 * One entry per line; blanks around a line are ignored.  A leak is
 * suppressed when PATTERN matches the function, the source file or the
 * module (full path) of any frame of its allocation stack.  PATTERN matches
 * anywhere in the name unless it starts with ^ (at the start) or ends with $
 * (at the end); * matches any run of characters.  Other entry types of the
 * sanitizers' files (race:, called_from_lib:, ...) are errors here, as in
 * LeakSanitizer. */
#ifndef MT_LEAK_SUPPRESS_H
#define MT_LEAK_SUPPRESS_H

#include <stdbool.h>
#include <stddef.h>

struct suppressions;

/* Parses text[0..len) (NUL bytes are errors).  NULL with "NAME:LINE: what"
 * in err on the first bad line. */
struct suppressions *suppressions_parse(const char *text, size_t len, const char *name, char *err,
                                        size_t errlen);
/* Reads and parses a file; NULL with a one-line reason in err. */
struct suppressions *suppressions_load(const char *path, char *err, size_t errlen);
void suppressions_free(struct suppressions *s);
size_t suppressions_count(const struct suppressions *s);

/* Does any pattern match str (NULL or "" never matches)?  On a match,
 * the first matching pattern counts one more use. */
bool suppressions_match(struct suppressions *s, const char *str);
/* Pattern i and how many stacks it suppressed, for the summary. */
const char *suppressions_pattern(const struct suppressions *s, size_t i, unsigned long *hits);

/* One pattern against one name (the rule above). */
bool suppress_pattern_match(const char *pattern, const char *str);

#endif
