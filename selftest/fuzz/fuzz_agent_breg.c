/* libFuzzer target for the agent's reading of CFI expressions
 * (agent_breg_expr, target/agent/agent_rows.c): the bytes come from a
 * module's CFI, untrusted.
 *
 *   selftest/fuzz/run-fuzzers.sh 60 agent_breg
 *
 * The first byte's low bit chooses the form (with DW_OP_deref or not), the
 * rest is the expression, in an exact-size heap copy (ASan sees any read
 * past it).  An accepted expression must say what it said. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "target/agent/agent_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    bool deref = data[0] & 1;
    size_t len = size - 1;
    uint8_t *e = malloc(len ? len : 1);
    memcpy(e, data + 1, len);
    unsigned reg = 0;
    int32_t off = 0;
    if (agent_breg_expr(e, len, deref, &reg, &off)) {
        if (e[0] != 0x70 + reg || (reg != ARCH_DWARF_SP && reg != ARCH_DWARF_FP) ||
            (deref && e[len - 1] != 0x06))
            abort();
    }
    free(e);
    return 0;
}
