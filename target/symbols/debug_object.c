#include "target/symbols/debug_object.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/log.h"
#include "shared/xalloc.h"

struct debug_object {
    struct file_locator *loc;
    char *path;
    struct elf_file *obj;
    bool obj_borrowed;      /* obj is the caller's: not closed here */
    struct elf_file *debug;
    struct symtab *symtab;
    struct elf_file *alt;
    bool alt_tried;
    void *attachment;
    void (*attachment_free)(void *data);
};

/* A debug file for another build of the object would give wrong names and
 * wrong line numbers with full confidence: only an exact build-id match is
 * accepted.  An object without a build-id can only be matched by the
 * debuglink CRC, which the provider checked. */
static bool build_ids_match(struct elf_file *obj, struct elf_file *debug)
{
    uint8_t a[ELF_BUILD_ID_MAX], b[ELF_BUILD_ID_MAX];
    size_t na = elf_file_build_id(obj, a, sizeof(a));
    size_t nb = elf_file_build_id(debug, b, sizeof(b));
    if (na == 0)
        return true;
    return na == nb && memcmp(a, b, na) == 0;
}

static struct elf_file *open_checked(struct elf_file *obj, struct byte_source *src)
{
    if (!src)
        return NULL;
    char err[256];
    struct elf_file *debug = elf_file_open(src, err, sizeof(err));
    if (!debug) {
        mt_warn("ignoring debug file: %s", err);
        return NULL;
    }
    if (!build_ids_match(obj, debug)) {
        mt_warn("ignoring %s: its build-id is not the one of %s", elf_file_name(debug), elf_file_name(obj));
        elf_file_close(debug);
        return NULL;
    }
    return debug;
}

static struct elf_file *find_debug_file(struct file_locator *loc, const char *path, struct elf_file *obj)
{
    uint8_t id[ELF_BUILD_ID_MAX];
    size_t n = elf_file_build_id(obj, id, sizeof(id));
    if (n > 0) {
        struct elf_file *debug = open_checked(obj, file_locator_open_build_id(loc, id, n));
        if (debug)
            return debug;
    }
    const char *name;
    uint32_t crc;
    if (elf_file_debuglink(obj, &name, &crc))
        return open_checked(obj, file_locator_open_debuglink(loc, path, name, crc));
    return NULL;
}

struct debug_object *debug_object_from_elf(struct file_locator *loc, const char *path, struct elf_file *obj)
{
    if (!obj)
        return NULL;
    struct debug_object *o = xcalloc(1, sizeof(*o));
    o->loc = loc;
    o->path = xstrdup(path);
    o->obj = obj;
    o->debug = find_debug_file(loc, path, obj);
    return o;
}

struct debug_object *debug_object_borrow_elf(struct file_locator *loc, const char *path,
                                             struct elf_file *obj)
{
    struct debug_object *o = debug_object_from_elf(loc, path, obj);
    if (o)
        o->obj_borrowed = true;
    return o;
}

struct debug_object *debug_object_open(struct file_locator *loc, const char *path, char *err, size_t errlen)
{
    struct byte_source *src = file_locator_open_path(loc, path);
    if (!src) {
        snprintf(err, errlen, "%s: not found by any file provider", path);
        return NULL;
    }
    struct elf_file *obj = elf_file_open(src, err, errlen);
    if (!obj)
        return NULL;
    return debug_object_from_elf(loc, path, obj);
}

void debug_object_close(struct debug_object *o)
{
    if (!o)
        return;
    debug_object_set_attachment(o, NULL, NULL);
    elf_file_close(o->alt);
    symtab_free(o->symtab);
    elf_file_close(o->debug);
    if (!o->obj_borrowed)
        elf_file_close(o->obj);
    free(o->path);
    free(o);
}

const char *debug_object_path(const struct debug_object *o) { return o->path; }
struct elf_file *debug_object_elf(struct debug_object *o) { return o->obj; }
struct elf_file *debug_object_debug_elf(struct debug_object *o) { return o->debug; }

static bool has_dwarf(const struct elf_file *f)
{
    return f && (elf_file_find_section(f, ".debug_info") || elf_file_find_section(f, ".debug_line"));
}

struct elf_file *debug_object_dwarf_elf(struct debug_object *o)
{
    if (has_dwarf(o->debug))
        return o->debug;
    if (has_dwarf(o->obj))
        return o->obj;
    return NULL;
}

const struct symtab *debug_object_symtab(struct debug_object *o)
{
    if (!o->symtab)
        o->symtab = symtab_load(o->obj, o->debug);
    return o->symtab;
}

static struct elf_file *open_alt(struct file_locator *loc, const char *path, const uint8_t *id, size_t id_len)
{
    struct byte_source *src = file_locator_open_build_id(loc, id, id_len);
    if (!src && path[0] == '/')
        src = file_locator_open_path(loc, path);
    if (!src)
        return NULL;
    char err[256];
    struct elf_file *alt = elf_file_open(src, err, sizeof(err));
    if (!alt) {
        mt_warn("ignoring dwz file: %s", err);
        return NULL;
    }
    uint8_t have[ELF_BUILD_ID_MAX];
    size_t n = elf_file_build_id(alt, have, sizeof(have));
    if (n != id_len || memcmp(have, id, n) != 0) {
        mt_warn("ignoring %s: not the build the .gnu_debugaltlink names", elf_file_name(alt));
        elf_file_close(alt);
        return NULL;
    }
    return alt;
}

struct elf_file *debug_object_alt_elf(struct debug_object *o)
{
    if (o->alt_tried)
        return o->alt;
    o->alt_tried = true;
    struct elf_file *dwarf = debug_object_dwarf_elf(o);
    const char *path;
    uint8_t id[ELF_BUILD_ID_MAX];
    size_t n = dwarf ? elf_file_debugaltlink(dwarf, &path, id, sizeof(id)) : 0;
    if (n > 0 && o->loc)
        o->alt = open_alt(o->loc, path, id, n);
    return o->alt;
}

void debug_object_set_attachment(struct debug_object *o, void *data, void (*free_fn)(void *data))
{
    if (o->attachment && o->attachment_free)
        o->attachment_free(o->attachment);
    o->attachment = data;
    o->attachment_free = free_fn;
}

void *debug_object_attachment(const struct debug_object *o) { return o->attachment; }
