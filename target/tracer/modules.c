#include "target/tracer/modules.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arch/arch.h"
#include "shared/log.h"
#include "shared/xalloc.h"
#include "target/dwarf/cfi.h"
#include "target/symbols/debug_object.h"
#include "target/symbols/symbolize.h"
#include "target/symbols/symtab.h"
#include "target/unwind/exidx.h"

void module_map_init(struct module_map *mm, pid_t pid, struct file_locator *loc)
{
    memset(mm, 0, sizeof(*mm));
    mm->pid = pid;
    mm->locator = loc;
    char link[64], target[PATH_MAX];
    snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
    ssize_t n = readlink(link, target, sizeof(target) - 1);
    if (n > 0) {
        target[n] = '\0';
        mm->main_path = xstrdup(target);
    }
}

/* Marks a load tried; a failure keeps its reason. */
static void load_done(struct module_load *l, const char *why)
{
    l->tried = true;
    free(l->why);
    l->why = why ? xstrdup(why[0] ? why : "unknown reason") : NULL;
}

const char *module_load_error(const struct module_load *l) { return l->why; }

static void module_free(struct module *m)
{
    free(m->mapped_load.why);
    free(m->dobj_load.why);
    free(m->cfi_load.why);
    if (m->cfi)
        cfi_table_free(m->cfi);
    for (int i = 0; i < 3; i++)
        elf_blob_free(&m->cfi_blobs[i]);
    exidx_table_free(m->exidx);
    if (m->starts)
        symtab_free(m->starts);
    for (int i = 0; i < 2; i++)
        elf_blob_free(&m->exidx_blobs[i]);
    if (m->sym)
        symbolizer_free(m->sym);
    if (m->dobj)
        debug_object_close(m->dobj);
    if (m->mapped)
        elf_file_close(m->mapped);
    free(m->image);
    free(m->path);
    free(m);
}

void module_map_destroy(struct module_map *mm)
{
    for (size_t i = 0; i < mm->count; i++)
        module_free(mm->mods[i]);
    for (size_t i = 0; i < mm->retired_count; i++)
        module_free(mm->retired[i]);
    free(mm->retired);
    free(mm->mods);
    free(mm->main_path);
    free(mm->interp_path);
    memset(mm, 0, sizeof(*mm));
}

struct module *module_find(const struct module_map *mm, uint64_t addr)
{
    size_t lo = 0, hi = mm->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        struct module *m = mm->mods[mid];
        if (addr < m->start)
            hi = mid;
        else if (addr >= m->end)
            lo = mid + 1;
        else
            return m;
    }
    return NULL;
}

/* Unloaded modules kept for symbols: a program that loads and unloads
 * plugins all day must not grow us without bound. */
#define RETIRED_MAX 64

static void module_retire(struct module_map *mm, struct module *m)
{
    /* The same file unloaded from the same place before: the newer copy
     * answers the same. */
    size_t kept = 0;
    for (size_t i = 0; i < mm->retired_count; i++) {
        struct module *r = mm->retired[i];
        if (r->start == m->start && r->inode == m->inode && strcmp(r->path, m->path) == 0)
            module_free(r);
        else
            mm->retired[kept++] = r;
    }
    mm->retired_count = kept;
    if (mm->retired_count == RETIRED_MAX) {
        module_free(mm->retired[0]);
        memmove(mm->retired, mm->retired + 1, (mm->retired_count - 1) * sizeof(*mm->retired));
        mm->retired_count--;
    }
    if (mm->retired_count == mm->retired_cap) {
        mm->retired_cap = mm->retired_cap ? mm->retired_cap * 2 : 8;
        mm->retired = xreallocarray(mm->retired, mm->retired_cap, sizeof(*mm->retired));
    }
    m->intercepts_placed = false;
    mm->retired[mm->retired_count++] = m;
}

