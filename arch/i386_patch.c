/* Entry trampolines for the agent engine on i386 (see i386_patch.h). */
#include "arch/i386_patch.h"
#include "arch/agent_cpu.h"

#include <stdbool.h>
#include <string.h>

#include "arch/x86_insn.h"

static void put_jmp(uint8_t *p, uint32_t at, uint32_t dest)
{
    uint32_t rel = dest - (at + I386_PATCH_JMP_LEN); /* wraps: every address is in reach */
    p[0] = 0xe9;
    for (int i = 0; i < 4; i++)
        p[1 + i] = (uint8_t)(rel >> (8 * i));
}

size_t i386_patch_relocate(const uint8_t *code, size_t avail, uint32_t fn_addr, uint32_t copy_addr,
                           uint8_t *out, size_t cap, unsigned *covered, const char **why)
{
    size_t len = 0;
    unsigned at = 0;
    bool ended = false; /* the copy ends in a jump of its own */
    while (at < I386_PATCH_JMP_LEN && !ended) {
        struct x86_insn in;
        if (!x86_decode(code + at, avail - at, false, &in)) {
            *why = "an instruction the decoder does not know";
            return 0;
        }
        uint32_t addr = fn_addr + at;
        uint32_t here = copy_addr + (uint32_t)len;
        if (in.flow == X86_FLOW_JMP_REL && !in.opsize_prefix) {
            if (at + in.len < I386_PATCH_JMP_LEN) {
                *why = "a jump inside the first 5 bytes";
                return 0;
            }
            if (len + I386_PATCH_JMP_LEN > cap) {
                *why = "entry instructions too long for a slot";
                return 0;
            }
            put_jmp(out + len, here, (uint32_t)x86_branch_target(&in, code + at, addr, false));
            len += I386_PATCH_JMP_LEN;
            ended = true;
        } else if (in.flow == X86_FLOW_NORMAL || in.flow == X86_FLOW_JCC_REL ||
                   in.flow == X86_FLOW_CALL_REL) {
            if (in.flow != X86_FLOW_NORMAL && at + in.len < I386_PATCH_JMP_LEN) {
                *why = "a call or branch going on inside the first 5 bytes";
                return 0;
            }
            struct displace_plan p = x86_displace(code + at, avail - at, addr, here, false);
            if (p.kind == DISPLACE_EMULATE) {
                at += in.len; /* endbr32, nop: nothing to run */
                continue;
            }
            if (p.kind != DISPLACE_OUT_OF_LINE || p.slot_entry != 0 ||
                p.slot_len < I386_PATCH_JMP_LEN) {
                *why = "an entry instruction that cannot run elsewhere";
                return 0;
            }
            /* A plain instruction without its jump back (the next one
             * follows); a call or jcc whole, its jumps already aimed
             * (back into the function past the bytes replaced): the copy
             * ends there. */
            size_t n = in.flow == X86_FLOW_NORMAL ? p.slot_len - I386_PATCH_JMP_LEN : p.slot_len;
            if (len + n + I386_PATCH_JMP_LEN > cap) {
                *why = "entry instructions too long for a slot";
                return 0;
            }
            memcpy(out + len, p.slot_bytes, n);
            len += n;
            ended = in.flow != X86_FLOW_NORMAL;
        } else {
            *why = "a return, indirect jump or system call inside the first 5 bytes";
            return 0;
        }
        at += in.len;
    }
    if (at > I386_PATCH_MAX_COVER) {
        *why = "entry instructions too long";
        return 0;
    }
    if (!ended) {
        if (len + I386_PATCH_JMP_LEN > cap) {
            *why = "entry instructions too long for a slot";
            return 0;
        }
        put_jmp(out + len, copy_addr + (uint32_t)len, fn_addr + at);
        len += I386_PATCH_JMP_LEN;
    }
    *covered = at;
    return len;
}

void i386_patch_stub(uint8_t out[I386_PATCH_STUB_LEN], uint32_t stub_addr, uint32_t index,
                     uint32_t entry)
{
    out[0] = 0xb8; /* mov $index, %eax */
    for (int i = 0; i < 4; i++)
        out[1 + i] = (uint8_t)(index >> (8 * i));
    put_jmp(out + 5, stub_addr + 5, entry);
}

int i386_patch_jump(uint8_t *out, unsigned covered, uint32_t from, uint32_t dest)
{
    if (covered < I386_PATCH_JMP_LEN || covered > I386_PATCH_MAX_COVER)
        return -1;
    put_jmp(out, from, dest);
    memset(out + I386_PATCH_JMP_LEN, 0xcc, covered - I386_PATCH_JMP_LEN);
    return 0;
}

/* The agent_cpu.h patch interface on i386: a jmp rel32 over the first
 * instructions (it reaches every 32-bit address) to a stub in a scratch
 * slot; the stub puts the index in eax. */
unsigned agent_patch_stub_len(void) { return I386_PATCH_STUB_LEN; }
unsigned agent_patch_min_len(void) { return I386_PATCH_JMP_LEN; }

size_t agent_patch_build(const uint8_t *code, size_t avail, uint64_t addr, uint64_t slot, unsigned idx,
                         uint64_t entry, uint8_t *bytes, size_t bytes_cap, uint8_t *jump,
                         unsigned *covered, const char **why)
{
    if (bytes_cap <= I386_PATCH_STUB_LEN)
        return 0;
    size_t n = i386_patch_relocate(code, avail, (uint32_t)addr, (uint32_t)slot + I386_PATCH_STUB_LEN,
                                   bytes + I386_PATCH_STUB_LEN, bytes_cap - I386_PATCH_STUB_LEN, covered,
                                   why);
    if (!n || i386_patch_jump(jump, *covered, (uint32_t)addr, (uint32_t)slot) < 0)
        return 0;
    i386_patch_stub(bytes, (uint32_t)slot, idx, (uint32_t)entry);
    return n;
}
