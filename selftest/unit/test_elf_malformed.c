/* Hostile ELF input: the fuzz target's full exercise (sections,
 * decompression, notes, every symbol route, lookups, exports) over every
 * truncation of small ELF files and over random byte changes, plus crafted
 * lies in the headers.  Run by `make check` under ASan and UBSan, so any
 * out-of-bounds read or overflow fails here.  Truncations below the end of
 * the header tables must be refused with a message. */
#include <gelf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libelf.h>
#include <time.h>

#include "selftest/fuzz/fuzz_elf.c"
#include "selftest/unit/test_elf_util.h"

static const char *const seeds[] = {
    "ppc64-be.so", "ppc32-be-zlib.so", "mips32-be-relocatable", "x64-lib-no-shdr.so", "x64-lib-sysv-no-shdr.so",
    "x64-zlib-gnu", "x64-zlib", "i386-zlib", "x64-stripped-debuglink", "x64-lib.so", "i386-debug",
};

static uint64_t rnd_state = 0x243f6a8885a308d3ull;
static uint64_t rnd(void)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return rnd_state;
}

/* Where the header tables end, according to libelf. */
static uint64_t tables_end(const char *path)
{
    int fd = open(path, O_RDONLY);
    Elf *e = elf_begin(fd, ELF_C_READ, NULL);
    GElf_Ehdr eh;
    uint64_t end = 0;
    if (e && gelf_getehdr(e, &eh)) {
        size_t shnum = 0;
        elf_getshdrnum(e, &shnum);
        end = eh.e_ehsize;
        if (eh.e_phoff && eh.e_phoff + (uint64_t)eh.e_phnum * eh.e_phentsize > end)
            end = eh.e_phoff + (uint64_t)eh.e_phnum * eh.e_phentsize;
        if (eh.e_shoff && eh.e_shoff + (uint64_t)shnum * eh.e_shentsize > end)
            end = eh.e_shoff + (uint64_t)shnum * eh.e_shentsize;
    }
    if (e)
        elf_end(e);
    close(fd);
    return end;
}

static bool opens(const uint8_t *data, size_t size, char *err, size_t errlen)
{
    uint8_t *copy = malloc(size ? size : 1);
    memcpy(copy, data, size);
    err[0] = 0;
    struct elf_file *f = elf_file_open(byte_source_open_memory(copy, size, "trunc"), err, errlen);
    bool ok = f != NULL;
    elf_file_close(f);
    free(copy);
    return ok;
}

static void test_truncations(const char *path, const char *name)
{
    size_t size;
    uint8_t *data = read_whole(path, &size);
    CHECK(data != NULL, "cannot read seed %s", path);
    if (!data)
        return;
    uint64_t need = tables_end(path);
    CHECK(need > 0 && need <= size, "%s: libelf cannot read the seed", name);
    /* Every length for small files; a stride (still thousands) for bigger. */
    size_t stride = size <= 16384 ? 1 : 3;
    for (size_t len = 0; len <= size; len += (len < 512 || len + 64 > need) && len < need + 64 ? 1 : stride) {
        LLVMFuzzerTestOneInput(data, len);
        if (len < need) {
            char err[256];
            bool ok = opens(data, len, err, sizeof(err));
            if (ok) {
                CHECK(!ok, "%s truncated to %zu bytes (tables end at %" PRIu64 ") opened", name, len, need);
                break;
            }
            CHECK(err[0] != 0, "%s truncated to %zu: no error message", name, len);
        }
    }
    char err[256];
    CHECK(opens(data, size, err, sizeof(err)), "%s: whole seed does not open: %s", name, err);
    free(data);
}

static void test_byte_changes(const char *path, const char *name, int rounds)
{
    size_t size;
    uint8_t *data = read_whole(path, &size);
    if (!data || size < 64)
        return;
    uint64_t need = tables_end(path);
    uint8_t *mut = malloc(size);
    static const uint8_t specials[] = {0x00, 0xff, 0x80, 0x7f, 0x01, 0xfe, 0x40, 0x10};
    for (int r = 0; r < rounds; r++) {
        memcpy(mut, data, size);
        int changes = 1 + (int)(rnd() % 8);
        for (int k = 0; k < changes; k++) {
            /* Half of the changes hit the headers and tables, where a wrong
             * byte is a wrong count, offset or size. */
            size_t pos;
            uint64_t where = rnd() % 4;
            if (where == 0)
                pos = rnd() % 64;
            else if (where == 1 && need > 64)
                pos = need - 1 - rnd() % (need < 4096 ? need : 4096);
            else
                pos = rnd() % size;
            mut[pos] = rnd() % 2 ? specials[rnd() % sizeof(specials)] : (uint8_t)rnd();
        }
        LLVMFuzzerTestOneInput(mut, size);
    }
    free(mut);
    free(data);
    (void)name;
}

/* A file whose bytes are patched at one offset. */
static struct elf_file *open_patched(const uint8_t *data, size_t size, uint8_t **copy)
{
    *copy = malloc(size);
    memcpy(*copy, data, size);
    char err[256];
    return elf_file_open(byte_source_open_memory(*copy, size, "patched"), err, sizeof(err));
}

