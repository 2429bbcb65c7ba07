#include "target/tracer/modules.h"

#include <elf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/xalloc.h"
#include "shared/elf/elf_file.h"
#include "target/tracer/intercept.h"

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

static void module_free(struct module *m)
{
    object_free(m->obj);
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

/* The vDSO is an ELF object with no file (its object copies it from the
 * process). */
static bool is_vdso(const struct map_entry *e)
{
    return e->path && strcmp(e->path, OBJECT_VDSO_NAME) == 0;
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
static bool module_compute_bias(struct module *m, uint64_t map_start, uint64_t map_offset)
{
    struct elf_file *f = object_mapped_elf(m->obj);
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
            m->obj = object_new(&(struct object_origin){ .pid = mm->pid, .path = m->path,
                .start = m->start, .end = m->end, .first_end = e->end, .executable = m->is_main, .locator = mm->locator });
            if (module_compute_bias(m, e->start, e->offset)) {
                struct elf_file *mapped = object_mapped_elf(m->obj);
                if (!mm->interp_path && m->is_main && mapped) {
                    const char *interp = elf_file_interp(mapped);
                    if (interp)
                        mm->interp_path = xstrdup(interp);
                }
                m->place = (struct object_place){ .obj = m->obj, .start = m->start, .end = m->end, .bias = m->bias };
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

struct module *module_map_add(struct module_map *mm, struct object *obj, uint64_t start, uint64_t end,
                              uint64_t bias)
{
    struct module *m = xcalloc(1, sizeof(*m));
    m->path = xstrdup(object_path(obj));
    m->start = start;
    m->end = end;
    m->bias = bias;
    m->generation = mm->generation;
    m->obj = obj;
    m->place = (struct object_place){ .obj = obj, .start = start, .end = end, .bias = bias };
    module_insert(mm, m);
    return m;
}

static struct object_place *space_find(void *map, uint64_t addr)
{
    struct module *m = module_find_any(map, addr);
    return m ? &m->place : NULL;
}

static struct object_place *space_nth(void *map, size_t i)
{
    const struct module_map *mm = map;
    return i < mm->count ? &mm->mods[i]->place : NULL;
}

struct object_space module_map_objects(struct module_map *mm)
{
    return (struct object_space){ .map = mm, .find = space_find, .nth = space_nth };
}

size_t module_func_code(struct module_map *mm, uint64_t pc, uint64_t *start, uint8_t *code,
                        size_t max)
{
    struct module *m = module_find(mm, pc);
    if (!m)
        return 0;
    uint64_t off = 0;
    size_t len = object_func_code(m->obj, pc - m->bias, &off, code, max);
    if (len)
        *start = pc - off;
    return len;
}

bool module_is_static_executable(struct module_map *mm, uint64_t addr)
{
    struct module *m = module_find(mm, addr);
    return m && m->is_main && object_is_static_executable(m->obj);
}

uint64_t module_export_addr(struct module_map *mm, struct module *m, const char *name)
{
    (void)mm;
    uint64_t vaddr = object_export(m->obj, name);
    return vaddr ? vaddr + m->bias : 0;
}

struct sites_ctx {
    struct intercept_site *sites;
    size_t n, cap;
};

static void add_site(void *ctx, const char *name, uint64_t vaddr)
{
    struct sites_ctx *c = ctx;
    intercept_site_add(c->sites, &c->n, c->cap, name, vaddr);
}

size_t module_intercept_sites(struct module_map *mm, struct module *m, struct intercept_site **out)
{
    (void)mm;
    struct sites_ctx c = {.cap = intercept_count()};
    c.sites = xcalloc(c.cap, sizeof(*c.sites));
    object_each_export(m->obj, add_site, &c);
    if (!c.n) {
        free(c.sites);
        *out = NULL;
        return 0;
    }
    for (size_t i = 0; i < c.n; i++)
        c.sites[i].addr += m->bias;
    intercept_sites_sort(c.sites, c.n);
    *out = c.sites;
    return c.n;
}
