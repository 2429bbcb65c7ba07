/* The GNU build-id of an ELF file, read by range with shared/elf's reader,
 * so the open reply can carry it and the target can check a file before
 * reading it. */
#ifndef MTFS_ELF_BUILD_ID_H
#define MTFS_ELF_BUILD_ID_H

#include <stddef.h>
#include <stdint.h>

/* Returns the id length (1..max), or 0 when fd is not an ELF file with one. */
size_t elf_build_id_of_fd(int fd, uint64_t file_size, uint8_t *id, size_t max);

/* The section called name: its file offset, size and sh_type; 0, or -1 when
 * fd is not an ELF file or has no such section (bounded, like the above). */
int elf_section_of_fd(int fd, uint64_t file_size, const char *name, uint64_t *off,
                      uint64_t *size, uint32_t *type);

#endif
