/* Function symbols of one ELF object, sorted by address, for turning PCs
 * into names; and lookups of single symbols by name (breakpoint targets). */
#ifndef MT_SYMBOLS_SYMTAB_H
#define MT_SYMBOLS_SYMTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/elf/elf_file.h"

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
/* Every defined function of one pass over a table: the exported ones of
 * the dynamic table in their default version (from_symtab 0), every one of
 * .symtab (SYMTAB_ALL: static executables), or its global and weak ones
 * (SYMTAB_GLOBALS).  found(ctx, name, vaddr) each, vaddr link-time.
 * -ENOENT without such a table. */
#define SYMTAB_ALL 1
#define SYMTAB_GLOBALS 2
/* The link-time starts of every function of obj's .symtab named name, or
 * a clone of it GCC named name.SUFFIX (.isra.0, .constprop.1, .part.0,
 * .cold): static functions of one name in several units each count.  The
 * Thumb bit is cleared (ARM).  Returns how many there are; the first max
 * are written.  0 when obj has no .symtab. */
size_t symtab_function_starts(struct elf_file *obj, const char *name, uint64_t *out, size_t max);
int symtab_each_function(struct elf_file *obj, int from_symtab,
                         void (*found)(void *ctx, const char *name, uint64_t vaddr), void *ctx);

#endif
