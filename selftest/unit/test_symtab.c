/* symtab against oracles: eu-addr2line -S (elfutils' own symbol lookup) on
 * glibc with its libc6-dbg debug file, /bin/ls (.dynsym only), an i386
 * program and a big-endian ppc64 library; readelf --dyn-syms for exports
 * and versions; nm for static executables.  A copy of glibc without section
 * headers must give the same dynamic symbols through PT_DYNAMIC. */
#include <gelf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libelf.h>
#include <time.h>

#include "selftest/unit/test_elf_util.h"
#include "shared/elf/elf_file.h"
#include "target/symbols/debug_object.h"
#include "target/symbols/symtab.h"

static const char small_c[] =
    "#include <stdio.h>\n"
    "static int twice(int x) { return 2 * x; }\n"
    "int exported_function(int x) { return twice(x) + 1; }\n"
    "__attribute__((weak)) int weak_function(int x) { return x - 1; }\n"
    "int main(void) { printf(\"%d\\n\", exported_function(3) + weak_function(2)); return 0; }\n";

static const char lib_c[] =
    "int lib_add(int a, int b) { return a + b; }\n"
    "static int hidden_mul(int a, int b) { return a * b; }\n"
    "int lib_mul(int a, int b) { return hidden_mul(a, b) + lib_add(a, b); }\n";

static struct elf_file *open_elf(const char *path)
{
    char err[256] = "";
    struct elf_file *f = elf_file_open(byte_source_open_file(path, err, sizeof(err)), err, sizeof(err));
    CHECK(f != NULL, "open %s: %s", path, err);
    return f;
}

/* Deterministic sampling without libc's rand state. */
static uint64_t next_random(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Looks up addresses with both symtab and eu-addr2line -S and compares the
 * names and offsets.  The addresses are starts and middles of a sample of
 * the table's functions, plus random addresses in executable segments. */
static void compare_with_eu_addr2line(const char *path, struct elf_file *obj, const struct symtab *t,
                                      const char *label, size_t want_samples)
{
    size_t n = symtab_count(t);
    CHECK(n > 0, "%s: no symbols", label);
    if (n == 0)
        return;
    const char *addr_file = test_path("addresses");
    FILE *af = fopen(addr_file, "w");
    size_t step = n / want_samples ? n / want_samples : 1;
    size_t cap = 2 * (n / step + 1) + 200;
    uint64_t *addrs = calloc(cap, sizeof(*addrs));
    size_t count = 0;
    for (size_t i = 0; i < n; i += step) {
        uint64_t a, size;
        symtab_entry(t, i, &a, &size);
        addrs[count++] = a;
        if (size > 1)
            addrs[count++] = a + size / 2;
    }
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < elf_file_segment_count(obj) && count < cap; i++) {
        const struct elf_segment *p = elf_file_segment(obj, i);
        if (p->type != PT_LOAD || !(p->flags & PF_X) || p->filesz == 0)
            continue;
        for (int k = 0; k < 100 && count < cap; k++)
            addrs[count++] = p->vaddr + next_random(&seed) % p->filesz;
    }
    for (size_t i = 0; i < count; i++)
        fprintf(af, "0x%" PRIx64 "\n", addrs[i]);
    fclose(af);

    char cmd[4096];
    snprintf(cmd, sizeof(cmd), "eu-addr2line -S -e '%s' < '%s'", path, addr_file);
    FILE *p = popen(cmd, "r");
    CHECK(p != NULL, "%s: cannot run eu-addr2line", label);
    if (!p) {
        free(addrs);
        return;
    }
    char line[4096];
    size_t compared = 0, mismatches = 0;
    for (size_t i = 0; i < count; i++) {
        /* Two lines per address: "sym+0xoff" (or "??") then "file:line". */
        if (!fgets(line, sizeof(line), p))
            break;
        char loc[4096];
        if (!fgets(loc, sizeof(loc), p))
            break;
        line[strcspn(line, "\n")] = 0;
        uint64_t want_off = 0;
        char *plus = strstr(line, "+0x");
        if (plus) {
            want_off = strtoull(plus + 1, NULL, 16);
            *plus = 0;
        }
        /* No symbol: "??" outside the module, "()+0xADDR" inside it. */
        bool want_none = strcmp(line, "??") == 0 || strcmp(line, "()") == 0;
        uint64_t off = 0;
        const char *got = symtab_lookup(t, addrs[i], &off);
        compared++;
        bool same = want_none ? got == NULL : (got && strcmp(got, line) == 0 && off == want_off);
        if (!same) {
            mismatches++;
            if (mismatches <= 10)
                fprintf(stderr, "%s: 0x%" PRIx64 ": symtab %s+0x%" PRIx64 ", eu-addr2line %s+0x%" PRIx64 "\n", label,
                        addrs[i], got ? got : "??", off, line, want_off);
        }
    }
    pclose(p);
    printf("%s: %zu addresses compared with eu-addr2line, %zu differ\n", label, compared, mismatches);
    CHECK(compared == count, "%s: eu-addr2line answered %zu of %zu", label, compared, count);
    CHECK(mismatches == 0, "%s: %zu lookups differ from eu-addr2line", label, mismatches);
    free(addrs);
}

