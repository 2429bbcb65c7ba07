/* libFuzzer target for what memtrace-fs parses itself of a debuginfod
 * request (the HTTP framing is libmicrohttpd's): the request path, the
 * Range header, and the section lookup of .../section/NAME in an ELF file.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -I. -D_GNU_SOURCE \
 *       selftest/fuzz/fuzz_http.c -o fuzz_http
 *   ./fuzz_http -max_len=4096 selftest/fuzz/seeds/http
 *
 * Input: one mode byte, then the text (path or Range value; for ranges,
 * 8 bytes of file size come first) or, for mode 2, a section name, a NUL,
 * and an ELF file.  The invariants a caller relies on are checked: a range
 * lies inside the file and is not empty, a parsed build-id has 2..64 bytes,
 * a found section lies inside the file. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* host-fs is not in libmt.a: its two parsers are compiled in here. */
#include "host-fs/elf_build_id.c"
#include "host-fs/http_request.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int memfd = -1;

static void fuzz_target(const char *s)
{
    struct http_target t;
    enum http_kind k = http_parse_target(s, &t);
    if (k == HTTP_DEBUGINFO || k == HTTP_EXECUTABLE || k == HTTP_SOURCE || k == HTTP_SECTION) {
        if (t.build_id_len < 2 || t.build_id_len > HTTP_BUILD_ID_MAX)
            abort();
    }
    if (k == HTTP_SOURCE && (!t.rest || t.rest[0] != '/'))
        abort();
    if (k == HTTP_SECTION && (!t.rest || !t.rest[0] || strchr(t.rest, '/')))
        abort();
}

static void fuzz_range(const uint8_t *data, size_t size)
{
    if (size < 8)
        return;
    uint64_t fsize;
    memcpy(&fsize, data, 8);
    if (data[0] & 1)
        fsize %= 100000; /* small files too, where the edges are */
    char *s = strndup((const char *)data + 8, size - 8);
    uint64_t off = ~0ull, len = ~0ull;
    int r = http_parse_range(s, fsize, &off, &len);
    if (r == HTTP_RANGE_PART && (len == 0 || off >= fsize || len > fsize - off))
        abort();
    free(s);
}

static void fuzz_section(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    if (!nul)
        return;
    size_t elf_len = size - (size_t)(nul + 1 - data);
    if (memfd < 0)
        memfd = memfd_create("fuzz_http", 0);
    if (memfd < 0 || ftruncate(memfd, 0) < 0 ||
        pwrite(memfd, nul + 1, elf_len, 0) != (ssize_t)elf_len)
        return;
    uint64_t off, len;
    uint32_t type;
    if (elf_section_of_fd(memfd, elf_len, (const char *)data, &off, &len, &type) == 0 &&
        type != 8 && (off > elf_len || len > elf_len - off))
        abort();
    uint8_t id[64];
    elf_build_id_of_fd(memfd, elf_len, id, sizeof(id));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t mode = data[0] % 3;
    data++;
    size--;
    if (mode == 0) {
        char *s = strndup((const char *)data, size);
        fuzz_target(s);
        free(s);
    } else if (mode == 1) {
        fuzz_range(data, size);
    } else {
        fuzz_section(data, size);
    }
    return 0;
}
