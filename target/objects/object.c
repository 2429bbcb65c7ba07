#include "target/objects/object.h"

#include <elf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/build_id.h"
#include "shared/log.h"
#include "shared/xalloc.h"
#include "target/dwarf/cfi.h"
#include "shared/elf/elf_file.h"
#include "shared/files/byte_source.h"
#include "target/symbols/debug_object.h"
#include "target/symbols/symbolize.h"
#include "target/symbols/symtab.h"
#include "target/unwind/exidx.h"

/* How one part's load went: its code, and for a failure its reason. */
struct part_state {
    enum object_error err;
    char *why;
};

/* What is read from an object's files is shared by the objects of one
 * session with the same build-id (the same file, mapped by many processes:
 * libc in every process -f follows): the debug object and its symbolizer
 * (function, inline and line indexes, the names looked up), and the call
 * frame information.  Read once, it serves every process; the last object
 * to let go frees it.  A session is one memtrace process, so the list is
 * this file's, found by build-id and locator (another locator may find
 * another debug file).  Only parts that loaded are shared: a failure is
 * tried again by the next process. */
struct shared_parts {
    struct shared_parts *next;
    uint8_t build_id[64];
    size_t build_id_len;
    const struct file_locator *locator;
    unsigned refs;
    struct debug_object *dobj;  /* found by path with this build-id; NULL: not yet */
    struct symbolizer *sym;     /* made on first need */
    struct cfi_table *cfi;      /* NULL: not yet */
    struct elf_blob cfi_blobs[3];
};
static struct shared_parts *shared_list;

static void shared_release(struct shared_parts *d)
{
    if (!d || --d->refs)
        return;
    for (struct shared_parts **p = &shared_list; *p; p = &(*p)->next)
        if (*p == d) {
            *p = d->next;
            break;
        }
    if (d->sym)
        symbolizer_free(d->sym);
    if (d->dobj)
        debug_object_close(d->dobj);
    if (d->cfi)
        cfi_table_free(d->cfi);
    for (int i = 0; i < 3; i++)
        elf_blob_free(&d->cfi_blobs[i]);
    free(d);
}

struct object {
    char *path;             /* as the target sees it */
    pid_t pid;
    uint64_t start, end;    /* the mappings it was opened from */
    uint64_t first_end;     /* the first one's end (map_files) */
    bool executable;
    struct file_locator *locator;
    struct part_state part[OBJECT_PARTS];

    struct elf_file *mapped; /* the file actually mapped (/proc/PID/map_files) */
    struct debug_object *dobj; /* symbols and lines: sysroot, memtrace-fs or local */
    struct symbolizer *sym;
    struct shared_parts *shared; /* this build-id's, once asked (NULL: none) */
    bool shared_asked;
    bool dobj_shared, cfi_shared; /* owned by shared, not freed here */
    struct cfi_table *cfi;
    struct elf_blob cfi_blobs[3];
    struct exidx_table *exidx; /* ARM EHABI tables, where CFI has no row */
    struct elf_blob exidx_blobs[2];
    struct symtab *starts;     /* function starts for prologue analysis (arm) */
    char *build_id_hex;        /* the mapped file's, "" for none; NULL: not asked */
    uint8_t *image;         /* the vDSO's bytes, copied from the process */
    size_t image_size;
};

struct object *object_new(const struct object_origin *origin)
{
    struct object *o = xcalloc(1, sizeof(*o));
    o->path = xstrdup(origin->path);
    o->pid = origin->pid;
    o->start = origin->start;
    o->end = origin->end;
    o->first_end = origin->first_end ? origin->first_end : origin->end;
    o->executable = origin->executable;
    o->locator = origin->locator;
    return o;
}

void object_free(struct object *o)
{
    if (!o)
        return;
    for (int i = 0; i < OBJECT_PARTS; i++)
        free(o->part[i].why);
    if (o->cfi && !o->cfi_shared)
        cfi_table_free(o->cfi);
    for (int i = 0; i < 3; i++)
        elf_blob_free(&o->cfi_blobs[i]);
    exidx_table_free(o->exidx);
    if (o->starts)
        symtab_free(o->starts);
    for (int i = 0; i < 2; i++)
        elf_blob_free(&o->exidx_blobs[i]);
    if (!o->dobj_shared) {
        if (o->sym)
            symbolizer_free(o->sym);
        if (o->dobj)
            debug_object_close(o->dobj);
    }
    shared_release(o->shared);
    if (o->mapped)
        elf_file_close(o->mapped);
    free(o->build_id_hex);
    free(o->image);
    free(o->path);
    free(o);
}

