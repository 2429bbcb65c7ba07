/* libFuzzer harness for Tab completion (target/console/complete.c): any
 * line typed so far, any split into "before the word" and "the word".
 * Build from the repo root with clang -fsanitize=fuzzer,address,undefined
 * -std=gnu11 -I. -D_GNU_SOURCE, this file and build/libmt.a; run it on
 * selftest/fuzz/seeds/complete.  The first byte chooses where the word
 * being completed starts; every candidate must start with that word. */
#include "target/console/complete.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *want_prefix;

static void add(void *arg, const char *word)
{
    size_t *n = arg;
    (*n)++;
    if (strncmp(word, want_prefix, strlen(want_prefix)) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t len = size - 1;
    char *line = malloc(len + 1);
    if (!line)
        return 0;
    memcpy(line, data + 1, len);
    line[len] = '\0';
    size_t nul = strlen(line);  /* the editor's line is a C string */
    size_t start = nul ? data[0] % (nul + 1) : 0;
    want_prefix = line + start;
    size_t n = 0;
    enum complete_kind k = console_complete(line, start, line + start, add, &n);
    if (k == COMPLETE_FILES && n != 0)
        abort();
    free(line);
    return 0;
}
