/* Entry trampolines for the agent engine on aarch64 (see aarch64_patch.h). */
#include "arch/aarch64_patch.h"
#include "arch/agent_cpu.h"

#include <string.h>

#include "arch/aarch64_insn.h"

#define B_REACH (128ll << 20)

static void put32(uint8_t *p, uint32_t w)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(w >> (8 * i));
}

static bool b_reaches(uint64_t from, uint64_t dest)
{
    int64_t off = (int64_t)(dest - from);
    return off >= -B_REACH && off < B_REACH && !(from & 3) && !(dest & 3);
}

static uint32_t b_insn(uint64_t from, uint64_t dest)
{
    return 0x14000000u | ((uint32_t)((dest - from) >> 2) & 0x3ffffffu);
}

size_t a64_patch_relocate(uint32_t insn, uint64_t fn_addr, uint64_t copy_addr, uint8_t *out,
                          size_t cap, const char **why)
{
    if ((fn_addr | copy_addr) & 3) {
        *why = "an entry that is not 4-byte aligned";
        return 0;
    }
    struct displace_plan p = a64_displace(insn, fn_addr, copy_addr);
    if (p.kind == DISPLACE_EMULATE) {
        /* nop, bti or b: nothing to run but the branch on */
        if (b_reaches(copy_addr, p.new_pc)) {
            if (cap < 4)
                goto full;
            put32(out, b_insn(copy_addr, p.new_pc));
            return 4;
        }
        if (cap < 16)
            goto full;
        put32(out, 0x58000050u);     /* ldr x16, .+8 */
        put32(out + 4, 0xd61f0200u); /* br x16 */
        for (int i = 0; i < 8; i++)
            out[8 + i] = (uint8_t)(p.new_pc >> (8 * i));
        return 16;
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

void a64_patch_stub(uint8_t out[A64_PATCH_STUB_LEN], uint32_t index, uint64_t entry)
{
    put32(out, 0xd2800000u | ((index & 0xffffu) << 5) | 17u); /* movz x17, #index */
    put32(out + 4, 0x58000070u);                              /* ldr x16, .+12 */
    put32(out + 8, 0xd61f0200u);                              /* br x16 */
    put32(out + 12, 0xd503201fu);                             /* nop */
    for (int i = 0; i < 8; i++)
        out[16 + i] = (uint8_t)(entry >> (8 * i));
}

int a64_patch_jump(uint8_t out[A64_PATCH_JMP_LEN], uint64_t from, uint64_t dest)
{
    if (!b_reaches(from, dest))
        return -1;
    put32(out, b_insn(from, dest));
    return 0;
}

/* The agent_cpu.h patch interface on aarch64: one B over the first
 * instruction (4 bytes, one aligned word: a thread about to run it runs
 * either the old or the new one, and every thread is stopped anyway) to a
 * stub in a scratch slot near the module. */
unsigned agent_patch_stub_len(void) { return A64_PATCH_STUB_LEN; }
unsigned agent_patch_min_len(void) { return A64_PATCH_JMP_LEN; }

size_t agent_patch_build(const uint8_t *code, size_t avail, uint64_t addr, uint64_t slot, unsigned idx,
                         uint64_t entry, uint8_t *bytes, size_t bytes_cap, uint8_t *jump,
                         unsigned *covered, const char **why)
{
    if (avail < A64_PATCH_JMP_LEN || bytes_cap <= A64_PATCH_STUB_LEN)
        return 0;
    uint32_t insn = (uint32_t)code[0] | (uint32_t)code[1] << 8 | (uint32_t)code[2] << 16 |
                    (uint32_t)code[3] << 24;
    size_t n = a64_patch_relocate(insn, addr, slot + A64_PATCH_STUB_LEN, bytes + A64_PATCH_STUB_LEN,
                                  bytes_cap - A64_PATCH_STUB_LEN, why);
    if (!n || a64_patch_jump(jump, addr, slot) < 0)
        return 0;
    *covered = A64_PATCH_JMP_LEN;
    a64_patch_stub(bytes, idx, entry);
    return n;
}