const char *object_path(const struct object *o) { return o->path; }

enum object_error object_error(const struct object *o, enum object_part p) { return o->part[p].err; }

const char *object_why(const struct object *o, enum object_part p) { return o->part[p].why; }

static bool tried(const struct object *o, enum object_part p) { return o->part[p].err != OBJECT_UNTRIED; }

/* Marks part p tried: loaded (err OBJECT_LOADED), or failed with a reason. */
static void load_done(struct object *o, enum object_part p, enum object_error err, const char *why)
{
    struct part_state *s = &o->part[p];
    s->err = err;
    free(s->why);
    s->why = err == OBJECT_LOADED ? NULL : xstrdup(why && why[0] ? why : "unknown reason");
}

/* The shared parts of o's build-id (made on first ask), or NULL for an
 * object with no build-id or no readable file, and the vDSO (its image is
 * this process's copy). */
static struct shared_parts *shared_of(struct object *o)
{
    if (o->shared_asked)
        return o->shared;
    o->shared_asked = true;
    if (strcmp(o->path, OBJECT_VDSO_NAME) == 0)
        return NULL;
    struct elf_file *mapped = object_mapped_elf(o);
    uint8_t id[64];
    size_t len = mapped ? elf_file_build_id(mapped, id, sizeof(id)) : 0;
    if (!len || len > sizeof(id))
        return NULL;
    struct shared_parts *d;
    for (d = shared_list; d; d = d->next)
        if (d->locator == o->locator && d->build_id_len == len && memcmp(d->build_id, id, len) == 0)
            break;
    if (!d) {
        d = xcalloc(1, sizeof(*d));
        memcpy(d->build_id, id, len);
        d->build_id_len = len;
        d->locator = o->locator;
        d->next = shared_list;
        shared_list = d;
    }
    d->refs++;
    o->shared = d;
    return d;
}

/* The vDSO is an ELF object with no file.  Its CFI covers the kernel's
 * signal trampolines and __kernel_vsyscall, which i386 programs return
 * through: unwinding out of a signal handler crosses them. */
#define VDSO_NAME OBJECT_VDSO_NAME
#define VDSO_MAX_SIZE (1u << 20)

/* Copies the vDSO's image out of the process once; the object keeps it. */
static struct elf_file *vdso_open(struct object *o, enum object_error *err)
{
    *err = OBJECT_E_OPEN;
    uint64_t len = o->end - o->start;
    if (len == 0 || len > VDSO_MAX_SIZE)
        return NULL;
    char path[64], why[256];
    snprintf(path, sizeof(path), "/proc/%d/mem", (int)o->pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    uint8_t *image = xmalloc((size_t)len);
    ssize_t n = pread(fd, image, (size_t)len, (off_t)o->start);
    close(fd);
    if (n != (ssize_t)len) {
        free(image);
        return NULL;
    }
    o->image = image;
    o->image_size = (size_t)len;
    *err = OBJECT_E_FORMAT;
    return elf_file_open(byte_source_open_memory(image, (size_t)len, VDSO_NAME), why, sizeof(why));
}

/* map_files names the very file that is mapped, even when the path was
 * replaced or deleted since (a package upgrade). */
static struct byte_source *open_map_file(const struct object *o, char *err, size_t errlen)
{
    char path[128];
    snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)o->pid, o->start,
             o->first_end);
    return byte_source_open_file(path, err, errlen);
}

