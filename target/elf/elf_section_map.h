/* A section's decompressed bytes at their own offsets, resident only in
 * part.  The whole section gets an address range (anonymous memory, which
 * costs nothing until touched); section_map_ensure() makes a byte range
 * resident, reading it by range (plain sections) or inflating the zlib
 * stream in chunks (SHF_COMPRESSED, .zdebug), and gives back the least
 * recently used chunks beyond a budget.  Parsers keep their absolute
 * offsets and plain pointers; what they have not ensured reads as zeros,
 * never outside the mapping.
 *
 * Random access into a compressed section restarts the stream from its
 * start, or from the nearest checkpoint (a 32 KiB dictionary kept,
 * deflated, every CHECKPOINT_SPAN bytes of output, zran style; taken only
 * once a read went backwards). */
#ifndef MT_ELF_ELF_SECTION_MAP_H
#define MT_ELF_ELF_SECTION_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/elf/elf_file.h"

struct section_map;

/* Opens section s of f (which must outlive the map).  budget is the bytes
 * kept resident (rounded up to whole chunks, at least two); 0 means no
 * limit.  NULL (with -errno in *rc when rc is not NULL) for an absent,
 * NOBITS, oversized or unreadable-header section. */
struct section_map *section_map_open(struct elf_file *f, const struct elf_section *s, size_t budget, int *rc);
void section_map_close(struct section_map *m);

/* The section's bytes (size bytes; only ensured ranges hold its data). */
const uint8_t *section_map_data(const struct section_map *m);
size_t section_map_size(const struct section_map *m);

/* Makes [off, off + len) resident.  false when the range is outside the
 * section or the data cannot be read or inflated (that part reads as
 * zeros).  Chunks of the range are never given back by this call. */
bool section_map_ensure(struct section_map *m, uint64_t off, uint64_t len);

/* Frees the inflate stream (about 40 KiB) until the next ensure that needs
 * it: for maps that are read again only now and then. */
void section_map_park(struct section_map *m);

/* Changes the budget (as at open); chunks beyond it are given back at the
 * next ensure. */
void section_map_set_budget(struct section_map *m, size_t budget);

/* Heap and resident bytes the map holds now. */
size_t section_map_memory(const struct section_map *m);

#endif
