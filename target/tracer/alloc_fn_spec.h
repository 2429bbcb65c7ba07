/* --alloc-fn's words, NAME=KIND[:POSITIONS]: one on the command line, or
 * one a line of an @FILE.  Parsing only: the file is outside input, so
 * every length is checked and every error is one line; intercept.c
 * registers what this returns. */
#ifndef MT_TRACER_ALLOC_FN_SPEC_H
#define MT_TRACER_ALLOC_FN_SPEC_H

#include <stddef.h>

#include "target/tracer/intercept.h"

#define ALLOC_FN_NAME_MAX 255          /* bytes of a symbol name */
#define ALLOC_FN_LINE_MAX 512          /* bytes of a line of an @FILE */
#define ALLOC_FN_FILE_MAX_BYTES 65536
/* The highest argument position (1-based).  The agent records six
 * argument words of every call (on i386 the first six stack words); the
 * breakpoint engine on arm reads r0-r3 only, the arguments in registers. */
#if defined(__arm__)
#define ALLOC_FN_POS_MAX 4
#else
#define ALLOC_FN_POS_MAX 6
#endif

struct alloc_fn_spec {
    char name[ALLOC_FN_NAME_MAX + 1];
    enum intercept_op op;
    /* Where the op's own arguments are, 1-based (malloc: size; calloc: n,
     * size; realloc: ptr, size; free: ptr; aligned: alignment, size); 0:
     * the C function's own place. */
    unsigned char pos[INTERCEPT_POS_MAX];
    unsigned line;                     /* its line in the @FILE; 0 otherwise */
};

/* One word (n bytes at s, no NUL needed) into *out.  0, or -1 with a
 * one-line reason in err (without the word or its place: the caller
 * says where). */
int alloc_fn_spec_parse(const char *s, size_t n, struct alloc_fn_spec *out, char *err,
                        size_t errlen);

/* An @FILE's text (len bytes, named name in errors): one word a line,
 * blanks around it ignored, '#' comments and blank lines skipped.  Up to
 * cap words into out, *n of them.  0, or -1 with "NAME:LINE: reason". */
int alloc_fn_file_parse(const char *text, size_t len, const char *name, struct alloc_fn_spec *out,
                        size_t cap, size_t *n, char *err, size_t errlen);
/* The same, read from path (at most ALLOC_FN_FILE_MAX_BYTES). */
int alloc_fn_file_load(const char *path, struct alloc_fn_spec *out, size_t cap, size_t *n,
                       char *err, size_t errlen);

#endif
