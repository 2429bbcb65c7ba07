/* C++ names as c++filt prints them, from c++filt's own demangler: libiberty
 * (Debian's libiberty-dev for the build machine's architecture; for cross
 * and 32-bit builds the same sources from binutils-source, see
 * tools/cross-iberty.sh).  The demangler's files are LGPL-2.0-or-later
 * (cplus-dem.c, rust-demangle.c, d-demangle.c, safe-ctype.c, demangle.h)
 * or GPL-2.0-or-later (cp-demangle.c, with a linking exception): both fit
 * memtrace's GPL-2.0-or-later.
 *
 * What is ours: only names that start like a C++ name are asked about,
 * a "@VERSION" suffix is kept as c++filt keeps it (its '@' ends a word),
 * and answers longer than DEMANGLE_MAX are refused, so that a hostile
 * symbol table cannot make one report line huge. */
#include "target/symbols/demangle.h"

#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "shared/xalloc.h"

#define DEMANGLE_MAX (64 * 1024)

char *demangle_cxx(const char *name)
{
    if (!name || strncmp(name, "_Z", 2) != 0)
        return NULL;
    const char *at = strchr(name, '@');
    char *plain = at ? strndup(name, (size_t)(at - name)) : NULL;
    if (at && !plain)
        return NULL;
    /* c++filt's flags: parameters, ANSI qualifiers, verbose. */
    char *out = cplus_demangle(plain ? plain : name, DMGL_PARAMS | DMGL_ANSI | DMGL_VERBOSE);
    free(plain);
    if (!out)
        return NULL;
    size_t len = strlen(out), suffix = at ? strlen(at) : 0;
    if (len == 0 || len + suffix > DEMANGLE_MAX) {
        free(out);
        return NULL;
    }
    if (suffix) {
        char *joined = xmalloc(len + suffix + 1);
        memcpy(joined, out, len);
        memcpy(joined + len, at, suffix + 1);
        free(out);
        out = joined;
    }
    return out;
}
