#include "target/tracer/return_sites.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "shared/xalloc.h"
#include "target/tracer/map_place.h"
#include "target/tracer/tracee.h"

#ifdef ARCH_RETURN_STUB_LEN

#define STUB_PAGE_SIZE 4096u
#define STUBS_PER_PAGE (STUB_PAGE_SIZE / ARCH_RETURN_STUB_LEN)
/* 64 pages: 16384 distinct call sites; beyond, the shared trampoline. */
#define STUB_PAGES_MAX 64u

#ifdef SYS_mmap2
#define MMAP_SYSCALL SYS_mmap2
#else
#define MMAP_SYSCALL SYS_mmap
#endif

struct stub_page {
    uint64_t addr;
    unsigned used;
    uint64_t rets[STUBS_PER_PAGE];  /* where each stub jumps */
};

struct site {
    uint64_t ret;   /* 0: empty slot */
    uint64_t stub;
};

struct return_sites {
    struct stub_page *pages[STUB_PAGES_MAX];
    unsigned npages;
    struct site *tab;   /* open addressing on ret */
    unsigned cap, count;
    bool no_more;       /* a page could not be mapped: stop trying */
};

static unsigned site_hash(uint64_t ret, unsigned cap)
{
    return (unsigned)((ret * 0x9e3779b97f4a7c15ull) >> 40) & (cap - 1);
}

static struct site *site_slot(struct site *tab, unsigned cap, uint64_t ret)
{
    unsigned i = site_hash(ret, cap);
    while (tab[i].ret && tab[i].ret != ret)
        i = (i + 1) & (cap - 1);
    return &tab[i];
}

static void grow(struct return_sites *rs)
{
    unsigned cap = rs->cap ? rs->cap * 2 : 256;
    struct site *tab = xcalloc(cap, sizeof(*tab));
    for (unsigned i = 0; i < rs->cap; i++)
        if (rs->tab[i].ret)
            *site_slot(tab, cap, rs->tab[i].ret) = rs->tab[i];
    free(rs->tab);
    rs->tab = tab;
    rs->cap = cap;
}

/* A new page of int3s.  The system call runs in the scratch page's
 * "syscall; trap" gadget, never at th's PC: other threads keep running. */
static struct stub_page *map_page(struct tracee *t, struct thread *th)
{
    if (!t->scratch_count)
        return NULL;
    /* Out of the way of the program's own mappings (map_place.h); the
     * stubs jump to absolute addresses, so anywhere will do. */
    uint64_t hint = map_place_hint(t->pid, MAP_PLACE_SMALL, STUB_PAGE_SIZE, 0, NULL);
    uint64_t args[6] = {hint, STUB_PAGE_SIZE, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
                        (uint64_t)-1, 0};
    uint64_t addr = 0;
    if (inject_syscall(t, th, MMAP_SYSCALL, args, &addr) < 0 || addr > (uint64_t)-4096 || !addr)
        return NULL;
    uint8_t fill[STUB_PAGE_SIZE];
    for (size_t off = 0; off + ARCH_BREAKPOINT_LEN <= sizeof(fill); off += ARCH_BREAKPOINT_LEN)
        memcpy(fill + off, arch_breakpoint_insn, ARCH_BREAKPOINT_LEN);
    if (target_mem_write(&t->mem, addr, fill, sizeof(fill)) < 0)
        return NULL;
    struct stub_page *p = xcalloc(1, sizeof(*p));
    p->addr = addr;
    return p;
}

uint64_t return_stub_for(struct tracee *t, struct thread *th, uint64_t ret_addr)
{
    if (!ret_addr)
        return 0;
    if (!t->ret_sites)
        t->ret_sites = xcalloc(1, sizeof(*t->ret_sites));
    struct return_sites *rs = t->ret_sites;
    if (rs->cap) {
        struct site *s = site_slot(rs->tab, rs->cap, ret_addr);
        if (s->ret)
            return s->stub;
    }
    if (rs->no_more)
        return 0;
    struct stub_page *p = rs->npages ? rs->pages[rs->npages - 1] : NULL;
    if (!p || p->used == STUBS_PER_PAGE) {
        if (rs->npages == STUB_PAGES_MAX || !(p = map_page(t, th))) {
            rs->no_more = true;
            return 0;
        }
        rs->pages[rs->npages++] = p;
    }
    uint64_t stub = p->addr + (uint64_t)p->used * ARCH_RETURN_STUB_LEN;
    uint8_t code[ARCH_RETURN_STUB_LEN];
    arch_return_stub(code, stub, ret_addr);
    if (target_mem_write(&t->mem, stub, code, sizeof(code)) < 0)
        return 0;
    p->rets[p->used++] = ret_addr;
    if ((rs->count + 1) * 2 > rs->cap)
        grow(rs);
    struct site *s = site_slot(rs->tab, rs->cap, ret_addr);
    s->ret = ret_addr;
    s->stub = stub;
    rs->count++;
    return stub;
}

bool return_stub_at(const struct tracee *t, uint64_t pc, uint64_t *ret_addr)
{
    const struct return_sites *rs = t->ret_sites;
    if (!rs)
        return false;
    for (unsigned i = 0; i < rs->npages; i++) {
        const struct stub_page *p = rs->pages[i];
        if (pc < p->addr || pc - p->addr >= STUB_PAGE_SIZE)
            continue;
        uint64_t off = pc - p->addr;
        if (off % ARCH_RETURN_STUB_LEN || off / ARCH_RETURN_STUB_LEN >= p->used)
            return false;
        if (ret_addr)
            *ret_addr = p->rets[off / ARCH_RETURN_STUB_LEN];
        return true;
    }
    return false;
}

void return_sites_clone(struct tracee *child, const struct tracee *parent)
{
    const struct return_sites *rs = parent->ret_sites;
    if (!rs)
        return;
    struct return_sites *c = xmalloc(sizeof(*c));
    *c = *rs;
    for (unsigned i = 0; i < rs->npages; i++) {
        c->pages[i] = xmalloc(sizeof(*c->pages[i]));
        *c->pages[i] = *rs->pages[i];
    }
    c->tab = rs->cap ? xreallocarray(NULL, rs->cap, sizeof(*c->tab)) : NULL;
    if (rs->cap)
        memcpy(c->tab, rs->tab, rs->cap * sizeof(*c->tab));
    child->ret_sites = c;
}

void return_sites_free(struct tracee *t)
{
    struct return_sites *rs = t->ret_sites;
    if (!rs)
        return;
    for (unsigned i = 0; i < rs->npages; i++)
        free(rs->pages[i]);
    free(rs->tab);
    free(rs);
    t->ret_sites = NULL;
}

size_t return_sites_memory(const struct tracee *t)
{
    const struct return_sites *rs = t->ret_sites;
    if (!rs)
        return 0;
    return sizeof(*rs) + rs->npages * sizeof(struct stub_page) + rs->cap * sizeof(struct site);
}

#else /* no stubs on this CPU: the shared trampoline serves every call */

uint64_t return_stub_for(struct tracee *t, struct thread *th, uint64_t ret_addr)
{
    (void)t;
    (void)th;
    (void)ret_addr;
    return 0;
}

bool return_stub_at(const struct tracee *t, uint64_t pc, uint64_t *ret_addr)
{
    (void)t;
    (void)pc;
    (void)ret_addr;
    return false;
}

void return_sites_clone(struct tracee *child, const struct tracee *parent)
{
    (void)child;
    (void)parent;
}

void return_sites_free(struct tracee *t) { (void)t; }

size_t return_sites_memory(const struct tracee *t)
{
    (void)t;
    return 0;
}

#endif
