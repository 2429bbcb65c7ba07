/* shared/intern.c: numbers in first-seen order, one number per key, and
 * keys that stay where they are while the table grows past many chunks
 * (the symbolizer hands the pointers out to every frame it names).  The
 * oracle is a plain array of every key added, searched linearly. */
#include "shared/intern.h"

#include "selftest/unit/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEYS 20000

int main(void)
{
    struct interner t = { 0 };
    static char want[KEYS][64];
    static const char *given[KEYS];
    bool added;

    /* Keys of 1 to ~40 bytes, enough of them for several 64 KiB chunks. */
    for (int i = 0; i < KEYS; i++) {
        snprintf(want[i], sizeof(want[i]), "%s_%d%.*s", i % 3 ? "fn" : "std::vector<int>::push", i, i % 17,
                 "xxxxxxxxxxxxxxxxx");
        uint32_t n = interner_add_string(&t, want[i], &added);
        CHECK(added && n == (uint32_t)i, "key %d got %u (added %d)", i, n, added);
        given[i] = interner_key(&t, n, NULL);
    }
    CHECK(interner_count(&t) == KEYS);
    /* Every pointer handed out still reads its key, and a second add of
     * the same bytes gives the same number and pointer. */
    for (int i = 0; i < KEYS; i++) {
        CHECK(strcmp(given[i], want[i]) == 0, "key %d moved: %s", i, given[i]);
        uint32_t n = interner_add_string(&t, want[i], &added);
        CHECK(!added && n == (uint32_t)i && interner_key(&t, n, NULL) == given[i], "key %d again", i);
    }

    /* Binary keys with NULs, the empty key, and one longer than a chunk. */
    const uint8_t bin[5] = { 0, 1, 0, 2, 0 };
    uint32_t b = interner_add(&t, bin, sizeof(bin), &added);
    size_t len;
    CHECK(added && memcmp(interner_key(&t, b, &len), bin, sizeof(bin)) == 0 && len == sizeof(bin));
    CHECK(interner_add(&t, bin, 3, &added) != b && added, "a prefix is another key");
    uint32_t e = interner_add(&t, "", 0, &added);
    CHECK(added && interner_key(&t, e, &len)[0] == '\0' && len == 0);
    size_t big_len = 200 * 1024;
    char *big = malloc(big_len + 1);
    memset(big, 'b', big_len);
    big[big_len] = '\0';
    uint32_t g = interner_add_string(&t, big, &added);
    const char *gk = interner_key(&t, g, &len);
    CHECK(added && len == big_len && strcmp(gk, big) == 0);
    CHECK(interner_add_pair(&t, 7, 9, &added) == interner_add_pair(&t, 7, 9, &added) && !added);

    /* Sealed: the same keys at the same places, and adding works again. */
    interner_seal(&t);
    for (int i = 0; i < KEYS; i += 97)
        CHECK(interner_key(&t, (uint32_t)i, NULL) == given[i] && strcmp(given[i], want[i]) == 0, "sealed %d", i);
    CHECK(interner_key(&t, g, NULL) == gk);
    CHECK(interner_add_string(&t, want[5], &added) == 5 && !added, "an add after the seal finds old keys");
    CHECK(interner_memory(&t) >= big_len + (size_t)KEYS * 8, "memory counts the chunks");
    free(big);
    interner_free(&t);
    CHECK(interner_count(&t) == 0 && interner_memory(&t) == 0);
    return test_end("test_intern");
}
