/* An ELF file (32 or 64 bit, either byte order) read by range through a
 * byte_source: headers and the section/segment tables are kept, section
 * contents are loaded only when asked for.  Works on files with no section
 * headers at all (sstrip-ed), through the program headers. */
#ifndef MT_ELF_ELF_FILE_H
#define MT_ELF_ELF_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/files/byte_source.h"

struct elf_section {
    const char *name;
    uint32_t type;
    uint64_t flags;
    uint64_t addr;
    uint64_t offset;
    uint64_t size;       /* on disk (compressed size for compressed sections) */
    uint64_t entsize;
    uint32_t link;
    uint32_t info;
};

struct elf_segment {
    uint32_t type;
    uint32_t flags;
    uint64_t offset;
    uint64_t vaddr;
    uint64_t filesz;
    uint64_t memsz;
    uint64_t align;
};

/* Section contents in memory, decompressed.  data is owned by the blob. */
struct elf_blob {
    uint8_t *data;
    size_t size;
};

struct elf_file;

/* Takes ownership of src (closed on failure too).  NULL with a one-line
 * reason in err for anything that is not a well-formed ELF file. */
struct elf_file *elf_file_open(struct byte_source *src, char *err, size_t errlen);
void elf_file_close(struct elf_file *f);

const char *elf_file_name(const struct elf_file *f);
unsigned elf_file_class(const struct elf_file *f);      /* 32 or 64 */
bool elf_file_big_endian(const struct elf_file *f);
unsigned elf_file_machine(const struct elf_file *f);    /* EM_* */
unsigned elf_file_type(const struct elf_file *f);       /* ET_EXEC, ET_DYN, ... */
uint64_t elf_file_entry(const struct elf_file *f);

size_t elf_file_segment_count(const struct elf_file *f);
const struct elf_segment *elf_file_segment(const struct elf_file *f, size_t i);
size_t elf_file_section_count(const struct elf_file *f);
const struct elf_section *elf_file_section(const struct elf_file *f, size_t i);
/* By name; for ".debug_X" also finds a legacy ".zdebug_X".  NULL if absent
 * or SHT_NOBITS. */
const struct elf_section *elf_file_find_section(const struct elf_file *f, const char *name);

/* Loads a section's bytes, decompressing SHF_COMPRESSED (ELFCOMPRESS_ZLIB)
 * and .zdebug ("ZLIB" + 8-byte big-endian size).  Sizes are checked against
 * limits before any allocation.  0 or -errno. */
int elf_file_load_section(struct elf_file *f, const struct elf_section *s, struct elf_blob *out);
void elf_blob_free(struct elf_blob *b);

/* Raw bytes at a file offset. */
int elf_file_read(struct elf_file *f, uint64_t off, void *buf, size_t len);
/* Bytes at a link-time virtual address, through the PT_LOAD segments. */
int elf_file_read_vaddr(struct elf_file *f, uint64_t vaddr, void *buf, size_t len);

/* The NT_GNU_BUILD_ID note (from PT_NOTE or .note.gnu.build-id).  Returns
 * its length (0 when there is none); copies at most max bytes. */
size_t elf_file_build_id(const struct elf_file *f, uint8_t *id, size_t max);
/* .gnu_debuglink: file name and CRC32.  false when absent. */
bool elf_file_debuglink(const struct elf_file *f, const char **name, uint32_t *crc);
/* The PT_INTERP path, or NULL. */
const char *elf_file_interp(const struct elf_file *f);

/* Build-ids longer than this are cut to it (real ones are 20 bytes). */
#define ELF_BUILD_ID_MAX 64
/* .gnu_debugaltlink (written by dwz): the path of the shared supplementary
 * debug file and its build-id.  Returns the build-id length (0 when there
 * is no such section or it is malformed); copies at most max bytes. */
size_t elf_file_debugaltlink(const struct elf_file *f, const char **path, uint8_t *id, size_t max);
/* Size of the underlying file in bytes. */
uint64_t elf_file_size(const struct elf_file *f);
/* The ELF index of a section returned by elf_file_section/find_section
 * (what sh_link and st_shndx refer to); 0 for anything else. */
size_t elf_file_section_index(const struct elf_file *f, const struct elf_section *s);
/* The first section of a type (SHT_SYMTAB, SHT_DYNSYM, ...), or NULL. */
const struct elf_section *elf_file_find_section_type(const struct elf_file *f, uint32_t type);

#endif
