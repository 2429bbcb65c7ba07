/* libFuzzer target for the ELF reader and symbol tables.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -I. selftest/fuzz/fuzz_elf.c \
 *       shared/elf/elf_file.c shared/elf/elf_compress.c target/symbols/elf_symbols.c \
 *       target/symbols/symtab.c target/symbols/demangle.c shared/files/byte_source.c \
 *       shared/files/cursor.c shared/xalloc.c -lz -o fuzz_elf
 *   ./fuzz_elf -max_len=65536 selftest/fuzz/seeds/elf
 *
 * The input is an ELF file.  Everything a tracer would do with a mapped
 * object is done: all sections loaded (and decompressed), and read again
 * by range through a section map (chunks, restarts, checkpoints) that
 * must give the same bytes, the DWARF line and function indexes built
 * from those maps and looked up, build-id,
 * debuglink, interpreter, symbol tables by every route, lookups, exports,
 * and the names demangled as a report would print them.
 * selftest/unit/test_elf_malformed.c runs this same function over
 * truncated and bit-flipped files in every `make check`. */
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "target/dwarf/line_object.h"
#include "shared/elf/elf_file.h"
#include "target/elf/elf_section_map.h"
#include "shared/files/byte_source.h"
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

/* The section by range, a budget of two chunks, read backwards in steps
 * that cross chunk boundaries: every step a restart.  Where the section
 * also loaded whole, both must agree byte for byte. */
static void exercise_map(struct elf_file *f, const struct elf_section *s, const struct elf_blob *whole)
{
    struct section_map *m = section_map_open(f, s, 1, NULL);
    if (!m)
        return;
    const uint8_t *bytes = section_map_data(m);
    size_t size = section_map_size(m);
    unsigned steps = 0;
    for (size_t end = size; end > 0 && steps < 64; steps++) {
        size_t lo = end > 5000 ? end - 5000 : 0;
        if (section_map_ensure(m, lo, end - lo) && whole)
            fuzz_abort_unless(whole->size == size && memcmp(bytes + lo, whole->data + lo, end - lo) == 0);
        end = lo;
    }
    fuzz_abort_unless(!section_map_ensure(m, (uint64_t)size + 1, 0));
    section_map_close(m);
}

static void exercise_dwarf(struct elf_file *f)
{
    struct line_object *o = line_object_open(f, true);
    if (!o)
        return;
    for (size_t i = 0; i < elf_file_segment_count(f) && i < 8; i++) {
        const struct elf_segment *p = elf_file_segment(f, i);
        struct line_location loc;
        struct inline_frame frames[8];
        for (uint64_t a = p->vaddr; a < p->vaddr + p->memsz && a < p->vaddr + 4096; a += 61) {
            line_object_lookup(o, a, &loc);
            size_t n = line_object_inline_chain(o, a, 0, frames, 8);
            /* The units indexed on demand: call sites and jumps too. */
            struct inline_tail_call tails[8];
            const char *cand[4];
            size_t k = line_object_call_candidates(o, a, cand, 4);
            fuzz_abort_unless(k <= 4 || k == SIZE_MAX);
            for (size_t j = 0; j < n; j++) {
                char file[256];
                if (frames[j].line_offset != UINT32_MAX)
                    line_object_file_name(o, frames[j].line_offset, frames[j].call_file, file, sizeof(file));
            }
            const char *target = line_object_call_target(o, a, NULL);
            if (n)
                line_object_tail_calls(o, frames[n - 1].name, tails, 8);
            if (target)
                line_object_tail_calls(o, target, tails, 8);
        }
    }
    line_object_close(o);
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
            exercise_map(f, s, &b);
            elf_blob_free(&b);
        } else {
            exercise_map(f, s, NULL);
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
    exercise_dwarf(f);
    elf_file_close(f);
    free(copy);
    return 0;
}
