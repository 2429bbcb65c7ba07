/* One ELF object of the traced process together with its separate debug
 * file: the plumbing symbolization and unwinding read from.  The debug file
 * is found by build-id, else by .gnu_debuglink, and is used only when its
 * build-id is the object's. */
#ifndef MT_SYMBOLS_DEBUG_OBJECT_H
#define MT_SYMBOLS_DEBUG_OBJECT_H

#include <stddef.h>

#include "shared/elf/elf_file.h"
#include "target/files/provider.h"
#include "target/symbols/symtab.h"

struct debug_object;

/* Opens path (the target's absolute path) through loc.  NULL with a
 * one-line reason in err when the object itself cannot be opened; a missing
 * debug file is not an error. */
struct debug_object *debug_object_open(struct file_locator *loc, const char *path, char *err, size_t errlen);
/* The same for an object the caller already opened (takes ownership of
 * obj; it is closed on failure too).  path is where the target sees it, for
 * the .gnu_debuglink search. */
struct debug_object *debug_object_from_elf(struct file_locator *loc, const char *path, struct elf_file *obj);
/* The same over an object the caller keeps open for longer than the debug
 * object (an object's mapped file, when no other copy matches it). */
struct debug_object *debug_object_borrow_elf(struct file_locator *loc, const char *path,
                                             struct elf_file *obj);
void debug_object_close(struct debug_object *o);

const char *debug_object_path(const struct debug_object *o);
/* The object itself. */
struct elf_file *debug_object_elf(struct debug_object *o);
/* Its separate debug file, or NULL. */
struct elf_file *debug_object_debug_elf(struct debug_object *o);
/* The file holding DWARF (.debug_info or .debug_line): the debug file when
 * it has them, else the object when it has them, else NULL. */
struct elf_file *debug_object_dwarf_elf(struct debug_object *o);
/* Function symbols (loaded on first use; never NULL). */
const struct symtab *debug_object_symtab(struct debug_object *o);

/* The dwz supplementary file named by .gnu_debugaltlink of the DWARF file
 * (DW_FORM_GNU_strp_alt / ref_alt point into it), found by its build-id,
 * else by its absolute path, through the locator given at open (which must
 * outlive the object).  Opened on first use; NULL when there is none or
 * its build-id is not the one the link names. */
struct elf_file *debug_object_alt_elf(struct debug_object *o);

/* One slot for another module's state about this object (its line tables,
 * say), released by free_fn when the object is closed or the slot is set
 * again. */
void debug_object_set_attachment(struct debug_object *o, void *data, void (*free_fn)(void *data));
void *debug_object_attachment(const struct debug_object *o);

#endif
