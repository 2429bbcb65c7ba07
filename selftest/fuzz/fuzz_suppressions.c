/* libFuzzer harness for the leak suppression parser and matcher.  Build from
 * the repo root with clang -fsanitize=fuzzer,address,undefined -std=gnu11
 * -I. -D_GNU_SOURCE this file target/leak/suppress.c shared/xalloc.c; run it
 * on selftest/fuzz/seeds/suppressions.
 * The whole input is parsed as a suppressions file; then it is cut at its
 * first NUL-free split point into a pattern and a name for the matcher, and
 * every parsed pattern is matched against names that look like frames. */
#include "target/leak/suppress.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    struct suppressions *s = suppressions_parse((const char *)data, size, "fuzz", err, sizeof(err));
    if (s) {
        static const char *const names[] = {
            "main", "leak_list", "/usr/lib/x86_64-linux-gnu/libc.so.6", "./malloc/malloc.c",
            "std::vector<int, std::allocator<int> >::push_back(int const&)", "", NULL};
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
            suppressions_match(s, names[i]);
        for (size_t i = 0; i < suppressions_count(s); i++) {
            unsigned long hits;
            if (!suppressions_pattern(s, i, &hits))
                abort();
        }
        suppressions_free(s);
    } else if (!err[0] || strchr(err, '\n')) {
        abort(); /* a failure must say why, on one line */
    }
    if (size) {
        size_t cut = data[0] % size;
        char *pattern = malloc(cut + 1), *name = malloc(size - cut + 1);
        memcpy(pattern, data, cut);
        pattern[cut] = '\0';
        memcpy(name, data + cut, size - cut);
        name[size - cut] = '\0';
        suppress_pattern_match(pattern, name);
        free(pattern);
        free(name);
    }
    return 0;
}
