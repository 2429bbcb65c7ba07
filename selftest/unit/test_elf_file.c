/* elf_file against libelf (the oracle) on real files: glibc, its libc6-dbg
 * debug file, /bin/ls, an i386 program, big-endian objects made by clang +
 * lld (ppc64, ppc32), files with SHF_COMPRESSED and .zdebug sections, and a
 * copy without section headers. */
#include <gelf.h>
#include <fcntl.h>
#include <libelf.h>
#include <time.h>

#include "selftest/unit/test_elf_util.h"
#include "shared/elf/elf_file.h"
#include "target/elf/elf_section_map.h"
#include "shared/files/byte_source.h"

static const char small_c[] =
    "#include <stdio.h>\n"
    "static int twice(int x) { return 2 * x; }\n"
    "int exported_function(int x) { return twice(x) + 1; }\n"
    "int main(void) { printf(\"%d\\n\", exported_function(3)); return 0; }\n";

static const char lib_c[] =
    "int lib_add(int a, int b) { return a + b; }\n"
    "static int hidden_mul(int a, int b) { return a * b; }\n"
    "int lib_mul(int a, int b) { return hidden_mul(a, b); }\n";

struct oracle {
    int fd;
    Elf *elf;
};

static bool oracle_open(const char *path, struct oracle *o)
{
    o->fd = open(path, O_RDONLY);
    if (o->fd < 0)
        return false;
    o->elf = elf_begin(o->fd, ELF_C_READ, NULL);
    return o->elf != NULL;
}

static void oracle_close(struct oracle *o)
{
    elf_end(o->elf);
    close(o->fd);
}

/* The NT_GNU_BUILD_ID as libelf's gelf_getnote sees it in a data block. */
static size_t note_build_id(Elf_Data *d, uint8_t *id, size_t max)
{
    size_t off = 0, name_off, desc_off;
    GElf_Nhdr nh;
    while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
        if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
            memcmp((char *)d->d_buf + name_off, "GNU", 4) == 0) {
            size_t n = nh.n_descsz < max ? nh.n_descsz : max;
            memcpy(id, (char *)d->d_buf + desc_off, n);
            return nh.n_descsz;
        }
    }
    return 0;
}

static size_t oracle_build_id(Elf *e, uint8_t *id, size_t max)
{
    size_t phnum = 0;
    elf_getphdrnum(e, &phnum);
    for (size_t i = 0; i < phnum; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_NOTE) {
            Elf_Data *d = elf_getdata_rawchunk(e, (int64_t)ph.p_offset, ph.p_filesz,
                                               ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
            size_t n = note_build_id(d, id, max);
            if (n)
                return n;
        }
    }
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE && !(sh.sh_flags & SHF_COMPRESSED)) {
            size_t n = note_build_id(elf_getdata(scn, NULL), id, max);
            if (n)
                return n;
        }
    }
    return 0;
}

static const char *oracle_interp(Elf *e)
{
    size_t phnum = 0;
    elf_getphdrnum(e, &phnum);
    for (size_t i = 0; i < phnum; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_INTERP) {
            Elf_Data *d = elf_getdata_rawchunk(e, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_BYTE);
            if (d && d->d_size > 0 && memchr(d->d_buf, 0, d->d_size))
                return d->d_buf;
        }
    }
    return NULL;
}

