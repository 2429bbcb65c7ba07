/* Entry trampolines for the agent engine on arm (see arm_patch.h). */
#include "arch/arm_patch.h"
#include "arch/agent_cpu.h"

#include <stdbool.h>
#include <string.h>

#include "arch/arm_insn.h"
#include "arch/thumb_insn.h"

#define T_BW_REACH (16l << 20)
#define A_B_REACH (32l << 20)
#define NOP16 0xbf00u

static void put16(uint8_t *p, uint32_t h)
{
    p[0] = (uint8_t)h;
    p[1] = (uint8_t)(h >> 8);
}

static void put32(uint8_t *p, uint32_t w)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(w >> (8 * i));
}

/* A 16-bit instruction after which the function's flow does not reach the
 * next one: bx rm, mov pc, rm, pop {..., pc}, b. */
static bool ends_flow16(uint32_t hw)
{
    return (hw & 0xff80u) == 0x4700u || (hw & 0xff87u) == 0x4687u || (hw & 0xff00u) == 0xbd00u ||
           (hw & 0xf800u) == 0xe000u;
}

/* An absolute jump to target (bit 0: Thumb) from Thumb code at out[*pos],
 * word aligned by a nop first: ldr.w pc, [pc, #0]; .word target. */
static bool thumb_jump(uint8_t *out, size_t cap, size_t *pos, uint32_t target)
{
    size_t need = (*pos & 2) + 8;
    if (*pos + need > cap)
        return false;
    if (*pos & 2) {
        put16(out + *pos, NOP16);
        *pos += 2;
    }
    put16(out + *pos, 0xf8dfu);
    put16(out + *pos + 2, 0xf000u);
    put32(out + *pos + 4, target);
    *pos += 8;
    return true;
}

static size_t thumb_relocate(const uint8_t *code, size_t avail, uint32_t fn, uint32_t copy, uint8_t *out,
                             size_t cap, const char **why)
{
    size_t pos = 0;
    /* A function that is one tail branch (b.n, 2 bytes) and a nop: gcc's
     * padding, after a branch that ends the flow, so that the next
     * function starts word aligned (jemalloc's operator new[] on armhf is
     * `b.n operator new; nop`).  The jump may cover the nop, which nothing
     * runs; the copy is a jump to the branch's target.  Only at a word
     * address: the nop is taken for padding, not for the entry of a
     * function at fn + 2 that begins with a nop. */
    if ((fn & 3) == 0 && avail >= 4 && (code[1] & 0xf8u) == 0xe0u &&
        ((uint32_t)code[2] | (uint32_t)code[3] << 8) == NOP16) {
        struct displace_plan p = thumb_displace(code, 2, fn, copy);
        if (p.kind == DISPLACE_EMULATE) {
            if (!thumb_jump(out, cap, &pos, (uint32_t)p.new_pc))
                goto full;
            return pos;
        }
    }
    for (uint32_t off = 0; off < ARM_PATCH_JMP_LEN;) {
        if (avail < off + 2)
            goto short_fn;
        uint32_t hw = (uint32_t)code[off] | (uint32_t)code[off + 1] << 8;
        unsigned len = thumb_insn_len((uint16_t)hw);
        if (avail < off + len)
            goto short_fn;
        if ((hw & 0xff00u) == 0xbf00u && (hw & 0xfu)) {
            *why = "an IT block among its first instructions";
            return 0;
        }
        bool last = off + len >= ARM_PATCH_JMP_LEN;
        if (!last && ends_flow16(hw))
            goto short_fn;
        struct displace_plan p;
        if (!last) {
            /* Runs unchanged into the next one's copy, or rewritten with a
             * jump to it (sized first: the length does not depend on where
             * it jumps). */
            p = thumb_displace_to(code + off, avail - off, fn + off, 0, THUMB_NEXT_INLINE);
            if (p.kind != DISPLACE_OUT_OF_LINE) {
                if (pos & 2) {
                    if (pos + 2 > cap)
                        goto full;
                    put16(out + pos, NOP16);
                    pos += 2;
                }
                p = thumb_displace_to(code + off, avail - off, fn + off, copy + (uint32_t)pos, 1);
                if (p.kind == DISPLACE_OUT_OF_LINE)
                    p = thumb_displace_to(code + off, avail - off, fn + off, copy + (uint32_t)pos,
                                          copy + (uint32_t)pos + p.slot_len);
            }
        } else {
            if (pos & 2) {
                if (pos + 2 > cap)
                    goto full;
                put16(out + pos, NOP16);
                pos += 2;
            }
            p = thumb_displace(code + off, avail - off, fn + off, copy + (uint32_t)pos);
        }
        if (p.kind == DISPLACE_EMULATE && last) {
            /* nop or b: only the jump on */
            if (!thumb_jump(out, cap, &pos, (uint32_t)p.new_pc))
                goto full;
        } else if (p.kind == DISPLACE_OUT_OF_LINE && (p.slot_entry == 1 || p.slot_len == 0)) {
            if (pos + p.slot_len > cap)
                goto full;
            memcpy(out + pos, p.slot_bytes, p.slot_len);
            pos += p.slot_len;
        } else {
            *why = "an entry instruction that cannot run elsewhere";
            return 0;
        }
        /* (a 32-bit second instruction sticks out of the jump by two
         * bytes: its copy goes on after its end, those bytes stay) */
        off += len;
    }
    return pos;
short_fn:
    *why = "a function shorter than the jump to its stub";
    return 0;
full:
    *why = "entry instructions too long for a slot";
    return 0;
}

