/* The DWARF sections of one object as memory ranges.  The pointers are not
 * owned: whoever loaded the sections (debug_object, or a test through
 * libelf) keeps them alive for as long as the readers need them. */
#ifndef MT_DWARF_DWARF_SECTIONS_H
#define MT_DWARF_DWARF_SECTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct section_map;

/* data holds size bytes.  With a map (elf/elf_section_map.h) only ranges
 * made resident by dwarf_span_ensure hold the section's bytes; the rest
 * reads as zeros.  Without, all of data is there. */
struct dwarf_span {
    const uint8_t *data;
    size_t size;
    struct section_map *map;
};

/* Makes [off, off + len) of s resident (clamped to the span).  false when
 * off is outside or the bytes cannot be read.  Always true without a map. */
bool dwarf_span_ensure(const struct dwarf_span *s, uint64_t off, uint64_t len);

struct dwarf_sections {
    struct dwarf_span info;
    struct dwarf_span abbrev;
    struct dwarf_span line;
    struct dwarf_span line_str;
    struct dwarf_span str;
    struct dwarf_span str_offsets;
    struct dwarf_span addr;        /* DWARF 5 .debug_addr (addrx forms) */
    struct dwarf_span ranges;      /* DWARF 2-4 .debug_ranges */
    struct dwarf_span rnglists;    /* DWARF 5 .debug_rnglists */
    bool big_endian;
};

/* A NUL-terminated string at off inside span, or NULL when off is outside
 * the span or no NUL follows it there. */
const char *dwarf_span_string(const struct dwarf_span *s, uint64_t off);

/* Entry index of a DWARF 5 offsets table (.debug_str_offsets, .debug_addr,
 * .debug_rnglists): the size-byte value at base + index * size.  false when
 * the span is absent or the entry lies outside it. */
bool dwarf_span_entry(const struct dwarf_span *s, bool big_endian, uint64_t base, uint64_t index,
                      unsigned size, uint64_t *out);

#endif