static void test_compressed_lies(const char *seed_dir)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/x64-zlib", seed_dir);
    size_t size;
    uint8_t *data = read_whole(path, &size);
    CHECK(data != NULL, "cannot read %s", path);
    if (!data)
        return;
    uint8_t *copy;
    struct elf_file *f = open_patched(data, size, &copy);
    const struct elf_section *s = f ? elf_file_find_section(f, ".debug_info") : NULL;
    CHECK(s && (s->flags & SHF_COMPRESSED), "x64-zlib: no compressed .debug_info");
    if (!s) {
        elf_file_close(f);
        free(copy);
        free(data);
        return;
    }
    uint64_t off = s->offset;
    Elf64_Chdr ch;
    memcpy(&ch, data + off, sizeof(ch));
    elf_file_close(f);
    free(copy);

    struct {
        uint64_t size;
        uint32_t type;
        int want;
        const char *what;
    } lies[] = {
        {ch.ch_size, ch.ch_type, 0, "the truth"},
        {(512ull << 20) + 1, ELFCOMPRESS_ZLIB, -EFBIG, "more than 512 MiB"},
        {ch.ch_size * 5000, ELFCOMPRESS_ZLIB, -EINVAL, "more than deflate can expand to"},
        {ch.ch_size - 1, ELFCOMPRESS_ZLIB, -EINVAL, "one byte short"},
        {ch.ch_size + 1, ELFCOMPRESS_ZLIB, -EINVAL, "one byte long"},
        {ch.ch_size, 2 /* ELFCOMPRESS_ZSTD */, -ENOTSUP, "zstd"},
    };
    for (size_t i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
        Elf64_Chdr lie = ch;
        lie.ch_size = lies[i].size;
        lie.ch_type = lies[i].type;
        memcpy(data + off, &lie, sizeof(lie));
        f = open_patched(data, size, &copy);
        s = f ? elf_file_find_section(f, ".debug_info") : NULL;
        struct elf_blob b;
        int rc = s ? elf_file_load_section(f, s, &b) : -1;
        CHECK(rc == lies[i].want, "compressed section claiming %s: got %d, want %d", lies[i].what, rc,
              lies[i].want);
        if (rc == 0)
            elf_blob_free(&b);
        elf_file_close(f);
        free(copy);
    }
    memcpy(data + off, &ch, sizeof(ch));
    /* A corrupt deflate stream (a byte flipped in the middle). */
    data[off + sizeof(ch) + (s ? 40 : 0)] ^= 0x55;
    f = open_patched(data, size, &copy);
    s = f ? elf_file_find_section(f, ".debug_info") : NULL;
    struct elf_blob b;
    int rc = s ? elf_file_load_section(f, s, &b) : -1;
    CHECK(rc < 0, "corrupt deflate stream accepted");
    if (rc == 0)
        elf_blob_free(&b);
    elf_file_close(f);
    free(copy);
    free(data);
}

static void test_header_lies(const char *seed_dir)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/x64-lib.so", seed_dir);
    size_t size;
    uint8_t *data = read_whole(path, &size);
    CHECK(data != NULL, "cannot read %s", path);
    if (!data)
        return;
    Elf64_Ehdr orig;
    memcpy(&orig, data, sizeof(orig));
    char err[256];
    Elf64_Ehdr h;
#define LIE(stmt, what)                                                          \
    do {                                                                         \
        h = orig;                                                                \
        stmt;                                                                    \
        memcpy(data, &h, sizeof(h));                                             \
        CHECK(!opens(data, size, err, sizeof(err)) && err[0], "%s accepted", what); \
    } while (0)
    LIE(h.e_shentsize = 63, "e_shentsize 63");
    LIE(h.e_phentsize = 57, "e_phentsize 57");
    LIE(h.e_shoff = size - 10, "section headers past the end");
    LIE(h.e_phoff = UINT64_MAX - 8, "program headers at 2^64-8");
    LIE(h.e_shstrndx = h.e_shnum, "e_shstrndx out of range");
    LIE(h.e_phnum = PN_XNUM; h.e_shoff = 0, "PN_XNUM without section headers");
    LIE(h.e_ident[EI_CLASS] = 3, "ELF class 3");
    LIE(h.e_ident[EI_DATA] = 0, "no byte order");
    LIE(h.e_ident[EI_VERSION] = 2, "EI_VERSION 2");
    LIE(h.e_ident[1] = 'X', "bad magic");
    /* Section 0 claims 2^32-1 sections. */
    h = orig;
    h.e_shnum = 0;
    memcpy(data, &h, sizeof(h));
    Elf64_Shdr s0;
    memcpy(&s0, data + h.e_shoff, sizeof(s0));
    Elf64_Shdr big = s0;
    big.sh_size = 0xffffffffu;
    memcpy(data + h.e_shoff, &big, sizeof(big));
    CHECK(!opens(data, size, err, sizeof(err)), "2^32-1 sections accepted");
    big.sh_size = orig.e_shnum; /* the truth, extended form */
    memcpy(data + h.e_shoff, &big, sizeof(big));
    CHECK(opens(data, size, err, sizeof(err)), "extended e_shnum refused: %s", err);
    memcpy(data + h.e_shoff, &s0, sizeof(s0));
    memcpy(data, &orig, sizeof(orig));
#undef LIE
    free(data);
}

int main(void)
{
    elf_version(EV_CURRENT);
    const char *root = getenv("MT_ROOT");
    char seed_dir[4096];
    snprintf(seed_dir, sizeof(seed_dir), "%s/selftest/fuzz/seeds/elf", root && root[0] ? root : ".");
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
        char path[4200];
        snprintf(path, sizeof(path), "%s/%s", seed_dir, seeds[i]);
        test_truncations(path, seeds[i]);
        test_byte_changes(path, seeds[i], 1500);
    }
    test_compressed_lies(seed_dir);
    test_header_lies(seed_dir);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("malformed input: %.1f s\n", (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    return test_finish("test_elf_malformed");
}
