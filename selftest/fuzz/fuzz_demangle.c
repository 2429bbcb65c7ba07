/* libFuzzer target for the C++ demangler: memtrace's wrapper (prefix and
 * "@VERSION" handling, the length cap) and libiberty behind it, which
 * run-fuzzers.sh builds from binutils-source with the same instrumentation.
 *
 *   tools/cross-iberty.sh /tmp/ib clang -g -O1 -fsanitize=fuzzer-no-link,address,undefined
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -I. selftest/fuzz/fuzz_demangle.c \
 *       target/symbols/demangle.c shared/xalloc.c /tmp/ib/libiberty.a -o fuzz_demangle
 *   ./fuzz_demangle -max_len=512 selftest/fuzz/seeds/demangle
 *
 * The input is a symbol name (one NUL is added).  Besides the sanitizers:
 * an answer is never empty, never longer than the cap, and keeps the
 * name's "@VERSION" suffix. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "target/symbols/demangle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *name = malloc(size + 1);
    memcpy(name, data, size);
    name[size] = '\0';
    char *out = demangle_cxx(name);
    if (out && (out[0] == '\0' || strlen(out) > 64 * 1024))
        abort();
    const char *at = strchr(name, '@');
    if (out && at && strcmp(out + strlen(out) - strlen(at), at) != 0)
        abort();
    free(out);
    free(name);
    return 0;
}
