/* libFuzzer target for the ELF reader and symbol tables.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -I. selftest/fuzz/fuzz_elf.c \
 *       target/elf/elf_file.c target/elf/elf_compress.c target/symbols/elf_symbols.c \
 *       target/symbols/symtab.c target/symbols/demangle.c target/files/byte_source.c \
 *       target/files/cursor.c shared/xalloc.c -lz -o fuzz_elf
 *   ./fuzz_elf -max_len=65536 selftest/fuzz/seeds/elf
 *
 * The input is an ELF file.  Everything a tracer would do with a mapped
 * object is done: all sections loaded (and decompressed), build-id,
 * debuglink, interpreter, symbol tables by every route, lookups, exports,
 * and the names demangled as a report would print them.
 * selftest/unit/test_elf_malformed.c runs this same function over
 * truncated and bit-flipped files in every `make check`. */
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "target/elf/elf_file.h"
#include "target/files/byte_source.h"
#include "target/symbols/demangle.h"
#include "target/symbols/elf_symbols.h"
#include "target/symbols/symtab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_abort_unless(int cond)
{
    if (!cond)
        abort();
}

static void exercise_symbols(struct elf_file *f)
{
    /* Every raw route, including PT_DYNAMIC when section headers exist. */
    for (int kind = ELF_SYMBOLS_SYMTAB; kind <= ELF_SYMBOLS_DYNAMIC; kind++) {
        struct elf_symbols syms;
        if (elf_symbols_load(f, (enum elf_symbols_kind)kind, &syms) != 0)
            continue;
        for (size_t i = 0; i < syms.count && i < 4096; i++) {
            struct elf_symbol s;
            unsigned index;
            bool hidden;
            const char *vname;
            if (elf_symbols_get(&syms, i, &s))
                fuzz_abort_unless(s.name != NULL);
            elf_symbols_version(&syms, i, &index, &hidden, &vname);
        }
        elf_symbols_free(&syms);
    }
    struct symtab *t = symtab_load(f, f);
    uint64_t prev = 0;
    for (size_t i = 0; i < symtab_count(t); i++) {
        uint64_t addr, size, off;
        const char *name = symtab_entry(t, i, &addr, &size);
        fuzz_abort_unless(name != NULL);
        fuzz_abort_unless(i == 0 || addr > prev); /* sorted, aliases merged */
        prev = addr;
        const char *found = symtab_lookup(t, addr, &off);
        fuzz_abort_unless(found != NULL && off == 0);
        free(demangle_cxx(name));
        if (size > 1)
            symtab_lookup(t, addr + size - 1, &off);
    }
    uint64_t off, v;
    symtab_lookup(t, elf_file_entry(f), &off);
    symtab_free(t);
    symtab_find_export(f, "main", &v);
    symtab_find_export(f, "malloc@@GLIBC_2.2.5", &v);
    symtab_find_local(f, "main", &v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A private copy of exactly size bytes, so reading one byte past the
     * input is caught by ASan. */
    uint8_t *copy = malloc(size ? size : 1);
    if (size)
        memcpy(copy, data, size);
    char err[256];
    struct elf_file *f = elf_file_open(byte_source_open_memory(copy, size, "fuzz"), err, sizeof(err));
    if (!f) {
        fuzz_abort_unless(err[0] != '\0');
        free(copy);
        return 0;
    }
    for (size_t i = 0; i < elf_file_section_count(f); i++) {
        const struct elf_section *s = elf_file_section(f, i);
        fuzz_abort_unless(s && s->name);
        struct elf_blob b;
        if (elf_file_load_section(f, s, &b) == 0) {
            fuzz_abort_unless(b.data != NULL);
            elf_blob_free(&b);
        }
    }
    for (size_t i = 0; i < elf_file_segment_count(f); i++) {
        const struct elf_segment *p = elf_file_segment(f, i);
        uint8_t buf[64];
        elf_file_read_vaddr(f, p->vaddr, buf, sizeof(buf));
    }
    elf_file_find_section(f, ".debug_info");
    elf_file_find_section(f, ".debug_line");
    uint8_t id[ELF_BUILD_ID_MAX];
    fuzz_abort_unless(elf_file_build_id(f, id, sizeof(id)) <= ELF_BUILD_ID_MAX);
    const char *name;
    uint32_t crc;
    if (elf_file_debuglink(f, &name, &crc))
        fuzz_abort_unless(name[0] != '\0');
    const char *alt_path;
    if (elf_file_debugaltlink(f, &alt_path, id, sizeof(id)) > 0)
        fuzz_abort_unless(alt_path[0] != '\0');
    const char *interp = elf_file_interp(f);
    if (interp)
        fuzz_abort_unless(strlen(interp) < size);
    exercise_symbols(f);
    elf_file_close(f);
    free(copy);
    return 0;
}