static void compare_headers(const char *label, struct elf_file *f, Elf *e)
{
    GElf_Ehdr eh;
    CHECK(gelf_getehdr(e, &eh) != NULL, "%s: libelf cannot read the header", label);
    CHECK(elf_file_class(f) == (eh.e_ident[EI_CLASS] == ELFCLASS64 ? 64u : 32u), "%s: class", label);
    CHECK(elf_file_big_endian(f) == (eh.e_ident[EI_DATA] == ELFDATA2MSB), "%s: byte order", label);
    CHECK(elf_file_machine(f) == eh.e_machine, "%s: machine %u vs %u", label, elf_file_machine(f), eh.e_machine);
    CHECK(elf_file_type(f) == eh.e_type, "%s: type", label);
    CHECK(elf_file_entry(f) == eh.e_entry, "%s: entry", label);

    size_t phnum = 0;
    CHECK(elf_getphdrnum(e, &phnum) == 0, "%s: libelf phnum", label);
    CHECK(elf_file_segment_count(f) == phnum, "%s: %zu segments, libelf %zu", label,
          elf_file_segment_count(f), phnum);
    for (size_t i = 0; i < phnum && i < elf_file_segment_count(f); i++) {
        GElf_Phdr ph;
        gelf_getphdr(e, (int)i, &ph);
        const struct elf_segment *s = elf_file_segment(f, i);
        CHECK(s->type == ph.p_type && s->flags == ph.p_flags && s->offset == ph.p_offset &&
                  s->vaddr == ph.p_vaddr && s->filesz == ph.p_filesz && s->memsz == ph.p_memsz &&
                  s->align == ph.p_align,
              "%s: segment %zu differs", label, i);
    }
}

/* The section read by range (elf_section_map) with a budget of two chunks:
 * a backwards sweep (each chunk a restart, from the start or a checkpoint)
 * and reads at pseudo-random offsets, each compared with libelf's bytes. */
static void compare_section_map(const char *label, struct elf_file *f, const struct elf_section *s,
                                const uint8_t *want, size_t size)
{
    int rc;
    struct section_map *m = section_map_open(f, s, 1, &rc);
    CHECK(m != NULL, "%s %s: section_map_open: %s", label, s->name, strerror(-rc));
    if (!m)
        return;
    CHECK(section_map_size(m) == size, "%s %s: map of %zu bytes, libelf %zu", label, s->name,
          section_map_size(m), size);
    const uint8_t *data = section_map_data(m);
    const size_t step = 7000; /* not a chunk multiple: ranges cross chunks */
    if (size <= 2u * 1024 * 1024) {
        for (size_t end = size; end > 0;) {
            size_t lo = end > step ? end - step : 0;
            bool ok = section_map_ensure(m, lo, end - lo);
            CHECK(ok && memcmp(data + lo, want + lo, end - lo) == 0, "%s %s: bytes [%zu, %zu) differ (sweep)",
                  label, s->name, lo, end);
            if (!ok || memcmp(data + lo, want + lo, end - lo) != 0)
                break;
            end = lo;
        }
    }
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < 64 && size > 0; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t lo = (size_t)(x % size), len = (size_t)((x >> 32) % 40000) + 1;
        if (len > size - lo)
            len = size - lo;
        bool ok = section_map_ensure(m, lo, len);
        CHECK(ok && memcmp(data + lo, want + lo, len) == 0, "%s %s: bytes [%zu, +%zu) differ", label, s->name, lo,
              len);
    }
    CHECK(!section_map_ensure(m, size, 1) && section_map_ensure(m, size, 0), "%s %s: range past the end",
          label, s->name);
    section_map_close(m);
}

static void compare_section_bytes(const char *label, struct elf_file *f, const struct elf_section *s,
                                  Elf_Scn *scn)
{
    Elf_Data *d;
    if (s->flags & SHF_COMPRESSED) {
        CHECK(elf_compress(scn, 0, 0) >= 0, "%s %s: libelf cannot decompress", label, s->name);
        d = elf_getdata(scn, NULL);
    } else if (strncmp(s->name, ".zdebug", 7) == 0) {
        CHECK(elf_compress_gnu(scn, 0, 0) >= 0, "%s %s: libelf cannot decompress", label, s->name);
        d = elf_getdata(scn, NULL);
    } else {
        d = elf_rawdata(scn, NULL);
    }
    struct elf_blob b;
    int rc = elf_file_load_section(f, s, &b);
    CHECK(rc == 0, "%s %s: load failed: %s", label, s->name, strerror(-rc));
    if (rc == 0 && d) {
        CHECK(b.size == d->d_size, "%s %s: %zu bytes, libelf %zu", label, s->name, b.size, d->d_size);
        CHECK(b.size != d->d_size || b.size == 0 || memcmp(b.data, d->d_buf, b.size) == 0, "%s %s: bytes differ", label,
              s->name);
        if (b.size == d->d_size)
            compare_section_map(label, f, s, d->d_buf, d->d_size);
    }
    /* An allocated section reads the same through its virtual address. */
    if (rc == 0 && (s->flags & SHF_ALLOC) && s->addr != 0 && !(s->flags & SHF_COMPRESSED) &&
        elf_file_type(f) != ET_REL) {
        size_t n = b.size < 4096 ? b.size : 4096;
        uint8_t *buf = malloc(n + 1);
        rc = elf_file_read_vaddr(f, s->addr, buf, n);
        CHECK(rc == 0 && memcmp(buf, b.data, n) == 0, "%s %s: read_vaddr differs (rc %d)", label, s->name, rc);
        free(buf);
    }
    elf_blob_free(&b);
}

