/* The GNU build-id of an ELF file, read by range with target/elf's reader,
 * so the open reply can carry it and the target can check a file before
 * reading it. */
#ifndef MTFS_ELF_BUILD_ID_H
#define MTFS_ELF_BUILD_ID_H

#include <stddef.h>
#include <stdint.h>

/* Returns the id length (1..max), or 0 when fd is not an ELF file with one. */
size_t elf_build_id_of_fd(int fd, uint64_t file_size, uint8_t *id, size_t max);

#endif