struct module *module_find_any(const struct module_map *mm, uint64_t addr)
{
    struct module *m = module_find(mm, addr);
    for (size_t i = mm->retired_count; !m && i > 0; i--) {
        struct module *r = mm->retired[i - 1];
        if (addr >= r->start && addr < r->end)
            m = r;
    }
    return m;
}

static bool is_elf_candidate(const struct map_entry *e)
{
    return e->path && e->path[0] == '/' && e->inode != 0 && strncmp(e->path, "/dev/", 5) != 0 &&
           strncmp(e->path, "/memfd:", 7) != 0;
}

/* The vDSO is an ELF object with no file.  Its CFI covers the kernel's
 * signal trampolines and __kernel_vsyscall, which i386 programs return
 * through: unwinding out of a signal handler crosses them. */
#define VDSO_NAME "[vdso]"
#define VDSO_MAX_SIZE (1u << 20)

static bool is_vdso(const struct map_entry *e)
{
    return e->path && strcmp(e->path, VDSO_NAME) == 0;
}

/* Copies the vDSO's image out of the process once; the module keeps it. */
static struct elf_file *vdso_open(struct module_map *mm, struct module *m)
{
    uint64_t len = m->end - m->start;
    if (len == 0 || len > VDSO_MAX_SIZE)
        return NULL;
    char path[64], err[256];
    snprintf(path, sizeof(path), "/proc/%d/mem", (int)mm->pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    uint8_t *image = xmalloc((size_t)len);
    ssize_t n = pread(fd, image, (size_t)len, (off_t)m->start);
    close(fd);
    if (n != (ssize_t)len) {
        free(image);
        return NULL;
    }
    m->image = image;
    m->image_size = (size_t)len;
    return elf_file_open(byte_source_open_memory(image, (size_t)len, VDSO_NAME), err, sizeof(err));
}

static struct module *module_lookup_exact(struct module_map *mm, uint64_t start, const char *path)
{
    struct module *m = module_find(mm, start);
    if (m && m->start == start && strcmp(m->path, path) == 0)
        return m;
    return NULL;
}

/* The link-time address of a mapping: the PT_LOAD whose page-aligned file
 * offset is the mapping's offset. */
static bool module_compute_bias(struct module_map *mm, struct module *m, uint64_t map_start,
                                uint64_t map_offset)
{
    struct elf_file *f = module_mapped_elf(mm, m);
    if (!f)
        return false;
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    for (size_t i = 0; i < elf_file_segment_count(f); i++) {
        const struct elf_segment *s = elf_file_segment(f, i);
        if (s->type != PT_LOAD)
            continue;
        if ((s->offset & ~(page - 1)) == map_offset) {
            m->bias = map_start - (s->vaddr & ~(page - 1));
            return true;
        }
    }
    return false;
}

static int module_insert(struct module_map *mm, struct module *m)
{
    if (mm->count == mm->cap) {
        mm->cap = mm->cap ? mm->cap * 2 : 32;
        mm->mods = xreallocarray(mm->mods, mm->cap, sizeof(*mm->mods));
    }
    size_t i = mm->count;
    while (i > 0 && mm->mods[i - 1]->start > m->start) {
        mm->mods[i] = mm->mods[i - 1];
        i--;
    }
    mm->mods[i] = m;
    mm->count++;
    return 0;
}

/* The dynamic linker is named by PT_INTERP, but maps may show another path
 * to the same file (/lib64/... against /usr/lib/...): it is the module with
 * the interpreter's inode, confirmed by the canonical path.  Once found it
 * stays marked, so later refreshes cost nothing here. */
static void mark_interp(struct module_map *mm)
{
    struct stat st;
    if (!mm->interp_path || stat(mm->interp_path, &st) < 0)
        return;
    for (size_t i = 0; i < mm->count; i++)
        if (mm->mods[i]->is_interp)
            return;
    char want[PATH_MAX], have[PATH_MAX];
    if (!realpath(mm->interp_path, want))
        return;
    for (size_t i = 0; i < mm->count; i++) {
        struct module *m = mm->mods[i];
        if (m->inode == (uint64_t)st.st_ino && realpath(m->path, have) && strcmp(want, have) == 0) {
            m->is_interp = true;
            return;
        }
    }
}

int module_map_refresh(struct module_map *mm, void (*gone)(void *ctx, struct module *m), void *ctx)
{
    struct proc_maps maps;
    int rc = proc_maps_read(mm->pid, &maps);
    if (rc < 0)
        return rc;
    mm->generation++;
    for (size_t i = 0; i < maps.count;) {
        const struct map_entry *e = &maps.entries[i];
        if (!is_elf_candidate(e) && !is_vdso(e)) {
            i++;
            continue;
        }
        /* One module: consecutive mappings of the same file, starting at
         * the mapping of the lowest offset. */
        size_t j = i + 1;
        uint64_t end = e->end;
        while (j < maps.count && maps.entries[j].path && maps.entries[j].inode == e->inode &&
               strcmp(maps.entries[j].path, e->path) == 0 && maps.entries[j].offset >= e->offset) {
            end = maps.entries[j].end;
            j++;
        }
        struct module *m = module_lookup_exact(mm, e->start, e->path);
        if (m && m->inode == e->inode) {
            m->end = end;
            m->generation = mm->generation;
        } else if (e->offset == 0) {
            m = xcalloc(1, sizeof(*m));
            m->path = xstrdup(e->path);
            m->start = e->start;
            m->end = end;
            m->inode = e->inode;
            m->generation = mm->generation;
            m->is_main = mm->main_path && strcmp(mm->main_path, e->path) == 0;
            if (module_compute_bias(mm, m, e->start, e->offset)) {
                if (!mm->interp_path && m->is_main && m->mapped) {
                    const char *interp = elf_file_interp(m->mapped);
                    if (interp)
                        mm->interp_path = xstrdup(interp);
                }
                module_insert(mm, m);
            } else {
                module_free(m); /* not an ELF object we can read */
            }
        }
        i = j;
    }
    proc_maps_free(&maps);

    size_t kept = 0;
    for (size_t i = 0; i < mm->count; i++) {
        struct module *m = mm->mods[i];
        if (m->generation != mm->generation) {
            if (gone)
                gone(ctx, m);
            module_retire(mm, m);
        } else {
            mm->mods[kept++] = m;
        }
    }
    mm->count = kept;
    mark_interp(mm);
    return 0;
}

struct elf_file *module_mapped_elf(struct module_map *mm, struct module *m)
{
    if (m->mapped || m->mapped_load.tried)
        return m->mapped;
    if (strcmp(m->path, VDSO_NAME) == 0) {
        m->mapped = vdso_open(mm, m);
        load_done(&m->mapped_load, m->mapped ? NULL : "cannot copy the vDSO");
        return m->mapped;
    }
    char path[128], err[256] = "";
    /* map_files names the very file that is mapped, even when the path was
     * replaced or deleted since (a package upgrade). */
    snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)mm->pid, m->start,
             m->end);
    struct byte_source *src = byte_source_open_file(path, err, sizeof(err));
    if (!src) {
        snprintf(path, sizeof(path), "/proc/%d/root", (int)mm->pid);
        char *full = NULL;
        if (asprintf(&full, "%s%s", path, m->path) >= 0) {
            src = byte_source_open_file(full, err, sizeof(err));
            free(full);
        }
    }
    if (!src)
        src = byte_source_open_file(m->path, err, sizeof(err));
    if (src)
        m->mapped = elf_file_open(src, err, sizeof(err));
    load_done(&m->mapped_load, m->mapped ? NULL : err);
    return m->mapped;
}

