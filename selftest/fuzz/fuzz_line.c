/* libFuzzer target for the DWARF line-table reader, the CU DIE reader and
 * the inlined-function index.  Input: either a bare .debug_line section, or
 * "MTLS" + five 16-bit little-endian lengths (.debug_info, .debug_abbrev,
 * .debug_line_str, .debug_str, .debug_str_offsets), or "MTL8" + eight
 * (those, then .debug_addr, .debug_ranges, .debug_rnglists); the sections
 * in that order; then .debug_line.  Runs both index builds, lookups and a
 * raw walk of every line program.
 *
 *   clang -g -fsanitize=fuzzer,address,undefined -I. selftest/fuzz/fuzz_line.c \
 *     target/dwarf/{cursor,dwarf_sections,info_form,info_cu,info_abbrev,info_ranges,info_inline,info_inline_ranges,info_call_sites}.c \
 *     target/dwarf/{line_header,line_program,line_index}.c target/elf/{elf_section_map,elf_file,elf_compress}.c \
 *     shared/files/byte_source.c shared/{xalloc,log,text_escape,intern}.c -lz
 *   ./a.out -max_len=65536 selftest/fuzz/seeds/line
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "target/dwarf/info_cu.h"
#include "target/dwarf/info_inline.h"
#include "target/dwarf/line_header.h"
#include "target/dwarf/line_index.h"
#include "target/dwarf/line_program.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Each section gets its own heap copy so ASan sees reads past its end. */
static struct dwarf_span take(const uint8_t **p, size_t *left, size_t n, void **owned)
{
    struct dwarf_span s = { NULL, 0 };
    if (n > *left)
        n = *left;
    *owned = malloc(n ? n : 1);
    memcpy(*owned, *p, n);
    s.data = *owned;
    s.size = n;
    *p += n;
    *left -= n;
    return s;
}

/* Row addresses seen while walking, to look up afterwards: random probes
 * would almost never land inside a sequence. */
#define PROBES 32
static uint64_t probes[PROBES];
static size_t probe_count;

static void walk_programs(const struct dwarf_sections *secs)
{
    uint64_t off = 0;
    for (int units = 0; off < secs->line.size && units < 64; units++) {
        struct line_header h;
        bool ok = line_header_parse(secs, off, 8, &h);
        if (ok) {
            char path[256];
            for (uint64_t f = 0; f < 4; f++)
                line_header_file_path(secs, &h, f, "/comp", path, sizeof(path));
            struct line_program p;
            struct line_row row;
            line_program_start(&p, secs, &h, h.program_offset);
            unsigned rows = 0;
            while (line_program_next(&p, &row) && rows < 100000) {
                if (rows++ % 97 == 0 && probe_count < PROBES)
                    probes[probe_count++] = row.address;
            }
            uint64_t entry;
            if (line_program_find_defined_file(secs, &h, 1, &entry)) {
                struct cursor c;
                cursor_init(&c, secs->line.data, secs->line.size, secs->big_endian);
                cursor_seek(&c, (size_t)entry);
                line_header_defined_file_path(secs, &h, &c, NULL, path, sizeof(path));
            }
        }
        if (h.end <= off)
            break;
        off = h.end;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct dwarf_sections secs = { .big_endian = size > 0 && (data[size - 1] & 1) };
    void *owned[9] = { 0 };
    const uint8_t *p = data;
    size_t left = size;
    unsigned nsec = 0;
    if (size >= 14 && memcmp(data, "MTLS", 4) == 0)
        nsec = 5;
    else if (size >= 20 && memcmp(data, "MTL8", 4) == 0)
        nsec = 8;
    if (nsec) {
        struct dwarf_span *order[8] = { &secs.info, &secs.abbrev, &secs.line_str, &secs.str,
                                        &secs.str_offsets, &secs.addr, &secs.ranges, &secs.rnglists };
        size_t len[8];
        for (unsigned i = 0; i < nsec; i++)
            len[i] = (size_t)data[4 + 2 * i] | (size_t)data[5 + 2 * i] << 8;
        p += 4 + 2 * nsec;
        left -= 4 + 2 * nsec;
        for (unsigned i = 0; i < nsec; i++)
            *order[i] = take(&p, &left, len[i], &owned[i < 5 ? i : i + 1]);
        secs.big_endian = false;
    }
    secs.line = take(&p, &left, left, &owned[5]);

    for (uint64_t off = 0, n = 0; off < secs.info.size && n < 64; n++) {
        struct info_cu cu;
        info_cu_read(&secs, off, &cu);
        if (cu.next_offset <= off)
            break;
        off = cu.next_offset;
    }
    probe_count = 0;
    walk_programs(&secs);
    bool needs_str;
    line_section_self_contained(&secs, &needs_str);

    struct line_index *idx = line_index_build(&secs);
    struct line_location loc;
    uint64_t probe = 0;
    for (size_t i = 0; i < 8 && i < size; i++)
        probe = probe << 8 | data[size - 1 - i];
    line_index_lookup(idx, probe, &loc);
    line_index_lookup(idx, 0x1000, &loc);
    line_index_lookup(idx, probe & 0xffff, &loc);
    line_index_release_debug_str(idx);
    line_index_lookup(idx, (probe >> 16) & 0xfffff, &loc);
    for (size_t i = 0; i < probe_count; i++) {
        line_index_lookup(idx, probes[i], &loc);
        line_index_lookup(idx, probes[i] + 1, &loc);
    }
    line_index_free(idx);

    struct inline_index *inl = inline_index_build(&secs);
    inline_index_lookup(inl, probe, 0);
    struct inline_frame chain[32];
    struct inline_tail_call tails[8];
    for (size_t i = 0; i < probe_count; i++) {
        uint64_t lowest = probes[i] > 64 ? probes[i] - 64 : 0;
        const char *innermost = inline_index_lookup(inl, probes[i], lowest);
        size_t n = inline_index_chain(inl, probes[i], lowest, chain, 32);
        /* A chain never claims more frames than it has room for, ends
         * with a subprogram unless cut short, and names every frame. */
        if (n > 32 || (n > 0) != (innermost != NULL))
            abort();
        for (size_t k = 0; k < n; k++)
            if (!chain[k].name || (k + 1 < n && !chain[k].inlined))
                abort();
        bool tail;
        const char *target = inline_index_call_target(inl, probes[i], &tail);
        if (n && inline_index_tail_calls(inl, chain[n - 1].name, tails, 8) > 8)
            abort();
        if (target && inline_index_tail_calls(inl, target, tails, 8) > 8)
            abort();
    }
    inline_index_free(inl);

    for (int i = 0; i < 9; i++)
        free(owned[i]);
    return 0;
}
