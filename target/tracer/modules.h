/* The address-space map: the ELF objects mapped in the traced process, by
 * runtime address, with their load bias, kept up to date at dlopen/dlclose
 * (module_map_refresh) and rebuilt at exec.  What is read from an object
 * (its file, debug object, CFI, symbolizer) is the object's, opened lazily
 * (objects/object.h). */
#ifndef MT_TRACER_MODULES_H
#define MT_TRACER_MODULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "target/files/provider.h"
#include "target/objects/object.h"
#include "target/tracer/maps.h"

struct module {
    char *path;             /* as the target sees it */
    uint64_t start, end;    /* runtime extent of its mappings */
    uint64_t bias;          /* runtime address - link-time address */
    uint64_t inode;
    uint64_t generation;    /* refresh that last saw it */
    bool is_interp;         /* the dynamic linker */
    bool is_main;           /* the executable */
    bool intercepts_placed;
    bool requests_scanned;  /* its valgrind client requests found (client_requests.h) */

    struct object *obj;     /* its file and what is read from it */
    struct object_place place; /* obj, start and bias, for object_space */
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

/* A module known otherwise than from /proc/PID/maps (a replayed snapshot):
 * obj (the map takes it) mapped at [start, end) with bias. */
struct module *module_map_add(struct module_map *mm, struct object *obj, uint64_t start, uint64_t end,
                              uint64_t bias);

/* The modules as an object_space (objects/object.h), for naming addresses
 * without the tracer: valid as long as mm. */
struct object_space module_map_objects(struct module_map *mm);

/* The function containing pc (runtime): its start in *start and its code
 * from there up to pc (at most max bytes) in code, read from the mapped
 * file (never our breakpoints).  The byte count, 0 when unknown. */
size_t module_func_code(struct module_map *mm, uint64_t pc, uint64_t *start, uint8_t *code,
                        size_t max);

/* Does addr lie in the executable, and is it statically linked (no
 * dynamic linker)? */
bool module_is_static_executable(struct module_map *mm, uint64_t addr);

/* Runtime address of an exported function of the module, or 0. */
uint64_t module_export_addr(struct module_map *mm, struct module *m, const char *name);

struct intercept_site;
/* The intercepted functions m exports (intercept.h), one per address,
 * runtime addresses, in table order: a new array (*out, NULL when none)
 * and its length. */
size_t module_intercept_sites(struct module_map *mm, struct module *m, struct intercept_site **out);

#endif
