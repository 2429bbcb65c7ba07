/* libFuzzer target for the x86 decoder and displaced-execution planner.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -I. \
 *       selftest/fuzz/fuzz_x86_insn.c arch/x86_insn.c -o fuzz_x86_insn
 *
 * Input: byte 0 picks the mode (bit 0: 64-bit) and bytes 1-8 the distance
 * from the instruction to the slot; the rest are instruction bytes.  Besides
 * the sanitizers, the decoder's own invariants are checked. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86_insn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int cond)
{
    if (!cond)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 9)
        return 0;
    bool mode64 = data[0] & 1;
    int64_t distance;
    memcpy(&distance, data + 1, sizeof(distance));
    const uint8_t *code = data + 9;
    size_t avail = size - 9;

    struct x86_insn in;
    if (x86_decode(code, avail, mode64, &in)) {
        check(in.len >= 1 && in.len <= X86_INSN_MAX_LEN && in.len <= avail);
        check(in.disp_off + in.disp_size <= in.len);
        check(in.imm_off + in.imm_size <= in.len);
        check(in.opcode_off < in.len);
        check(in.rel_off + in.rel_size <= in.len);
        /* The length is decided by the instruction's own bytes only. */
        struct x86_insn again;
        check(x86_decode(code, in.len, mode64, &again) && again.len == in.len);
        check(!x86_decode(code, in.len - 1, mode64, &again));
    }

    uint64_t insn_addr = 0x7f0000001000ull;
    if (!mode64)
        insn_addr = 0x08048000u;
    uint64_t slot_addr = insn_addr + (uint64_t)distance;
    if (!mode64)
        slot_addr &= 0xffffffffu;
    struct displace_plan plan = x86_displace(code, avail, insn_addr, slot_addr, mode64);
    check(plan.kind == DISPLACE_UNSUPPORTED || plan.kind == DISPLACE_EMULATE ||
          plan.kind == DISPLACE_OUT_OF_LINE);
    check(plan.insn_len <= avail && plan.insn_len <= X86_INSN_MAX_LEN);
    check(plan.slot_len <= ARCH_DISPLACE_SLOT_MAX);
    if (plan.kind == DISPLACE_OUT_OF_LINE) {
        /* The slot starts with a decodable instruction. */
        struct x86_insn first;
        check(plan.slot_len > 0 && x86_decode(plan.slot_bytes, plan.slot_len, mode64, &first));
    }
    return 0;
}
