/* libFuzzer target for the agent engine's ring decoder (target/agent): the
 * traced process writes the rings, so the tracer reads them as untrusted.
 *
 *   selftest/fuzz/run-fuzzers.sh 60 agent_ring
 *
 * The input is a ring's bytes (its size rounded down to 16; the first 8
 * bytes choose the starting position).  Every record the decoder accepts
 * is read whole, as the replay reads it: its stack copy included. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "target/agent/agent.h"
#include "target/agent/agent_abi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 8)
        return 0;
    uint64_t tail;
    memcpy(&tail, data, 8);
    size_t ring_size = (size - 8) & ~(size_t)(AGENT_REC_ALIGN - 1);
    if (ring_size < 16)
        return 0;
    /* An exact-size heap copy: ASan sees any read past the ring. */
    uint8_t *ring = malloc(ring_size);
    memcpy(ring, data + 8, ring_size);
    tail %= ring_size * 4;
    uint64_t prev[AGENT_MEMO_MAX];
    unsigned prev_n = 0;
    for (int i = 0; i < 64; i++) {
        struct agent_rec h;
        const struct agent_rec *rec = &h;
        const uint8_t *stack = NULL;
        uint64_t next = tail;
        int rc = agent_ring_next(ring, ring_size, tail, AGENT_MAX_FNS, &h, &stack, &next);
        if (rc <= 0)
            break;
        volatile uint64_t sum = rec->args[0] + rec->ret + rec->rsp;
        /* both windows of a raw record, as replayed */
        for (uint64_t k = 0; k < agent_rec_payload(rec); k++)
            sum += stack[k];
        if (rec->kind == AGENT_REC_PCS) {
            /* the stack's expansion against the previous ones, as replayed */
            const uint64_t *pcs = NULL;
            unsigned n = agent_pcs_expand(prev, &prev_n, stack, rec->stack_len, &pcs);
            for (unsigned k = 0; k < n; k++)
                sum += pcs[k];
            if (prev_n > AGENT_MEMO_MAX)
                abort();
        }
        (void)sum;
        if (next <= tail)
            abort(); /* the decoder must always move on */
        tail = next;
    }
    free(ring);
    return 0;
}