static size_t arm_relocate(const uint8_t *code, size_t avail, uint32_t fn, uint32_t copy, uint8_t *out,
                           size_t cap, const char **why)
{
    if (avail < 4 || (fn & 3)) {
        *why = "an ARM entry that is not 4-byte aligned";
        return 0;
    }
    uint32_t word = (uint32_t)code[0] | (uint32_t)code[1] << 8 | (uint32_t)code[2] << 16 |
                    (uint32_t)code[3] << 24;
    struct displace_plan p = arm_displace(word, fn, copy);
    if (p.kind == DISPLACE_EMULATE) {
        if (cap < 8)
            goto full;
        put32(out, 0xe51ff004u); /* ldr pc, [pc, #-4] */
        put32(out + 4, (uint32_t)p.new_pc);
        return 8;
    }
    if (p.kind != DISPLACE_OUT_OF_LINE || p.slot_entry != 0 || p.slot_len == 0) {
        *why = "an entry instruction that cannot run elsewhere";
        return 0;
    }
    if (p.slot_len > cap)
        goto full;
    memcpy(out, p.slot_bytes, p.slot_len);
    return p.slot_len;
full:
    *why = "entry instruction too long for a slot";
    return 0;
}

size_t arm_patch_relocate(const uint8_t *code, size_t avail, uint32_t fn_addr, uint32_t copy_addr,
                          uint8_t *out, size_t cap, const char **why)
{
    if (copy_addr & 3) {
        *why = "a copy that is not 4-byte aligned";
        return 0;
    }
    if (fn_addr & 1)
        return thumb_relocate(code, avail, fn_addr & ~1u, copy_addr, out, cap, why);
    return arm_relocate(code, avail, fn_addr, copy_addr, out, cap, why);
}

void arm_patch_stub(uint8_t out[ARM_PATCH_STUB_LEN], uint32_t fn_addr, uint32_t index, uint32_t entry)
{
    index &= 0xffffu;
    if (fn_addr & 1) {
        /* movw ip, #index (T3); ldr.w pc, [pc, #0] */
        put16(out, 0xf240u | ((index >> 11) & 1u) << 10 | (index >> 12));
        put16(out + 2, ((index >> 8) & 7u) << 12 | 12u << 8 | (index & 0xffu));
        put16(out + 4, 0xf8dfu);
        put16(out + 6, 0xf000u);
    } else {
        put32(out, 0xe300c000u | (index >> 12) << 16 | (index & 0xfffu)); /* movw ip, #index */
        put32(out + 4, 0xe51ff004u);                                       /* ldr pc, [pc, #-4] */
    }
    put32(out + 8, entry);
}

int arm_patch_jump(uint8_t out[ARM_PATCH_JMP_LEN], uint32_t fn_addr, uint32_t dest)
{
    if (dest & 3)
        return -1;
    if (fn_addr & 1) {
        uint32_t from = fn_addr & ~1u;
        int64_t off = (int64_t)dest - (int64_t)(from + 4);
        if (off < -T_BW_REACH || off >= T_BW_REACH)
            return -1;
        uint32_t v = (uint32_t)off;
        uint32_t s = (v >> 24) & 1, i1 = (v >> 23) & 1, i2 = (v >> 22) & 1;
        uint32_t j1 = (~i1 ^ s) & 1, j2 = (~i2 ^ s) & 1;
        put16(out, 0xf000u | s << 10 | ((v >> 12) & 0x3ffu));
        put16(out + 2, 0x9000u | j1 << 13 | j2 << 11 | ((v >> 1) & 0x7ffu));
        return 0;
    }
    if (fn_addr & 3)
        return -1;
    int64_t off = (int64_t)dest - (int64_t)(fn_addr + 8);
    if (off < -A_B_REACH || off >= A_B_REACH)
        return -1;
    put32(out, 0xea000000u | (((uint32_t)off >> 2) & 0xffffffu));
    return 0;
}

/* The agent_cpu.h patch interface on arm: one 4-byte branch over the
 * entry (every thread is stopped, none inside those bytes: step_out) to a
 * stub in a scratch slot near the module.  The kernel keeps the caches
 * coherent for the writes through /proc/PID/mem (flush_ptrace_access), as
 * for the breakpoint engine's traps. */
unsigned agent_patch_stub_len(void) { return ARM_PATCH_STUB_LEN; }
unsigned agent_patch_min_len(void) { return ARM_PATCH_JMP_LEN; }

size_t agent_patch_build(const uint8_t *code, size_t avail, uint64_t addr, uint64_t slot, unsigned idx,
                         uint64_t entry, uint8_t *bytes, size_t bytes_cap, uint8_t *jump,
                         unsigned *covered, const char **why)
{
    if (avail < ARM_PATCH_JMP_LEN || bytes_cap <= ARM_PATCH_STUB_LEN || addr > UINT32_MAX ||
        slot > UINT32_MAX || entry > UINT32_MAX)
        return 0;
    size_t n = arm_patch_relocate(code, avail, (uint32_t)addr, (uint32_t)slot + ARM_PATCH_STUB_LEN,
                                  bytes + ARM_PATCH_STUB_LEN, bytes_cap - ARM_PATCH_STUB_LEN, why);
    if (!n || arm_patch_jump(jump, (uint32_t)addr, (uint32_t)slot) < 0)
        return 0;
    *covered = ARM_PATCH_JMP_LEN;
    arm_patch_stub(bytes, (uint32_t)addr, idx, (uint32_t)entry);
    return n;
}
