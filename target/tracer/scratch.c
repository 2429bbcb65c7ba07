/* Scratch pages in the target: a return trampoline, a "syscall; trap"
 * gadget (inject.c runs system calls there) and displaced-instruction
 * slots.  Pages are mapped by an injected mmap (inject.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "shared/xalloc.h"
#include "target/tracer/map_place.h"
#include "target/tracer/return_sites.h"
#include "target/tracer/tracee.h"

#ifdef SYS_mmap2
#define MMAP_SYSCALL SYS_mmap2
#else
#define MMAP_SYSCALL SYS_mmap
#endif

bool scratch_is_trampoline(const struct tracee *t, uint64_t pc)
{
    for (unsigned i = 0; i < t->scratch_count; i++)
        if (pc == t->scratch[i].addr + SCRATCH_TRAMPOLINE_OFF)
            return true;
    return return_stub_at(t, pc, NULL);
}

uint64_t scratch_trampoline(const struct tracee *t, uint64_t near)
{
    for (unsigned i = 0; i < t->scratch_count; i++)
        if (t->scratch[i].near == near)
            return t->scratch[i].addr + SCRATCH_TRAMPOLINE_OFF;
    return t->scratch_count ? t->scratch[0].addr + SCRATCH_TRAMPOLINE_OFF : 0;
}

#ifdef ARCH_SCRATCH_REACH
/* A free page within ARCH_SCRATCH_REACH of near, by /proc/PID/maps: the
 * top of the nearest gap below it, else the bottom of the nearest above
 * (0: none).  The hint below is taken when that range is free; a big
 * mapping placed next to the libraries (a malloc arena, the agent's
 * shared region) makes the kernel put the page elsewhere, out of reach. */
static uint64_t free_page_near(pid_t pid, uint64_t near)
{
    char path[64], line[512];
    snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    uint64_t prev_hi = 1u << 20, below = 0, above = 0; /* far above mmap_min_addr */
    unsigned long long lo, hi;
    while (fgets(line, sizeof(line), f) && sscanf(line, "%llx-%llx", &lo, &hi) == 2) {
        if (lo >= prev_hi + SCRATCH_PAGE_SIZE) {
            uint64_t top = lo - SCRATCH_PAGE_SIZE;
            if (lo <= near && near - top <= ARCH_SCRATCH_REACH)
                below = top;
            if (!above && prev_hi >= near && prev_hi - near <= ARCH_SCRATCH_REACH)
                above = prev_hi;
        }
        if (hi > prev_hi)
            prev_hi = hi;
    }
    fclose(f);
    return below ? below : above;
}
#endif

static int scratch_map_page(struct tracee *t, struct thread *th, uint64_t near, struct scratch_page *out)
{
    /* A neutral place within reach of the module (map_place.h): above
     * mmap_base for a library, just below the executable for it.  Else a
     * page just below the module, as before: RIP-relative operands of the
     * displaced instructions must stay within reach (+-2 GiB). */
    /* (A static executable sits at 4 MiB: 1 MiB below it is still far
     * above mmap_min_addr.) */
    uint64_t hint = map_place_hint(t->pid, MAP_PLACE_CODE, SCRATCH_PAGE_SIZE, near, NULL);
    if (!hint)
        hint = near >= (2u << 20) ? (near - (1u << 20)) & ~(uint64_t)(SCRATCH_PAGE_SIZE - 1) : 0;
    uint64_t args[6] = {hint, SCRATCH_PAGE_SIZE, PROT_READ | PROT_EXEC,
                        MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0};
    uint64_t addr = 0;
    int rc = inject_syscall(t, th, MMAP_SYSCALL, args, &addr);
    if (rc < 0)
        return rc;
    /* -errno in the target's word (zero-extended from 32 bits on i386). */
    const uint64_t word_max = ARCH_PTR_SIZE == 8 ? UINT64_MAX : UINT32_MAX;
    if (addr > word_max - 4096)
        return -(int)(word_max - addr + 1);
#ifdef ARCH_SCRATCH_REACH
    if ((addr > near ? addr - near : near - addr) > ARCH_SCRATCH_REACH) {
        uint64_t at = free_page_near(t->pid, near), again = 0;
        const uint64_t unmap[6] = {addr, SCRATCH_PAGE_SIZE, 0, 0, 0, 0};
        args[0] = at;
        if (at && inject_syscall(t, th, MMAP_SYSCALL, args, &again) == 0 && again == at) {
            inject_syscall(t, th, SYS_munmap, unmap, &addr);
            addr = at;
        } else if (again && again <= word_max - 4096) {
            const uint64_t undo[6] = {again, SCRATCH_PAGE_SIZE, 0, 0, 0, 0};
            inject_syscall(t, th, SYS_munmap, undo, &again);
        }
    }
#endif
    uint8_t page[SCRATCH_PAGE_SIZE];
    memset(page, arch_breakpoint_insn[0], sizeof(page));
    if (ARCH_BREAKPOINT_LEN > 1) {
        for (size_t off = 0; off + ARCH_BREAKPOINT_LEN <= sizeof(page); off += ARCH_BREAKPOINT_LEN)
            memcpy(page + off, arch_breakpoint_insn, ARCH_BREAKPOINT_LEN);
    }
    memcpy(page + SCRATCH_SYSCALL_OFF, arch_syscall_insn, arch_syscall_insn_len);
    rc = target_mem_write(&t->mem, addr, page, sizeof(page));
    if (rc < 0)
        return rc;
    out->addr = addr;
    out->size = SCRATCH_PAGE_SIZE;
    out->slots_used = 0;
    out->near = near;
    return 0;
}

int scratch_reserve_slot(struct tracee *t, struct thread *th, uint64_t near, uint64_t *slot)
{
    const unsigned slots = (SCRATCH_PAGE_SIZE - SCRATCH_SLOTS_OFF) / SCRATCH_SLOT_SIZE;
    for (unsigned i = 0; i < t->scratch_count; i++) {
        struct scratch_page *p = &t->scratch[i];
        if (p->near == near && p->slots_used < slots) {
            *slot = p->addr + SCRATCH_SLOTS_OFF + (uint64_t)p->slots_used++ * SCRATCH_SLOT_SIZE;
            return 0;
        }
    }
    struct scratch_page page = {0};
    int rc = scratch_map_page(t, th, near, &page);
    if (rc < 0)
        return rc;
    if (t->scratch_count == t->scratch_cap) {
        t->scratch_cap = t->scratch_cap ? t->scratch_cap * 2 : 4;
        t->scratch = xreallocarray(t->scratch, t->scratch_cap, sizeof(*t->scratch));
    }
    page.slots_used = 1;
    t->scratch[t->scratch_count++] = page;
    *slot = page.addr + SCRATCH_SLOTS_OFF;
    return 0;
}

void scratch_release_slots(struct tracee *t, uint64_t near)
{
    for (unsigned i = 0; i < t->scratch_count; i++)
        if (t->scratch[i].near == near)
            t->scratch[i].slots_used = 0;
}
