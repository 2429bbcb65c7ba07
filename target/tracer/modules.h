/* The ELF objects mapped in the traced process, by runtime address.  Each
 * module opens its file, CFI and debug information lazily: most modules of
 * a big process are never on an allocation stack. */
#ifndef MT_TRACER_MODULES_H
#define MT_TRACER_MODULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "target/elf/elf_file.h"
#include "target/files/provider.h"
#include "target/tracer/maps.h"

struct debug_object;
struct cfi_table;
struct exidx_table;
struct symbolizer;

struct module {
    char *path;             /* as the target sees it */
    uint64_t start, end;    /* runtime extent of its mappings */
    uint64_t bias;          /* runtime address - link-time address */
    uint64_t inode;
    uint64_t generation;    /* refresh that last saw it */
    bool is_interp;         /* the dynamic linker */
    bool is_main;           /* the executable */
    bool intercepts_placed;

    struct elf_file *mapped; /* the file actually mapped (/proc/PID/map_files) */
    bool mapped_tried;
    struct debug_object *dobj; /* symbols and lines: sysroot, memtrace-fs or local */
    bool dobj_tried;
    struct symbolizer *sym;
    struct cfi_table *cfi;
    bool cfi_tried;
    struct elf_blob cfi_blobs[3];
    struct exidx_table *exidx; /* ARM EHABI tables, where CFI has no row */
    bool exidx_tried;
    struct elf_blob exidx_blobs[2];
    struct symtab *starts;     /* function starts for prologue analysis (arm) */
    bool starts_tried;
    uint8_t *image;         /* the vDSO's bytes, copied from the process */
    size_t image_size;
};

struct module_map {
    pid_t pid;
    struct module **mods;   /* sorted by start, non-overlapping */
    size_t count, cap;
    uint64_t generation;
    struct file_locator *locator;
    char *main_path;        /* /proc/PID/exe */
    char *interp_path;
    /* Modules unloaded since (dlclose), newest last: allocation stacks
     * recorded while they were mapped still name their functions. */
    struct module **retired;
    size_t retired_count, retired_cap;
};

void module_map_init(struct module_map *mm, pid_t pid, struct file_locator *loc);
void module_map_destroy(struct module_map *mm);
/* Rereads /proc/PID/maps: adds new modules, retires unmapped ones (see
 * module_find_any).  Calls gone(ctx, module) when a module is unmapped. */
int module_map_refresh(struct module_map *mm, void (*gone)(void *ctx, struct module *m), void *ctx);
struct module *module_find(const struct module_map *mm, uint64_t addr);
/* For reports: the mapped module at addr, else the latest unloaded one that
 * was there.  A library unloaded and replaced at the same addresses by
 * another one is shadowed by it. */
struct module *module_find_any(const struct module_map *mm, uint64_t addr);

/* The file as mapped (for breakpoint placement); NULL if unreadable. */
struct elf_file *module_mapped_elf(struct module_map *mm, struct module *m);
struct debug_object *module_debug_object(struct module_map *mm, struct module *m);
struct cfi_table *module_cfi(struct module_map *mm, struct module *m);
/* The .ARM.exidx/.ARM.extab tables of the mapped file, or NULL. */
struct exidx_table *module_exidx(struct module_map *mm, struct module *m);
/* The function containing pc (runtime): its start in *start and its code
 * from there up to pc (at most max bytes) in code, read from the mapped
 * file (never our breakpoints).  The byte count, 0 when unknown. */
size_t module_func_code(struct module_map *mm, uint64_t pc, uint64_t *start, uint8_t *code,
                        size_t max);
/* Function and file:line lookups; NULL without any symbols. */
struct symbolizer *module_symbolizer(struct module_map *mm, struct module *m);

/* Does addr lie in the executable, and is it statically linked (no
 * dynamic linker)? */
bool module_is_static_executable(struct module_map *mm, uint64_t addr);

/* Runtime address of an exported function of the module, or 0. */
uint64_t module_export_addr(struct module_map *mm, struct module *m, const char *name);

#endif