struct elf_file *object_mapped_elf(struct object *o)
{
    if (o->mapped || tried(o, OBJECT_MAPPED))
        return o->mapped;
    enum object_error code = OBJECT_E_OPEN;
    if (strcmp(o->path, VDSO_NAME) == 0) {
        o->mapped = vdso_open(o, &code);
        load_done(o, OBJECT_MAPPED, o->mapped ? OBJECT_LOADED : code, "cannot copy the vDSO");
        return o->mapped;
    }
    char path[128], err[256] = "";
    struct byte_source *src = open_map_file(o, err, sizeof(err));
    if (!src) {
        snprintf(path, sizeof(path), "/proc/%d/root", (int)o->pid);
        src = byte_source_open_in_root(path, o->path, err, sizeof(err));
    }
    if (!src)
        src = byte_source_open_file(o->path, err, sizeof(err));
    if (src) {
        code = OBJECT_E_FORMAT;
        o->mapped = elf_file_open(src, err, sizeof(err));
    }
    load_done(o, OBJECT_MAPPED, o->mapped ? OBJECT_LOADED : code, err);
    return o->mapped;
}

struct debug_object *object_debug_object(struct object *o)
{
    if (o->dobj || tried(o, OBJECT_DEBUG))
        return o->dobj;
    char err[256] = "";
    if (strcmp(o->path, VDSO_NAME) == 0) {
        /* Its dynamic symbols name the trampolines; a second reader over
         * the same image, owned by the debug object. */
        struct elf_file *f = object_mapped_elf(o) ? elf_file_open(byte_source_open_memory(
                                 o->image, o->image_size, VDSO_NAME), err, sizeof(err))
                                                  : NULL;
        o->dobj = f ? debug_object_from_elf(o->locator, o->path, f) : NULL;
        load_done(o, OBJECT_DEBUG, o->dobj ? OBJECT_LOADED : OBJECT_E_ABSENT,
                  "the vDSO image has no symbols");
        return o->dobj;
    }
    enum object_error code = OBJECT_E_OPEN;
    struct elf_file *mapped = object_mapped_elf(o);
    struct shared_parts *sd = shared_of(o);
    if (sd && sd->dobj) {
        o->dobj = sd->dobj;
        o->dobj_shared = true;
        load_done(o, OBJECT_DEBUG, OBJECT_LOADED, NULL);
        return o->dobj;
    }
    o->dobj = debug_object_open(o->locator, o->path, err, sizeof(err));
    if (o->dobj && mapped) {
        /* A copy from a sysroot or memtrace-fs is used only when it is the
         * same build as what the target maps. */
        uint8_t want[64], have[64];
        size_t wl = elf_file_build_id(mapped, want, sizeof(want));
        size_t hl = elf_file_build_id(debug_object_elf(o->dobj), have, sizeof(have));
        if (wl && (wl != hl || memcmp(want, have, wl) != 0)) {
            debug_object_close(o->dobj);
            o->dobj = NULL;
            code = OBJECT_E_BUILD_ID;
            snprintf(err, sizeof(err), "build-id mismatch");
            /* Replaced since it was mapped (an upgrade): the mapped file
             * itself still names its functions and leads to its own
             * debug file by build-id. */
            o->dobj = debug_object_borrow_elf(o->locator, o->path, mapped);
            mt_warn("%s: the copy found has another build-id than the mapped file; %s", o->path,
                    o->dobj ? "the mapped file is read instead" : "not used");
        } else if (sd) {
            /* The same build as mapped, read by path: the other processes'
             * objects of this build-id share it.  (A borrowed mapped file
             * is this process's own: never shared.) */
            sd->dobj = o->dobj;
            o->dobj_shared = true;
        }
    }
    load_done(o, OBJECT_DEBUG, o->dobj ? OBJECT_LOADED : code, err);
    if (!o->dobj)
        mt_info("%s: no symbols (%s)", o->path, o->part[OBJECT_DEBUG].why);
    return o->dobj;
}

static const struct elf_section *load_section(struct elf_file *f, const char *name, struct elf_blob *blob)
{
    const struct elf_section *s = f ? elf_file_find_section(f, name) : NULL;
    if (!s || elf_file_load_section(f, s, blob) < 0)
        return NULL;
    return s;
}