static unsigned compare_sections(const char *label, struct elf_file *f, Elf *e)
{
    size_t shnum = 0, shstrndx = 0;
    unsigned compressed = 0;
    CHECK(elf_getshdrnum(e, &shnum) == 0, "%s: libelf shnum", label);
    elf_getshdrstrndx(e, &shstrndx);
    CHECK(elf_file_section_count(f) == shnum, "%s: %zu sections, libelf %zu", label,
          elf_file_section_count(f), shnum);
    for (size_t i = 1; i < shnum && i < elf_file_section_count(f); i++) {
        Elf_Scn *scn = elf_getscn(e, i);
        GElf_Shdr sh;
        gelf_getshdr(scn, &sh);
        const struct elf_section *s = elf_file_section(f, i);
        const char *name = elf_strptr(e, shstrndx, sh.sh_name);
        CHECK(name && strcmp(name, s->name) == 0, "%s: section %zu named %s, libelf %s", label, i, s->name,
              name ? name : "(null)");
        CHECK(s->type == sh.sh_type && s->flags == sh.sh_flags && s->addr == sh.sh_addr &&
                  s->offset == sh.sh_offset && s->size == sh.sh_size && s->entsize == sh.sh_entsize &&
                  s->link == sh.sh_link && s->info == sh.sh_info,
              "%s: section %s differs", label, s->name);
        CHECK(elf_file_section_index(f, s) == i, "%s: index of %s", label, s->name);
        if (s->type == SHT_NOBITS || s->type == SHT_NULL)
            continue;
        if ((s->flags & SHF_COMPRESSED) || strncmp(s->name, ".zdebug", 7) == 0)
            compressed++;
        compare_section_bytes(label, f, s, scn);
    }
    return compressed;
}

/* Compares everything; returns how many compressed sections there were. */
static unsigned compare_file(const char *path, const char *label)
{
    char err[256] = "";
    struct byte_source *src = byte_source_open_file(path, err, sizeof(err));
    CHECK(src != NULL, "%s: %s", label, err);
    if (!src)
        return 0;
    struct elf_file *f = elf_file_open(src, err, sizeof(err));
    CHECK(f != NULL, "%s: elf_file_open: %s", label, err);
    struct oracle o;
    CHECK(oracle_open(path, &o), "%s: libelf cannot open %s", label, path);
    unsigned compressed = 0;
    if (f && o.elf) {
        compare_headers(label, f, o.elf);
        compressed = compare_sections(label, f, o.elf);

        uint8_t a[ELF_BUILD_ID_MAX], b[ELF_BUILD_ID_MAX];
        size_t na = elf_file_build_id(f, a, sizeof(a));
        size_t nb = oracle_build_id(o.elf, b, sizeof(b));
        CHECK(na == nb && memcmp(a, b, na) == 0, "%s: build-id (%zu vs libelf %zu bytes)", label, na, nb);

        const char *interp = elf_file_interp(f), *want = oracle_interp(o.elf);
        CHECK((!interp && !want) || (interp && want && strcmp(interp, want) == 0), "%s: interp %s vs %s",
              label, interp ? interp : "-", want ? want : "-");

        const char *link = NULL;
        uint32_t crc;
        bool has_link = elf_file_debuglink(f, &link, &crc);
        const struct elf_section *ls = elf_file_find_section(f, ".gnu_debuglink");
        CHECK(has_link == (ls != NULL), "%s: debuglink presence", label);
    }
    if (o.elf)
        oracle_close(&o);
    elf_file_close(f);
    return compressed;
}

