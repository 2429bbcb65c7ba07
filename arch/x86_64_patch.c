/* Entry trampolines for the agent engine (see x86_patch.h). */
#include "arch/x86_patch.h"
#include "arch/agent_cpu.h"

#include <string.h>

#include "arch/x86_insn.h"

#define ABS_JMP_LEN 14

static void put_abs_jmp(uint8_t *p, uint64_t dest)
{
    static const uint8_t jmp_mem[6] = {0xff, 0x25, 0, 0, 0, 0};
    memcpy(p, jmp_mem, sizeof(jmp_mem));
    for (int i = 0; i < 8; i++)
        p[6 + i] = (uint8_t)(dest >> (8 * i));
}

size_t x86_patch_relocate(const uint8_t *code, size_t avail, uint64_t fn_addr, uint64_t copy_addr,
                          uint8_t *out, size_t cap, unsigned *covered, const char **why)
{
    size_t len = 0;
    unsigned at = 0;
    bool ended = false; /* the copy ends in a jump of its own */
    while (at < X86_PATCH_JMP_LEN) {
        struct x86_insn in;
        if (!x86_decode(code + at, avail - at, true, &in)) {
            *why = "an instruction the decoder does not know";
            return 0;
        }
        uint64_t addr = fn_addr + at;
        if (in.flow == X86_FLOW_NORMAL) {
            struct displace_plan p =
                x86_displace(code + at, avail - at, addr, copy_addr + len, true);
            if (p.kind == DISPLACE_EMULATE) {
                at += in.len; /* endbr64, nop: nothing to run */
                continue;
            }
            if (p.kind != DISPLACE_OUT_OF_LINE || p.slot_len < ABS_JMP_LEN) {
                *why = "an entry instruction that cannot run elsewhere";
                return 0;
            }
            size_t n = p.slot_len - ABS_JMP_LEN; /* without its jump back */
            if (len + n + ABS_JMP_LEN > cap) {
                *why = "entry instructions too long for a slot";
                return 0;
            }
            memcpy(out + len, p.slot_bytes, n);
            len += n;
        } else if (in.flow == X86_FLOW_JMP_REL && !in.opsize_prefix) {
            if (at + in.len < X86_PATCH_JMP_LEN) {
                *why = "a jump inside the first 5 bytes";
                return 0;
            }
            if (len + ABS_JMP_LEN > cap) {
                *why = "entry instructions too long for a slot";
                return 0;
            }
            put_abs_jmp(out + len, x86_branch_target(&in, code + at, addr, true));
            len += ABS_JMP_LEN;
            ended = true;
        } else if (in.flow == X86_FLOW_JCC_REL && !in.opsize_prefix) {
            /* jcc over a short jump that skips the taken path's jump. */
            if (len + in.len + 2 + ABS_JMP_LEN + ABS_JMP_LEN > cap) {
                *why = "entry instructions too long for a slot";
                return 0;
            }
            memcpy(out + len, code + at, in.len);
            for (unsigned i = 0; i < in.rel_size; i++)
                out[len + in.rel_off + i] = (uint8_t)(i == 0 ? 2 : 0);
            len += in.len;
            out[len++] = 0xeb;
            out[len++] = ABS_JMP_LEN;
            put_abs_jmp(out + len, x86_branch_target(&in, code + at, addr, true));
            len += ABS_JMP_LEN;
        } else {
            *why = "a return, call or indirect jump inside the first 5 bytes";
            return 0;
        }
        at += in.len;
        if (ended)
            break;
    }
    if (at > X86_PATCH_MAX_COVER) {
        *why = "entry instructions too long";
        return 0;
    }
    if (!ended) {
        if (len + ABS_JMP_LEN > cap) {
            *why = "entry instructions too long for a slot";
            return 0;
        }
        put_abs_jmp(out + len, fn_addr + at);
        len += ABS_JMP_LEN;
    }
    *covered = at;
    return len;
}

void x86_patch_stub(uint8_t out[X86_PATCH_STUB_LEN], uint32_t index, uint64_t entry)
{
    out[0] = 0x41; /* mov $index, %r11d */
    out[1] = 0xbb;
    for (int i = 0; i < 4; i++)
        out[2 + i] = (uint8_t)(index >> (8 * i));
    put_abs_jmp(out + 6, entry);
}

int x86_patch_jump(uint8_t *out, unsigned covered, uint64_t from, uint64_t dest)
{
    int64_t rel = (int64_t)(dest - (from + X86_PATCH_JMP_LEN));
    if (rel != (int64_t)(int32_t)rel || covered < X86_PATCH_JMP_LEN)
        return -1;
    out[0] = 0xe9;
    for (int i = 0; i < 4; i++)
        out[1 + i] = (uint8_t)((uint64_t)rel >> (8 * i));
    memset(out + X86_PATCH_JMP_LEN, 0xcc, covered - X86_PATCH_JMP_LEN);
    return 0;
}

/* The agent_cpu.h patch interface on x86_64. */
unsigned agent_patch_stub_len(void) { return X86_PATCH_STUB_LEN; }
unsigned agent_patch_min_len(void) { return X86_PATCH_JMP_LEN; }

size_t agent_patch_build(const uint8_t *code, size_t avail, uint64_t addr, uint64_t slot, unsigned idx,
                         uint64_t entry, uint8_t *bytes, size_t bytes_cap, uint8_t *jump,
                         unsigned *covered, const char **why)
{
    if (bytes_cap <= X86_PATCH_STUB_LEN)
        return 0;
    size_t n = x86_patch_relocate(code, avail, addr, slot + X86_PATCH_STUB_LEN, bytes + X86_PATCH_STUB_LEN,
                                  bytes_cap - X86_PATCH_STUB_LEN, covered, why);
    if (!n || x86_patch_jump(jump, *covered, addr, slot) < 0)
        return 0;
    x86_patch_stub(bytes, idx, entry);
    return n;
}