/* Dynamic function symbols as libelf reads .dynsym: (value, name) pairs. */
struct dyn_sym {
    uint64_t value;
    char *name;
};

static size_t libelf_dynamic_functions(const char *path, struct dyn_sym **out)
{
    int fd = open(path, O_RDONLY);
    Elf *e = elf_begin(fd, ELF_C_READ, NULL);
    size_t n = 0, cap = 0;
    *out = NULL;
    Elf_Scn *scn = NULL;
    while (e && (scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
            GElf_Sym s;
            gelf_getsym(d, (int)i, &s);
            int type = GELF_ST_TYPE(s.st_info);
            if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF || s.st_value == 0)
                continue;
            if (n == cap) {
                cap = cap ? cap * 2 : 256;
                *out = realloc(*out, cap * sizeof(**out));
            }
            (*out)[n].value = s.st_value;
            (*out)[n].name = strdup(elf_strptr(e, sh.sh_link, s.st_name));
            n++;
        }
    }
    if (e)
        elf_end(e);
    close(fd);
    return n;
}

/* The dynamic symbols through PT_DYNAMIC (copy has no section headers)
 * must be exactly those of .dynsym in the original. */
static void compare_dynamic_routes(const char *orig_path, const char *copy_path, const char *label)
{
    struct elf_file *orig = open_elf(orig_path), *copy = open_elf(copy_path);
    struct symtab *d = orig ? symtab_load(orig, NULL) : NULL;
    struct symtab *t = copy ? symtab_load(copy, NULL) : NULL;
    CHECK(d && !strcmp(symtab_origin(d), ".dynsym"), "%s: original not read through .dynsym", label);
    CHECK(t && !strcmp(symtab_origin(t), "PT_DYNAMIC"), "%s: copy not read through PT_DYNAMIC", label);
    if (d && t) {
        CHECK(symtab_count(d) > 0, "%s: no dynamic functions", label);
        CHECK(symtab_count(d) == symtab_count(t), "%s: PT_DYNAMIC %zu entries, .dynsym %zu", label,
              symtab_count(t), symtab_count(d));
        for (size_t i = 0; i < symtab_count(d) && i < symtab_count(t); i++) {
            uint64_t a1, a2, s1, s2;
            const char *n1 = symtab_entry(d, i, &a1, &s1), *n2 = symtab_entry(t, i, &a2, &s2);
            if (a1 != a2 || s1 != s2 || strcmp(n1, n2) != 0) {
                CHECK(false, "%s entry %zu: .dynsym %s@0x%" PRIx64 ", PT_DYNAMIC %s@0x%" PRIx64, label, i, n1, a1,
                      n2, a2);
                break;
            }
        }
        uint64_t v1 = 0, v2 = 1;
        CHECK(symtab_find_export(orig, "lib_add", &v1) == symtab_find_export(copy, "lib_add", &v2) &&
                  (strcmp(label, "libc") == 0 || v1 == v2),
              "%s: lib_add export differs", label);
    }
    symtab_free(d);
    symtab_free(t);
    elf_file_close(orig);
    elf_file_close(copy);
}