struct cfi_table *object_cfi(struct object *o)
{
    if (o->cfi || tried(o, OBJECT_CFI))
        return o->cfi;
    struct elf_file *f = object_mapped_elf(o);
    if (!f) {
        load_done(o, OBJECT_CFI, OBJECT_E_DEPENDS, object_why(o, OBJECT_MAPPED));
        return NULL;
    }
    struct shared_parts *sd = shared_of(o);
    if (sd && sd->cfi) {
        o->cfi = sd->cfi;
        o->cfi_shared = true;
        load_done(o, OBJECT_CFI, OBJECT_LOADED, NULL);
        return o->cfi;
    }
    struct cfi_sources src;
    memset(&src, 0, sizeof(src));
    src.big_endian = elf_file_big_endian(f);
    src.addr_size = elf_file_class(f) == 64 ? 8 : 4;
    const struct elf_section *hdr = load_section(f, ".eh_frame_hdr", &o->cfi_blobs[0]);
    const struct elf_section *eh = load_section(f, ".eh_frame", &o->cfi_blobs[1]);
    if (hdr) {
        src.eh_frame_hdr = o->cfi_blobs[0].data;
        src.eh_frame_hdr_size = o->cfi_blobs[0].size;
        src.eh_frame_hdr_vaddr = hdr->addr;
    }
    if (eh) {
        src.eh_frame = o->cfi_blobs[1].data;
        src.eh_frame_size = o->cfi_blobs[1].size;
        src.eh_frame_vaddr = eh->addr;
    }
    /* .debug_frame lives in the separate debug file when there is one.  It
     * is sought there when .eh_frame has no FDE: lld leaves a lone 4-byte
     * terminator in ARM programs, whose tables are .ARM.exidx (often
     * "cannot unwind" for C) and .debug_frame, so a stripped ARM program
     * unwinds with the debug file's .debug_frame (memtrace -m, -c, -l). */
    bool eh_has_fdes = eh && o->cfi_blobs[1].size > 4;
    struct debug_object *d = eh_has_fdes ? NULL : object_debug_object(o);
    struct elf_file *df = d ? debug_object_dwarf_elf(d) : f;
    if (load_section(df, ".debug_frame", &o->cfi_blobs[2])) {
        src.debug_frame = o->cfi_blobs[2].data;
        src.debug_frame_size = o->cfi_blobs[2].size;
    }
    const struct elf_section *text = elf_file_find_section(f, ".text");
    const struct elf_section *got = elf_file_find_section(f, ".got");
    src.text_vaddr = text ? text->addr : 0;
    src.data_vaddr = got ? got->addr : 0;
    if (!src.eh_frame && !src.debug_frame) {
        load_done(o, OBJECT_CFI, OBJECT_E_ABSENT, "no .eh_frame or .debug_frame");
        return NULL;
    }
    o->cfi = cfi_table_new(&src);
    load_done(o, OBJECT_CFI, o->cfi ? OBJECT_LOADED : OBJECT_E_MALFORMED,
              "malformed call frame information");
    if (o->cfi && sd) {
        /* The table reads the sections in place: they go with it. */
        sd->cfi = o->cfi;
        memcpy(sd->cfi_blobs, o->cfi_blobs, sizeof(sd->cfi_blobs));
        memset(o->cfi_blobs, 0, sizeof(o->cfi_blobs));
        o->cfi_shared = true;
    }
    return o->cfi;
}

struct exidx_table *object_exidx(struct object *o)
{
    if (o->exidx || tried(o, OBJECT_EXIDX))
        return o->exidx;
    struct elf_file *f = object_mapped_elf(o);
    if (!f) {
        load_done(o, OBJECT_EXIDX, OBJECT_E_DEPENDS, object_why(o, OBJECT_MAPPED));
        return NULL;
    }
    const struct elf_section *ix = load_section(f, ".ARM.exidx", &o->exidx_blobs[0]);
    if (!ix) {
        load_done(o, OBJECT_EXIDX, OBJECT_E_ABSENT, "no .ARM.exidx");
        return NULL;
    }
    const struct elf_section *tab = load_section(f, ".ARM.extab", &o->exidx_blobs[1]);
    struct exidx_sources src = {
        .big_endian = elf_file_big_endian(f),
        .exidx = o->exidx_blobs[0].data,
        .exidx_size = o->exidx_blobs[0].size,
        .exidx_vaddr = ix->addr,
        .extab = tab ? o->exidx_blobs[1].data : NULL,
        .extab_size = tab ? o->exidx_blobs[1].size : 0,
        .extab_vaddr = tab ? tab->addr : 0,
    };
    o->exidx = exidx_table_new(&src);
    load_done(o, OBJECT_EXIDX, o->exidx ? OBJECT_LOADED : OBJECT_E_MALFORMED,
              "malformed .ARM.exidx");
    return o->exidx;
}