static void test_no_section_headers(const char *orig, const char *label)
{
    const char *copy = test_path("no-shdr.so");
    CHECK(write_without_section_headers(orig, copy), "%s: cannot write copy", label);
    char err[256] = "";
    struct elf_file *a = elf_file_open(byte_source_open_file(orig, err, sizeof(err)), err, sizeof(err));
    struct elf_file *b = elf_file_open(byte_source_open_file(copy, err, sizeof(err)), err, sizeof(err));
    CHECK(a && b, "%s: open: %s", label, err);
    if (a && b) {
        CHECK(elf_file_section_count(b) == 0, "%s: sections left", label);
        CHECK(elf_file_segment_count(a) == elf_file_segment_count(b), "%s: segments", label);
        uint8_t ia[ELF_BUILD_ID_MAX], ib[ELF_BUILD_ID_MAX];
        size_t na = elf_file_build_id(a, ia, sizeof(ia)), nb = elf_file_build_id(b, ib, sizeof(ib));
        CHECK(na > 0 && na == nb && memcmp(ia, ib, na) == 0, "%s: build-id through PT_NOTE", label);
        CHECK(elf_file_find_section(b, ".text") == NULL, "%s: found a section", label);
        const char *ia_s = elf_file_interp(a), *ib_s = elf_file_interp(b);
        CHECK((!ia_s && !ib_s) || (ia_s && ib_s && !strcmp(ia_s, ib_s)), "%s: interp", label);
    }
    struct oracle o;
    if (b && oracle_open(copy, &o)) {
        compare_headers("no-shdr copy", b, o.elf);
        oracle_close(&o);
    }
    elf_file_close(a);
    elf_file_close(b);
}