static void test_pt_dynamic(const char *libc)
{
    const char *copy = test_path("libc-no-shdr.so");
    CHECK(write_without_section_headers(libc, copy), "cannot write %s", copy);
    struct elf_file *stripped = open_elf(copy);
    if (!stripped)
        return;
    struct symtab *t = symtab_load(stripped, NULL);
    CHECK(strcmp(symtab_origin(t), "PT_DYNAMIC") == 0, "no-shdr libc: symbols from %s", symtab_origin(t));

    struct dyn_sym *want;
    size_t nwant = libelf_dynamic_functions(libc, &want);
    CHECK(nwant > 500, "libelf found only %zu dynamic functions in libc", nwant);
    /* Every oracle symbol resolves to itself or an alias at the same place. */
    size_t bad = 0;
    for (size_t i = 0; i < nwant; i++) {
        uint64_t off = 1;
        const char *got = symtab_lookup(t, want[i].value, &off);
        bool ok = got && off == 0;
        if (ok && strcmp(got, want[i].name) != 0) {
            ok = false;
            for (size_t j = 0; j < nwant && !ok; j++)
                ok = want[j].value == want[i].value && strcmp(want[j].name, got) == 0;
        }
        if (!ok && bad++ < 5)
            fprintf(stderr, "PT_DYNAMIC: %s at 0x%" PRIx64 " looked up as %s\n", want[i].name, want[i].value,
                    got ? got : "??");
    }
    CHECK(bad == 0, "PT_DYNAMIC: %zu of %zu dynamic functions not found", bad, nwant);
    for (size_t i = 0; i < nwant; i++)
        free(want[i].name);
    free(want);

    symtab_free(t);
    elf_file_close(stripped);
    compare_dynamic_routes(libc, copy, "libc");
}

/* Every versioned function readelf lists must be found: "name" and
 * "name@@VER" give the default version, "name@VER" a hidden one. */
static void test_exports(const char *path, struct elf_file *f, const char *label)
{
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "readelf --dyn-syms -W '%s'", path);
    FILE *p = popen(cmd, "r");
    CHECK(p != NULL, "cannot run readelf");
    if (!p)
        return;
    char line[1024];
    size_t checked = 0, hidden = 0;
    while (fgets(line, sizeof(line), p)) {
        char value[32], type[32], bind[32], vis[32], ndx[32], name[512];
        unsigned num;
        unsigned long size;
        if (sscanf(line, " %u: %31s %lu %31s %31s %31s %31s %511s", &num, value, &size, type, bind, vis, ndx,
                   name) != 8)
            continue;
        if ((strcmp(type, "FUNC") != 0 && strcmp(type, "IFUNC") != 0) || strcmp(ndx, "UND") == 0 ||
            strcmp(bind, "LOCAL") == 0)
            continue;
        uint64_t want = strtoull(value, NULL, 16), got = 0;
        if (want == 0)
            continue;
        char *at = strchr(name, '@');
        if (!at) {
            CHECK(symtab_find_export(f, name, &got) == 0 && got == want, "%s: %s", label, name);
        } else if (at[1] == '@') {
            CHECK(symtab_find_export(f, name, &got) == 0 && got == want, "%s: %s", label, name);
            *at = 0;
            got = 0;
            CHECK(symtab_find_export(f, name, &got) == 0 && got == want, "%s: %s (default) gives 0x%" PRIx64
                  " not 0x%" PRIx64, label, name, got, want);
        } else {
            hidden++;
            CHECK(symtab_find_export(f, name, &got) == 0 && got == want, "%s: %s", label, name);
        }
        checked++;
    }
    pclose(p);
    printf("%s: %zu exports checked against readelf (%zu hidden versions)\n", label, checked, hidden);
    CHECK(checked > 100, "%s: only %zu exports checked", label, checked);
    uint64_t v;
    CHECK(symtab_find_export(f, "no_such_function_xyz", &v) == -ENOENT, "%s: found a missing name", label);
    CHECK(symtab_find_export(f, "malloc@@GLIBC_0.0", &v) == -ENOENT, "%s: found a missing version", label);
}

