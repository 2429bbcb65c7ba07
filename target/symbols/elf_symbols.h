/* Raw ELF symbol tables as they are on disk: a .symtab/.dynsym section, or
 * the dynamic symbol table found through PT_DYNAMIC when there are no
 * section headers.  Decoding is bounds-checked per symbol; the symtab and
 * export lookups are built on top of this. */
#ifndef MT_SYMBOLS_ELF_SYMBOLS_H
#define MT_SYMBOLS_ELF_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/elf/elf_file.h"

struct elf_symbol {
    const char *name;     /* "" when the string offset is bad */
    uint64_t value;
    uint64_t size;
    uint8_t bind;         /* STB_* */
    uint8_t type;         /* STT_* */
    uint16_t shndx;       /* SHN_UNDEF, SHN_ABS, a section index, ... */
};

struct elf_symbols {
    bool big_endian;
    unsigned elf_class;
    uint8_t *syms;        /* raw entries */
    size_t count;
    size_t entsize;
    char *strs;
    size_t strsize;
    /* Symbol versions (dynamic tables only); NULL when the file has none. */
    uint8_t *versym;      /* count raw 16-bit entries */
    const char **version_names; /* by version index, into strs; may be NULL */
    size_t version_count;
    /* elf_symbols_map: syms and strs are section maps (elf_section_map.h),
     * read by range as symbols are asked for. */
    struct section_map *syms_map, *strs_map;
};

/* Where a table came from. */
enum elf_symbols_kind { ELF_SYMBOLS_SYMTAB, ELF_SYMBOLS_DYNSYM, ELF_SYMBOLS_DYNAMIC };

/* Loads the table of one kind.  0, -ENOENT when the file has none, or
 * another -errno when it is malformed. */
int elf_symbols_load(struct elf_file *f, enum elf_symbols_kind kind, struct elf_symbols *out);
void elf_symbols_free(struct elf_symbols *s);
/* The .symtab read by range: only a few KiB of the table and its strings
 * are resident at a time.  A name from elf_symbols_get stays valid until
 * the next elf_symbols_get. */
int elf_symbols_map(struct elf_file *f, struct elf_symbols *out);

/* Symbol i (0 <= i < count).  false when it cannot be decoded. */
bool elf_symbols_get(const struct elf_symbols *s, size_t i, struct elf_symbol *sym);
/* The same without reading its name: sym->name is NULL and *name_off the
 * name's offset in the string table, for elf_symbols_name.  Whoever reads
 * many names of a mapped table reads them fastest in offset order: the
 * strings are then made resident front to back, each piece once. */
bool elf_symbols_get_unnamed(const struct elf_symbols *s, size_t i, struct elf_symbol *sym,
                             uint32_t *name_off);
/* The name at offset off of the string table ("" when off is bad); valid
 * until the next call of elf_symbols_get or elf_symbols_name. */
const char *elf_symbols_name(const struct elf_symbols *s, uint32_t off);

/* Version of symbol i: its index (without the hidden bit), whether it is
 * hidden (a non-default version), and its name (NULL when unknown).  An
 * unversioned table answers index 1 (global), not hidden. */
void elf_symbols_version(const struct elf_symbols *s, size_t i, unsigned *index, bool *hidden,
                         const char **name);

#endif