struct debug_object *module_debug_object(struct module_map *mm, struct module *m)
{
    if (m->dobj || m->dobj_load.tried)
        return m->dobj;
    char err[256] = "";
    if (strcmp(m->path, VDSO_NAME) == 0) {
        /* Its dynamic symbols name the trampolines; a second reader over
         * the same image, owned by the debug object. */
        struct elf_file *f = module_mapped_elf(mm, m) ? elf_file_open(byte_source_open_memory(
                                 m->image, m->image_size, VDSO_NAME), err, sizeof(err))
                                                      : NULL;
        m->dobj = f ? debug_object_from_elf(mm->locator, m->path, f) : NULL;
        load_done(&m->dobj_load, m->dobj ? NULL : "the vDSO image has no symbols");
        return m->dobj;
    }
    m->dobj = debug_object_open(mm->locator, m->path, err, sizeof(err));
    struct elf_file *mapped = module_mapped_elf(mm, m);
    if (m->dobj && mapped) {
        /* A copy from a sysroot or memtrace-fs is used only when it is the
         * same build as what the target maps. */
        uint8_t want[64], have[64];
        size_t wl = elf_file_build_id(mapped, want, sizeof(want));
        size_t hl = elf_file_build_id(debug_object_elf(m->dobj), have, sizeof(have));
        if (wl && (wl != hl || memcmp(want, have, wl) != 0)) {
            mt_warn("%s: the copy found has another build-id than the mapped file; not used",
                    m->path);
            debug_object_close(m->dobj);
            m->dobj = NULL;
            snprintf(err, sizeof(err), "build-id mismatch");
        }
    }
    load_done(&m->dobj_load, m->dobj ? NULL : err);
    if (!m->dobj)
        mt_info("%s: no symbols (%s)", m->path, m->dobj_load.why);
    return m->dobj;
}

