/* One ELF object of a traced process and what is read from it, each part
 * opened lazily on first need: most objects of a big process are never on
 * an allocation stack.  The parts are the file as mapped, the debug object
 * (symbols and lines: sysroot, memtrace-fs or local), the call frame
 * information (.eh_frame/.debug_frame, and ARM's .ARM.exidx), function
 * starts, and the symbolizer.
 *
 * As libdwfl keeps a Dwfl_Error per part of a Dwfl_Module, each part is
 * tried once and remembers how it went: loaded, or failed with a code and a
 * one-line reason.  A missing debug object is told once (mt_info), when it
 * is first needed.
 *
 * Where an object lies in a process is the address-space map's business
 * (tracer/modules.h); this module knows only where to find its bytes.
 * Runtime addresses never enter here: every address is link-time. */
#ifndef MT_OBJECTS_OBJECT_H
#define MT_OBJECTS_OBJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct cfi_table;
struct debug_object;
struct elf_file;
struct exidx_table;
struct file_locator;
struct symbolizer;
struct object;

/* Where an object's bytes come from.  The first mapping's extent names the
 * file under /proc/PID/map_files (the very file mapped, even if replaced on
 * disk since); the whole extent is the vDSO's image.  pid < 0: no process (the file is
 * read from path). */
struct object_origin {
    pid_t pid;
    const char *path;           /* as the target sees it (copied) */
    uint64_t start, end;        /* runtime extent of its mappings */
    uint64_t first_end;         /* end of the first one, which names the
                                   file under /proc/PID/map_files */
    bool executable;            /* the process's executable (a static one
                                   exports through .symtab) */
    struct file_locator *locator; /* for the debug object; outlives it */
};

/* The path of the vDSO, an object with no file: its image is copied from
 * the process. */
#define OBJECT_VDSO_NAME "[vdso]"

/* The parts of an object that load on their own. */
enum object_part {
    OBJECT_MAPPED,  /* the file as mapped */
    OBJECT_DEBUG,   /* the debug object */
    OBJECT_CFI,     /* .eh_frame_hdr/.eh_frame/.debug_frame */
    OBJECT_EXIDX,   /* .ARM.exidx/.ARM.extab */
    OBJECT_STARTS,  /* function starts (prologue analysis) */
    OBJECT_PARTS
};

/* How the load of a part went. */
enum object_error {
    OBJECT_UNTRIED = 0, /* not needed yet */
    OBJECT_LOADED,
    OBJECT_E_OPEN,      /* no file to read (not found, no access, vDSO not copied) */
    OBJECT_E_FORMAT,    /* not an ELF object we can read */
    OBJECT_E_BUILD_ID,  /* the copy found is another build than the mapped file */
    OBJECT_E_ABSENT,    /* the object has no such data */
    OBJECT_E_MALFORMED, /* the data is there but cannot be used */
    OBJECT_E_DEPENDS,   /* the part it is read from failed (reason: that part's) */
};

struct object *object_new(const struct object_origin *origin);
void object_free(struct object *o);

const char *object_path(const struct object *o);

/* How part p went, and why it failed (NULL unless it failed). */
enum object_error object_error(const struct object *o, enum object_part p);
const char *object_why(const struct object *o, enum object_part p);

/* The file as mapped (for breakpoint placement); NULL if unreadable. */
struct elf_file *object_mapped_elf(struct object *o);
struct debug_object *object_debug_object(struct object *o);
struct cfi_table *object_cfi(struct object *o);
/* The .ARM.exidx/.ARM.extab tables of the mapped file, or NULL. */
struct exidx_table *object_exidx(struct object *o);
/* The mapped file's GNU build-id in hex (exports name mappings by it);
 * NULL when it has none. */
const char *object_build_id_hex(struct object *o);
/* Function and file:line lookups; NULL without any symbols. */
struct symbolizer *object_symbolizer(struct object *o);

/* The function containing vaddr: its offset from the function's start in
 * *off, and its code from the start up to vaddr (at most max bytes) in
 * code, read from the mapped file (never our breakpoints).  The byte
 * count, 0 when unknown. */
size_t object_func_code(struct object *o, uint64_t vaddr, uint64_t *off, uint8_t *code, size_t max);

/* Is the object the process's executable, statically linked (no dynamic
 * linker)? */
bool object_is_static_executable(struct object *o);

/* Link-time address of an exported function (a static executable's from
 * .symtab), or 0. */
uint64_t object_export(struct object *o, const char *name);
/* Where that function's first instruction is: object_export's address
 * without the Thumb bit an ARM symbol's value carries, so that it equals
 * the start symtab_lookup gives the same function. */
uint64_t object_export_code(struct object *o, const char *name);
/* Every function o exports, as object_export finds them, in one pass:
 * found(ctx, name, vaddr) each (link-time address); then an executable's
 * .symtab: every function of a static one, the global ones of a dynamic
 * one. */
void object_each_export(struct object *o, void (*found)(void *ctx, const char *name, uint64_t vaddr),
                        void *ctx);

/* Where objects lie in one process, as the address-space map
 * (tracer/modules.h) gives them to those that name addresses (reports):
 * one place per mapped module, alive as long as its module. */
struct object_place {
    struct object *obj;
    uint64_t start;         /* runtime address of its first mapping */
    uint64_t end;           /* and the end of its last */
    uint64_t bias;          /* runtime address - link-time address */
};

struct object_space {
    void *map;
    /* The object at a runtime address: the mapped one, else the latest
     * unloaded one that was there (stacks recorded while it was mapped);
     * NULL when none. */
    struct object_place *(*find)(void *map, uint64_t addr);
    /* The i-th object mapped now, by address; NULL past the last. */
    struct object_place *(*nth)(void *map, size_t i);
};

#endif
