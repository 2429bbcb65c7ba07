#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shared/xalloc.h"
#include "target/tracer/guardian.h"
#include "target/tracer/tracee.h"

/* Breakpoints are few (tens) but looked up on every trap: open addressing on
 * the address, never shrunk; a removed breakpoint keeps its slot with
 * addr 0 only when its module is gone. */

static unsigned bp_hash(uint64_t addr, unsigned cap)
{
    return (unsigned)((addr * 0x9e3779b97f4a7c15ull) >> 40) & (cap - 1);
}

struct breakpoint *bp_find(struct tracee *t, uint64_t addr)
{
    if (!t->bps_cap || !addr)
        return NULL;
    for (unsigned i = bp_hash(addr, t->bps_cap);; i = (i + 1) & (t->bps_cap - 1)) {
        struct breakpoint *bp = &t->bps[i];
        if (bp->addr == addr)
            return bp;
        if (!bp->addr && !bp->module_start)
            return NULL;
    }
}

static struct breakpoint *bp_slot(struct breakpoint *tab, unsigned cap, uint64_t addr)
{
    unsigned i = bp_hash(addr, cap);
    while (tab[i].addr)
        i = (i + 1) & (cap - 1);
    return &tab[i];
}

struct breakpoint *bp_add(struct tracee *t, uint64_t addr)
{
    struct breakpoint *bp = bp_find(t, addr);
    if (bp)
        return bp;
    if ((t->bps_count + 1) * 2 > t->bps_cap) {
        unsigned cap = t->bps_cap ? t->bps_cap * 2 : 128;
        struct breakpoint *tab = xcalloc(cap, sizeof(*tab));
        for (unsigned i = 0; i < t->bps_cap; i++)
            if (t->bps[i].addr)
                *bp_slot(tab, cap, t->bps[i].addr) = t->bps[i];
        free(t->bps);
        t->bps = tab;
        t->bps_cap = cap;
    }
    bp = bp_slot(t->bps, t->bps_cap, addr);
    memset(bp, 0, sizeof(*bp));
    bp->addr = addr;
    t->bps_count++;
    return bp;
}

int bp_insert(struct tracee *t, struct breakpoint *bp)
{
    if (bp->inserted)
        return 0;
    uint64_t at = ARCH_CODE_ADDR(bp->addr);
    size_t have = target_mem_read_partial(&t->mem, at, bp->orig, ARCH_BREAKPOINT_LEN);
    unsigned len = have ? arch_breakpoint_for(bp->addr, bp->orig, have, bp->trap) : 0;
    if (len == 0 || len > have)
        return -EFAULT;
    bp->len = (uint8_t)len;
    guardian_note_breakpoint(t->pid, at, bp->orig, bp->trap, len);
    int rc = target_mem_write(&t->mem, at, bp->trap, len);
    if (rc == 0)
        bp->inserted = true;
    else
        guardian_forget_breakpoint(t->pid, at);
    return rc;
}

int bp_remove(struct tracee *t, struct breakpoint *bp)
{
    if (!bp->inserted)
        return 0;
    int rc = target_mem_write(&t->mem, ARCH_CODE_ADDR(bp->addr), bp->orig, bp->len);
    if (rc == 0) {
        bp->inserted = false;
        guardian_forget_breakpoint(t->pid, ARCH_CODE_ADDR(bp->addr));
    }
    return rc;
}

void bp_foreach(struct tracee *t, void (*fn)(struct tracee *, struct breakpoint *, void *), void *ctx)
{
    for (unsigned i = 0; i < t->bps_cap; i++)
        if (t->bps[i].addr)
            fn(t, &t->bps[i], ctx);
}

void bp_forget_module(struct tracee *t, uint64_t module_start)
{
    /* Rebuild the table without the module's breakpoints: simpler than
     * deletion in open addressing, and unloads are rare. */
    unsigned cap = t->bps_cap;
    struct breakpoint *old = t->bps;
    t->bps = xcalloc(cap ? cap : 1, sizeof(*t->bps));
    t->bps_count = 0;
    for (unsigned i = 0; i < cap; i++) {
        if (old[i].addr && old[i].module_start == module_start)
            guardian_forget_breakpoint(t->pid, ARCH_CODE_ADDR(old[i].addr));
        if (!old[i].addr || old[i].module_start == module_start)
            continue;
        *bp_slot(t->bps, cap, old[i].addr) = old[i];
        t->bps_count++;
    }
    free(old);
    /* The displaced-instruction slots of those breakpoints are free again:
     * a plugin loaded and unloaded in a loop reuses its page instead of
     * mapping a new one every few loads.  No thread can be in a slot: it
     * would return into the unmapped module. */
    scratch_release_slots(t, module_start);
}
