/* Inflating compressed ELF sections (SHF_COMPRESSED and legacy .zdebug_*)
 * straight from a byte_source, so the compressed bytes are never held in
 * memory all at once. */
#ifndef MT_ELF_ELF_COMPRESS_H
#define MT_ELF_ELF_COMPRESS_H

#include <stddef.h>
#include <stdint.h>

#include "shared/files/byte_source.h"

/* Largest section memtrace agrees to hold in memory, compressed or not: a
 * bigger one is either corrupt or not worth the memory of a small board. */
#define ELF_SECTION_MAX_BYTES (512u * 1024 * 1024)

/* Inflates the zlib stream at [off, off+len) of src into a new buffer of
 * exactly out_size bytes (out_size <= ELF_SECTION_MAX_BYTES, checked by the
 * caller).  A stream that ends early, runs long or is corrupt is -EINVAL.
 * 0 or -errno; *out is malloc'd on success only. */
int elf_inflate_range(struct byte_source *src, uint64_t off, uint64_t len,
                      size_t out_size, uint8_t **out);

#endif
