/* Scratch pages in the target: a return trampoline, a "syscall; trap"
 * gadget (inject.c runs system calls there) and displaced-instruction
 * slots.  Pages are mapped by an injected mmap (inject.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "shared/xalloc.h"
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

static int scratch_map_page(struct tracee *t, struct thread *th, uint64_t near, struct scratch_page *out)
{
    /* Ask for a page just below the module: RIP-relative operands of the
     * displaced instructions must stay within reach (+-2 GiB). */
    /* (A static executable sits at 4 MiB: 1 MiB below it is still far
     * above mmap_min_addr.) */
    uint64_t hint = near >= (2u << 20) ? (near - (1u << 20)) & ~(uint64_t)(SCRATCH_PAGE_SIZE - 1) : 0;
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