static const struct elf_section *load_section(struct elf_file *f, const char *name, struct elf_blob *blob)
{
    const struct elf_section *s = f ? elf_file_find_section(f, name) : NULL;
    if (!s || elf_file_load_section(f, s, blob) < 0)
        return NULL;
    return s;
}

struct cfi_table *module_cfi(struct module_map *mm, struct module *m)
{
    if (m->cfi || m->cfi_load.tried)
        return m->cfi;
    struct elf_file *f = module_mapped_elf(mm, m);
    if (!f) {
        load_done(&m->cfi_load, module_load_error(&m->mapped_load));
        return NULL;
    }
    struct cfi_sources src;
    memset(&src, 0, sizeof(src));
    src.big_endian = elf_file_big_endian(f);
    src.addr_size = elf_file_class(f) == 64 ? 8 : 4;
    const struct elf_section *hdr = load_section(f, ".eh_frame_hdr", &m->cfi_blobs[0]);
    const struct elf_section *eh = load_section(f, ".eh_frame", &m->cfi_blobs[1]);
    if (hdr) {
        src.eh_frame_hdr = m->cfi_blobs[0].data;
        src.eh_frame_hdr_size = m->cfi_blobs[0].size;
        src.eh_frame_hdr_vaddr = hdr->addr;
    }
    if (eh) {
        src.eh_frame = m->cfi_blobs[1].data;
        src.eh_frame_size = m->cfi_blobs[1].size;
        src.eh_frame_vaddr = eh->addr;
    }
    /* .debug_frame lives in the separate debug file when there is one.  It
     * is sought there when .eh_frame has no FDE: lld leaves a lone 4-byte
     * terminator in ARM programs, whose tables are .ARM.exidx (often
     * "cannot unwind" for C) and .debug_frame, so a stripped ARM program
     * unwinds with the debug file's .debug_frame (memtrace -m, -c, -l). */
    bool eh_has_fdes = eh && m->cfi_blobs[1].size > 4;
    struct debug_object *d = eh_has_fdes ? NULL : module_debug_object(mm, m);
    struct elf_file *df = d ? debug_object_dwarf_elf(d) : f;
    if (load_section(df, ".debug_frame", &m->cfi_blobs[2])) {
        src.debug_frame = m->cfi_blobs[2].data;
        src.debug_frame_size = m->cfi_blobs[2].size;
    }
    const struct elf_section *text = elf_file_find_section(f, ".text");
    const struct elf_section *got = elf_file_find_section(f, ".got");
    src.text_vaddr = text ? text->addr : 0;
    src.data_vaddr = got ? got->addr : 0;
    if (!src.eh_frame && !src.debug_frame) {
        load_done(&m->cfi_load, "no .eh_frame or .debug_frame");
        return NULL;
    }
    m->cfi = cfi_table_new(&src);
    load_done(&m->cfi_load, m->cfi ? NULL : "malformed call frame information");
    return m->cfi;
}

