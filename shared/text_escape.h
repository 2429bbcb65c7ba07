/* Text from outside (a traced program's function, file and module names,
 * its path, the strings of a recording) made safe to show: the one escape
 * every writer applies before its own format's quoting (HTML entities,
 * folded separators, massif's '#', heaptrack's length prefix, pprof's
 * string table; JSON keeps its own \u escapes of the same characters).
 *
 * Control characters (C0, DEL and the C1 range U+0080..U+009F, which
 * terminals obey as ESC [ ... too) and the bytes of ill-formed UTF-8 are
 * written as \xHH, one per byte, so that nothing reaches a terminal or a
 * viewer that moves its cursor, recolours it, rings its bell or rewrites a
 * line, and the result is always valid UTF-8.  Every other byte is kept,
 * backslash included: a name with no such character comes out unchanged
 * (reports of ordinary programs stay byte for byte what they were).  The
 * escape is for reading, not meant to be undone. */
#ifndef MT_SHARED_TEXT_ESCAPE_H
#define MT_SHARED_TEXT_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* True when s is written unchanged (nothing to escape). */
bool text_escape_clean(const char *s);
/* s escaped, to out. */
void text_escape_put(FILE *out, const char *s);
/* s escaped, as a new string (xmalloc'd: the caller frees it). */
char *text_escape_dup(const char *s);
/* s escaped into buf (len > 0), cut at a character boundary if it does
 * not fit; returns buf. */
char *text_escape_buf(char *buf, size_t len, const char *s);

/* Length of the well-formed UTF-8 sequence at s (NUL-terminated), or 0;
 * then *bad is the length of the ill-formed part (Unicode's maximal
 * subpart, as Python's and browsers' decoders replace by one U+FFFD). */
size_t utf8_sequence(const unsigned char *s, size_t *bad);

#endif
