/* `memtrace --addr2line ELF ADDR...`: memtrace's own symbolizer with the
 * output of `addr2line -f -e ELF ADDR...`, so it can be checked against
 * binutils and elfutils on any file. */
#ifndef MT_SYMBOLS_ADDR2LINE_H
#define MT_SYMBOLS_ADDR2LINE_H

#include <stdbool.h>

#include "target/files/provider.h"

/* argv[0] is the ELF file, the rest are link-time addresses in hex (with or
 * without 0x); with no addresses they are read from stdin, one per line.
 * For each prints the function name (or ??) and file:line (or ??:0).  loc
 * finds separate debug files (may be NULL: then only the file itself).
 * flags: ADDR2LINE_INLINES, as addr2line -i -f: after the innermost
 * function, each function it was inlined into with the file:line of the
 * inlined call; ADDR2LINE_ADDRESSES, as addr2line -a: the address first
 * ("0x" and 16 hex digits).  Returns the process exit status. */
#define ADDR2LINE_INLINES 1
#define ADDR2LINE_ADDRESSES 2
int addr2line_main(int argc, char **argv, struct file_locator *loc, unsigned flags);

#endif
