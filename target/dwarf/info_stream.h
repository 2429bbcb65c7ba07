/* .debug_info one unit at a time, straight from the ELF file through a
 * section map (elf/elf_section_map.h): plain sections are read by range,
 * compressed ones (SHF_COMPRESSED zlib, or a legacy .zdebug_info) are
 * inflated as the walk goes.  Only the unit being looked at is resident,
 * never the whole section (5.8 MiB for libc), which is what keeps indexing
 * within a small board's budget. */
#ifndef MT_DWARF_INFO_STREAM_H
#define MT_DWARF_INFO_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/elf/elf_file.h"

/* A unit larger than this is refused (corrupt, or not for a small board). */
#define INFO_STREAM_MAX_UNIT (64u * 1024 * 1024)

struct info_stream;

/* NULL when f has no readable .debug_info. */
struct info_stream *info_stream_open(struct elf_file *f);
void info_stream_close(struct info_stream *s);

/* The next unit, header included: *data (resident until the next call) holds
 * *size bytes that sit at *offset in the section.  false at the end or on
 * an error (info_stream_failed tells). */
bool info_stream_next(struct info_stream *s, const uint8_t **data, size_t *size, uint64_t *offset);
bool info_stream_failed(const struct info_stream *s);

/* Makes the unit at offset the next one (for a reader that finds units
 * through .debug_aranges rather than in order).  A compressed section is
 * inflated again from a checkpoint when offset lies behind. */
void info_stream_seek(struct info_stream *s, uint64_t offset);
/* Frees the inflate state until the next read (section_map_park). */
void info_stream_park(struct info_stream *s);
size_t info_stream_memory(const struct info_stream *s);

#endif
