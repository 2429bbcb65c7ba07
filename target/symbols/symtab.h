/* Function symbols of one ELF object, sorted by address, for turning PCs
 * into names; and lookups of single symbols by name (breakpoint targets). */
#ifndef MT_SYMBOLS_SYMTAB_H
#define MT_SYMBOLS_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

#include "target/elf/elf_file.h"

struct symtab;

/* The function symbols (STT_FUNC, STT_GNU_IFUNC) of the best table there
 * is: debug's .symtab, else obj's .symtab, else obj's .dynsym, else the
 * dynamic symbol table through PT_DYNAMIC (files without section headers).
 * Never NULL: an object without symbols gives an empty table. */
struct symtab *symtab_load(struct elf_file *obj, struct elf_file *debug /* may be NULL */);
void symtab_free(struct symtab *t);

/* The function containing vaddr (a link-time address of the object), and
 * vaddr's offset in it; NULL when none does.  At one address the name
 * eu-addr2line shows wins: global over weak over local, sized over
 * sizeless, then the first in the table. */
const char *symtab_lookup(const struct symtab *t, uint64_t vaddr, uint64_t *offset);

size_t symtab_count(const struct symtab *t);
/* Entry i in address order (after aliases are merged); NULL past the end. */
const char *symtab_entry(const struct symtab *t, size_t i, uint64_t *vaddr, uint64_t *size);
/* Which table the symbols came from: "debug .symtab", ".symtab", ".dynsym",
 * "PT_DYNAMIC" or "none". */
const char *symtab_origin(const struct symtab *t);

/* A defined function exported by obj's dynamic symbol table (.dynsym, or
 * through PT_DYNAMIC): NAME matches its default version (what dlsym and
 * the dynamic linker bind to); "NAME@@VER" and "NAME@VER" pick a version.
 * 0 and *vaddr (link-time), or -ENOENT. */
int symtab_find_export(struct elf_file *obj, const char *name, uint64_t *vaddr);
/* A defined function of obj's .symtab (static executables, which export
 * nothing): global before local.  0 or -ENOENT. */
int symtab_find_local(struct elf_file *obj, const char *name, uint64_t *vaddr);

#endif