/* Opening glibc must cost milliseconds: it happens for every mapped object. */
static void test_open_speed(const char *path)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    const int rounds = 20;
    for (int i = 0; i < rounds; i++) {
        char err[256];
        struct elf_file *f = elf_file_open(byte_source_open_file(path, err, sizeof(err)), err, sizeof(err));
        CHECK(f != NULL, "open %s: %s", path, err);
        elf_file_close(f);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = ((double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6) / rounds;
    printf("elf_file_open(%s): %.3f ms (printed; speed is make bench's)\n", path, ms);
}

static char *find_libc_debug(void)
{
    const char *libc = libc_path();
    struct oracle o;
    if (!libc || !oracle_open(libc, &o))
        return NULL;
    uint8_t id[64];
    size_t n = oracle_build_id(o.elf, id, sizeof(id));
    oracle_close(&o);
    if (n < 2 || n > sizeof(id))
        return NULL;
    static char path[512];
    int len = snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%02x/", id[0]);
    for (size_t i = 1; i < n; i++)
        len += snprintf(path + len, sizeof(path) - (size_t)len, "%02x", id[i]);
    snprintf(path + len, sizeof(path) - (size_t)len, ".debug");
    return access(path, R_OK) == 0 ? path : NULL;
}

int main(void)
{
    elf_version(EV_CURRENT);
    const char *libc = libc_path();
    CHECK(libc != NULL, "no libc.so.6 found");
    if (libc) {
        compare_file(libc, "libc");
        test_no_section_headers(libc, "libc");
        test_open_speed(libc);
    }
    char *dbg = find_libc_debug();
    CHECK(dbg != NULL, "libc6-dbg debug file for libc not found (apt-get install libc6-dbg)");
    if (dbg)
        compare_file(dbg, "libc debug file");
    compare_file("/bin/ls", "/bin/ls");

    char *src = strdup(test_path("small.c")), *lib = strdup(test_path("lib.c"));
    CHECK(write_text(src, small_c) && write_text(lib, lib_c), "cannot write sources");
    struct {
        const char *name, *cmd;
        bool compressed;
    } builds[] = {
        {"x64", "gcc -g -O1 -o %s %s", false},
        {"i386", "gcc -m32 -g -O1 -o %s %s", false},
        {"x64-zlib", "gcc -g -O1 -Wl,--compress-debug-sections=zlib -o %s %s", true},
        {"ppc64-be.so", "clang --target=powerpc64-linux-gnu -fuse-ld=lld -nostdlib -shared -g -Wl,--build-id -o %s %s",
         false},
        {"ppc32-be.so", "clang --target=powerpc-linux-gnu -fuse-ld=lld -nostdlib -shared -g -Wl,--build-id=sha1 -o %s %s",
         false},
        {"ppc64-be-zlib.so",
         "clang --target=powerpc64-linux-gnu -fuse-ld=lld -nostdlib -shared -g -Wl,--build-id "
         "-Wl,--compress-debug-sections=zlib -o %s %s",
         true},
        {"mips32-be.o", "clang --target=mips-linux-gnu -g -c -o %s %s", false},
    };
    bool have_lld = have_tool("ld.lld");
    for (size_t i = 0; i < sizeof(builds) / sizeof(builds[0]); i++) {
        if (strstr(builds[i].cmd, "lld") && !have_lld)
            continue;
        const char *out = test_path(builds[i].name);
        const char *input = strstr(builds[i].name, ".so") ? lib : src;
        char cmd[1024];
        snprintf(cmd, sizeof(cmd), builds[i].cmd, out, input);
        bool built = run("%s", cmd);
        CHECK(built, "cannot build %s", builds[i].name);
        if (!built)
            continue;
        unsigned nz = compare_file(out, builds[i].name);
        CHECK(!builds[i].compressed || nz > 0, "%s: no compressed section seen", builds[i].name);
    }
    /* objcopy's two compression formats, on both classes. */
    const char *conversions[][3] = {
        {"x64", "x64-objcopy-zlib", "zlib"},
        {"x64", "x64-zlib-gnu", "zlib-gnu"},
        {"i386", "i386-zlib", "zlib"},
        {"i386", "i386-zlib-gnu", "zlib-gnu"},
    };
    for (size_t i = 0; i < sizeof(conversions) / sizeof(conversions[0]); i++) {
        const char *out = test_path(conversions[i][1]);
        bool built = run("objcopy --compress-debug-sections=%s %s %s", conversions[i][2],
                         test_path(conversions[i][0]), out);
        CHECK(built, "cannot make %s", conversions[i][1]);
        if (built)
            CHECK(compare_file(out, conversions[i][1]) > 0, "%s: no compressed section seen", conversions[i][1]);
    }
    /* .zdebug_info must be found under its .debug_ name. */
    {
        char err[256];
        struct elf_file *f =
            elf_file_open(byte_source_open_file(test_path("x64-zlib-gnu"), err, sizeof(err)), err, sizeof(err));
        CHECK(f && elf_file_find_section(f, ".debug_info") &&
                  !strcmp(elf_file_find_section(f, ".debug_info")->name, ".zdebug_info"),
              "zlib-gnu: .debug_info does not find .zdebug_info");
        elf_file_close(f);
    }
    /* More than 65279 sections: e_shnum is 0 and e_shstrndx SHN_XINDEX, the
     * real values live in section 0. */
    const char *many = test_path("many-sections.o");
    bool built = run("awk 'BEGIN { for (i = 0; i < 65400; i++) printf \".section .s%%d,\\\"a\\\"\\n.byte %%d\\n\", i, i %% 256 }' "
                     "> %s.s && gcc -c -o %s %s.s", many, many, many);
    CHECK(built, "cannot assemble a file with 65400 sections");
    if (built) {
        compare_file(many, "65400 sections");
        char err[256];
        struct elf_file *f = elf_file_open(byte_source_open_file(many, err, sizeof(err)), err, sizeof(err));
        CHECK(f && elf_file_section_count(f) > 65400, "extended section count not read");
        const struct elf_section *s = f ? elf_file_find_section(f, ".s65399") : NULL;
        struct elf_blob b = {0};
        CHECK(s && elf_file_load_section(f, s, &b) == 0 && b.size == 1 && b.data[0] == 65399 % 256,
              ".s65399 not found or wrong");
        elf_blob_free(&b);
        elf_file_close(f);
    }
    free(src);
    free(lib);
    return test_finish("test_elf_file");
}
