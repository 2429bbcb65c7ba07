/* libFuzzer target for the C++ demangler.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -I. selftest/fuzz/fuzz_demangle.c \
 *       target/symbols/demangle.c shared/xalloc.c -o fuzz_demangle
 *   ./fuzz_demangle -max_len=512 selftest/fuzz/seeds/demangle
 *
 * The input is a symbol name (one NUL is added).  Besides the sanitizers:
 * an answer is never empty and never longer than the demangler's cap. */
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
    free(out);
    free(name);
    return 0;
}
