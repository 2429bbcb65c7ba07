#include "target/tracer/release_chain.h"

bool release_continues(struct thread *th, const struct intercept_fn *fn, uint64_t sp,
                       uint64_t ret_addr, uint64_t ptr)
{
    if (!fn->releases) {
        /* An allocation in between: a release of the same pointer from
         * the same call site is the program's next release (a loop of
         * new and delete gets the same block each time). */
        th->last_release.fn = NULL;
        return false;
    }
    struct release_entry now = {fn, sp, ret_addr, ptr};
    struct release_entry *last = &th->last_release;
    /* Another function is required: a program calling free(p) twice from
     * one call site in a loop is a double free, not a chain. */
    /* A return address of 0 was not read (calls.c skips the read for a
     * free of a known block): the stack pointer and pointer then decide. */
    bool same_caller = !last->ret_addr || !now.ret_addr || last->ret_addr == now.ret_addr;
    bool chained = last->fn && last->fn != fn && last->sp == now.sp && same_caller &&
                   last->ptr == now.ptr;
    *last = now;
    return chained;
}