struct exidx_table *module_exidx(struct module_map *mm, struct module *m)
{
    if (m->exidx || m->exidx_tried)
        return m->exidx;
    m->exidx_tried = true;
    struct elf_file *f = module_mapped_elf(mm, m);
    const struct elf_section *ix = load_section(f, ".ARM.exidx", &m->exidx_blobs[0]);
    if (!ix)
        return NULL;
    const struct elf_section *tab = load_section(f, ".ARM.extab", &m->exidx_blobs[1]);
    struct exidx_sources src = {
        .big_endian = elf_file_big_endian(f),
        .exidx = m->exidx_blobs[0].data,
        .exidx_size = m->exidx_blobs[0].size,
        .exidx_vaddr = ix->addr,
        .extab = tab ? m->exidx_blobs[1].data : NULL,
        .extab_size = tab ? m->exidx_blobs[1].size : 0,
        .extab_vaddr = tab ? tab->addr : 0,
    };
    m->exidx = exidx_table_new(&src);
    return m->exidx;
}

size_t module_func_code(struct module_map *mm, uint64_t pc, uint64_t *start, uint8_t *code,
                        size_t max)
{
    struct module *m = module_find(mm, pc);
    if (!m)
        return 0;
    struct elf_file *f = module_mapped_elf(mm, m);
    if (!f)
        return 0;
    if (!m->starts_tried) {
        /* The debug file's .symtab when there is one: it also knows the
         * functions a stripped library does not export (exact, sized
         * starts; never a guess from the nearest export). */
        m->starts_tried = true;
        struct debug_object *d = module_debug_object(mm, m);
        struct elf_file *df = d ? debug_object_dwarf_elf(d) : NULL;
        m->starts = symtab_load(f, df != f ? df : NULL);
    }
    uint64_t off = 0;
    if (!m->starts || !symtab_lookup(m->starts, pc - m->bias, &off))
        return 0;
    uint64_t len = off < max ? off : max;
    if (len == 0 || elf_file_read_vaddr(f, pc - m->bias - off, code, (size_t)len) < 0)
        return 0;
    *start = pc - off;
    return (size_t)len;
}

bool module_is_static_executable(struct module_map *mm, uint64_t addr)
{
    struct module *m = module_find(mm, addr);
    if (!m || !m->is_main)
        return false;
    struct elf_file *f = module_mapped_elf(mm, m);
    return f && elf_file_interp(f) == NULL;
}

uint64_t module_export_addr(struct module_map *mm, struct module *m, const char *name)
{
    struct elf_file *f = module_mapped_elf(mm, m);
    uint64_t vaddr = 0;
    if (!f)
        return 0;
    if (symtab_find_export(f, name, &vaddr) == 0 && vaddr)
        return vaddr + m->bias;
    /* A static executable has no dynamic symbols: its .symtab names them. */
    if (m->is_main && elf_file_interp(f) == NULL && symtab_find_local(f, name, &vaddr) == 0 && vaddr)
        return vaddr + m->bias;
    return 0;
}

struct symbolizer *module_symbolizer(struct module_map *mm, struct module *m)
{
    if (!m->sym) {
        struct debug_object *d = module_debug_object(mm, m);
        if (d)
            m->sym = symbolizer_new(d);
    }
    return m->sym;
}
