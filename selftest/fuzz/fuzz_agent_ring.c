/* libFuzzer target for the agent engine's ring decoder (target/agent): the
 * traced process writes the rings, so the tracer reads them as untrusted.
 *
 *   selftest/fuzz/run-fuzzers.sh 60 agent_ring
 *
 * The input is a ring's bytes (its size rounded down to a power of two;
 * the first 8 bytes choose the starting position, the next 8 the ring's
 * base: rings by demand begin anywhere).  Every record the decoder accepts
 * is read whole, as the replay reads it: its stack copy included; a move
 * record (rc 2) goes on in the same bytes from a base the input chose. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "target/agent/agent.h"
#include "target/agent/agent_abi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 16)
        return 0;
    uint64_t tail, base;
    memcpy(&tail, data, 8);
    memcpy(&base, data + 8, 8);
    size_t ring_size = 16;
    while (ring_size * 2 <= size - 16)
        ring_size *= 2;
    if (size - 16 < 16)
        return 0;
    /* An exact-size heap copy: ASan sees any read past the ring. */
    uint8_t *ring = malloc(ring_size);
    memcpy(ring, data + 16, ring_size);
    tail = base + tail % (ring_size * 4);
    uint64_t prev[AGENT_MEMO_MAX];
    unsigned prev_n = 0;
    for (int i = 0; i < 64; i++) {
        struct agent_rec h;
        const struct agent_rec *rec = &h;
        const uint8_t *stack = NULL;
        uint64_t next = tail;
        int rc = agent_ring_next(ring, ring_size, base, tail, AGENT_MAX_FNS, &h, &stack, &next);
        if (rc <= 0)
            break;
        if (rc == 2) {
            if (next != tail + 16)
                abort();
            /* the new ring's base, as a hostile slot might state it */
            base = next - (next % 48);
            tail = next;
            continue;
        }
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