const char *object_build_id_hex(struct object *o)
{
    if (!o->build_id_hex) {
        struct elf_file *f = object_mapped_elf(o);
        uint8_t id[64];
        size_t n = f ? elf_file_build_id(f, id, sizeof(id)) : 0;
        if (n > sizeof(id))
            n = sizeof(id);
        o->build_id_hex = xmalloc(2 * n + 1);
        build_id_hex(o->build_id_hex, 2 * n + 1, id, n);
    }
    return o->build_id_hex[0] ? o->build_id_hex : NULL;
}

size_t object_func_code(struct object *o, uint64_t vaddr, uint64_t *off, uint8_t *code, size_t max)
{
    struct elf_file *f = object_mapped_elf(o);
    if (!f)
        return 0;
    if (!tried(o, OBJECT_STARTS)) {
        /* The debug file's .symtab when there is one: it also knows the
         * functions a stripped library does not export (exact, sized
         * starts; never a guess from the nearest export). */
        struct debug_object *d = object_debug_object(o);
        struct elf_file *df = d ? debug_object_dwarf_elf(d) : NULL;
        o->starts = symtab_load(f, df != f ? df : NULL);
        load_done(o, OBJECT_STARTS, o->starts ? OBJECT_LOADED : OBJECT_E_ABSENT,
                  "no symbol table");
    }
    *off = 0;
    if (!o->starts || !symtab_lookup(o->starts, vaddr, off))
        return 0;
    uint64_t len = *off < max ? *off : max;
    if (len == 0 || elf_file_read_vaddr(f, vaddr - *off, code, (size_t)len) < 0)
        return 0;
    return (size_t)len;
}

bool object_is_static_executable(struct object *o)
{
    if (!o->executable)
        return false;
    struct elf_file *f = object_mapped_elf(o);
    return f && elf_file_interp(f) == NULL;
}

uint64_t object_export(struct object *o, const char *name)
{
    struct elf_file *f = object_mapped_elf(o);
    uint64_t vaddr = 0;
    if (!f)
        return 0;
    if (symtab_find_export(f, name, &vaddr) == 0 && vaddr)
        return vaddr;
    /* A static executable has no dynamic symbols: its .symtab names them. */
    if (o->executable && elf_file_interp(f) == NULL && symtab_find_local(f, name, &vaddr) == 0 && vaddr)
        return vaddr;
    return 0;
}

uint64_t object_export_code(struct object *o, const char *name)
{
    uint64_t vaddr = object_export(o, name);
    struct elf_file *f = vaddr ? object_mapped_elf(o) : NULL;
    return f && elf_file_machine(f) == EM_ARM ? vaddr & ~(uint64_t)1 : vaddr;
}

void object_each_export(struct object *o, void (*found)(void *ctx, const char *name, uint64_t vaddr),
                        void *ctx)
{
    struct elf_file *f = object_mapped_elf(o);
    if (!f)
        return;
    symtab_each_function(f, 0, found, ctx);
    /* An executable's .symtab, when it kept one, names what it defines
     * but does not export: all of a static one's functions; a dynamic
     * one's global ones (an allocator linked in from its .a: mallocx, which
     * no library references, is in no dynamic table). */
    if (o->executable)
        symtab_each_function(f, elf_file_interp(f) == NULL ? SYMTAB_ALL : SYMTAB_GLOBALS, found,
                             ctx);
}

struct symbolizer *object_symbolizer(struct object *o)
{
    if (!o->sym) {
        struct debug_object *d = object_debug_object(o);
        if (o->dobj_shared && !o->shared->sym)
            o->shared->sym = symbolizer_new(d);
        if (o->dobj_shared)
            o->sym = o->shared->sym;
        else if (d)
            o->sym = symbolizer_new(d);
    }
    return o->sym;
}