static void test_libc(void)
{
    const char *libc = libc_path();
    CHECK(libc != NULL, "no libc");
    if (!libc)
        return;
    struct file_locator loc;
    file_locator_init(&loc);
    file_locator_add(&loc, file_provider_sysroot("/"));
    char err[256] = "";
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct debug_object *o = debug_object_open(&loc, libc, err, sizeof(err));
    CHECK(o != NULL, "debug_object_open(libc): %s", err);
    const struct symtab *t = o ? debug_object_symtab(o) : NULL;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    /* Printed, not judged: speed is make bench's (bench/run-bench.sh,
     * symbolization), never a test's, which a loaded machine would fail. */
    printf("libc + debug file + symbols: %.2f ms\n", ms);
    if (o) {
        CHECK(debug_object_debug_elf(o) != NULL, "libc: libc6-dbg debug file not found by build-id");
        CHECK(strcmp(symtab_origin(t), "debug .symtab") == 0, "libc symbols from %s", symtab_origin(t));
        compare_with_eu_addr2line(libc, debug_object_elf(o), t, "libc", 1500);
        test_exports(libc, debug_object_elf(o), "libc");

        /* Lookups must be cheap: they run for every PC of every report. */
        clock_gettime(CLOCK_MONOTONIC, &t0);
        uint64_t seed = 42, sink = 0;
        for (int i = 0; i < 1000000; i++) {
            uint64_t off;
            sink += symtab_lookup(t, next_random(&seed) % 0x200000, &off) != NULL;
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
        printf("1e6 lookups: %.1f ms (%" PRIu64 " hits)\n", ms, sink);
    }
    debug_object_close(o);
    file_locator_destroy(&loc);

    test_pt_dynamic(libc);
    const char *copy = test_path("libc-no-shdr.so");
    struct elf_file *stripped = open_elf(copy);
    if (stripped) {
        test_exports(libc, stripped, "libc without section headers");
        elf_file_close(stripped);
    }
}

static void test_plain_file(const char *path, const char *label, const char *want_origin)
{
    struct elf_file *f = open_elf(path);
    if (!f)
        return;
    struct symtab *t = symtab_load(f, NULL);
    CHECK(strcmp(symtab_origin(t), want_origin) == 0, "%s: symbols from %s, expected %s", label,
          symtab_origin(t), want_origin);
    compare_with_eu_addr2line(path, f, t, label, 400);
    symtab_free(t);
    elf_file_close(f);
}

/* A static executable exports nothing; its .symtab answers, checked with nm. */
static void test_static(const char *src)
{
    const char *exe = test_path("static");
    if (!run("gcc -static -O1 -g -o %s %s", exe, src)) {
        CHECK(false, "cannot build a static executable (libc.a missing?)");
        return;
    }
    struct elf_file *f = open_elf(exe);
    if (!f)
        return;
    const char *names[] = {"exported_function", "main", "malloc", "twice", "weak_function"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char cmd[1024];
        snprintf(cmd, sizeof(cmd), "nm '%s' | awk '$3 == \"%s\" && ($2 ~ /[TtWi]/) {print $1; exit}'", exe, names[i]);
        FILE *p = popen(cmd, "r");
        char line[128] = "";
        if (p) {
            if (!fgets(line, sizeof(line), p))
                line[0] = 0;
            pclose(p);
        }
        uint64_t got = 0, v;
        int rc = symtab_find_local(f, names[i], &got);
        if (!line[0]) {
            CHECK(rc == -ENOENT, "static: %s found but nm does not list it", names[i]);
            continue;
        }
        uint64_t want = strtoull(line, NULL, 16);
        CHECK(rc == 0 && got == want, "static: %s at 0x%" PRIx64 ", nm says 0x%" PRIx64, names[i], got, want);
        CHECK(symtab_find_export(f, names[i], &v) == -ENOENT, "static: %s is exported?", names[i]);
    }
    elf_file_close(f);
}

int main(void)
{
    elf_version(EV_CURRENT);
    test_libc();
    test_plain_file("/bin/ls", "/bin/ls", ".dynsym");

    char *src = strdup(test_path("small.c")), *lib = strdup(test_path("lib.c"));
    CHECK(write_text(src, small_c) && write_text(lib, lib_c), "cannot write sources");
    if (run("gcc -m32 -g -O1 -o %s %s", test_path("i386"), src))
        test_plain_file(test_path("i386"), "i386", ".symtab");
    else
        CHECK(false, "cannot build the i386 program");
    if (run("gcc -g -O1 -o %s %s", test_path("x64"), src))
        test_plain_file(test_path("x64"), "x64", ".symtab");
    bool have_lld = have_tool("ld.lld"), have_strip = have_tool("llvm-strip");
    if (have_lld) {
        bool built = run("clang --target=powerpc64-linux-gnu -fuse-ld=lld -nostdlib -shared -O1 -o %s %s",
                         test_path("be.so"), lib);
        CHECK(built, "cannot build the big-endian library");
        if (built)
            test_plain_file(test_path("be.so"), "ppc64 big-endian", ".symtab");
    }
    /* PT_DYNAMIC with either hash table, both classes, both byte orders. */
    const struct {
        const char *name, *cmd;
    } libs[] = {
        {"gnu-hash.so", "gcc -shared -fPIC -O1 -Wl,--hash-style=gnu -o %s %s"},
        {"sysv-hash.so", "gcc -shared -fPIC -O1 -Wl,--hash-style=sysv -o %s %s"},
        {"i386-gnu-hash.so", "gcc -m32 -shared -fPIC -O1 -Wl,--hash-style=gnu -o %s %s"},
        {"i386-sysv-hash.so", "gcc -m32 -shared -fPIC -O1 -Wl,--hash-style=sysv -o %s %s"},
        {"ppc64-be-gnu.so", "clang --target=powerpc64-linux-gnu -fuse-ld=lld -nostdlib -shared -O1 "
                            "-Wl,--hash-style=gnu -o %s %s"},
        {"ppc32-be-sysv.so", "clang --target=powerpc-linux-gnu -fuse-ld=lld -nostdlib -shared -O1 "
                             "-Wl,--hash-style=sysv -o %s %s"},
    };
    for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]) && have_strip; i++) {
        if (strstr(libs[i].cmd, "lld") && !have_lld)
            continue;
        char out[4096], copy[4200], cmd[8192];
        snprintf(out, sizeof(out), "%s", test_path(libs[i].name));
        snprintf(copy, sizeof(copy), "%s.no-shdr", out);
        snprintf(cmd, sizeof(cmd), libs[i].cmd, out, lib);
        bool built = run("%s && llvm-strip --strip-all %s", cmd, out); /* leave only .dynsym */
        CHECK(built, "cannot build %s", libs[i].name);
        if (!built)
            continue;
        CHECK(write_without_section_headers(out, copy), "cannot strip %s", libs[i].name);
        compare_dynamic_routes(out, copy, libs[i].name);
    }
    test_static(src);
    free(src);
    free(lib);
    return test_finish("test_symtab");
}
