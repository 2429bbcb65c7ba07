/* call_restore_saved_returns (target/tracer/calls.c): on arm/aarch64 an
 * intercepted call's return address is in lr (ret_slot 0) and the callee
 * may have saved our trampoline address in its frame.  At detach each
 * saved copy between the thread's sp (or the inner call's entry sp) and a
 * call's entry sp must get that call's own return address back; nothing
 * outside those ranges may change.  Runs on every CPU: the "target" is this
 * process, written through /proc/self/mem as the tracer writes a tracee. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "target/tracer/calls.h"
#include "target/tracer/tracee.h"

static int failures;

#define CHECK(cond)                                                                    \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);            \
            failures++;                                                                \
        }                                                                              \
    } while (0)

#if ARCH_PTR_SIZE == 4
typedef uint32_t word;
#else
typedef uint64_t word;
#endif

int main(void)
{
    /* A fake scratch page: its trampoline is what callees saved. */
    struct scratch_page page = {.addr = 0x7000000, .size = 4096, .near = 0};
    struct tracee t;
    memset(&t, 0, sizeof(t));
    t.scratch = &page;
    t.scratch_count = 1;
    const word tramp = (word)(page.addr + SCRATCH_TRAMPOLINE_OFF);

    /* The "stack": index 0 is the lowest address. */
    static word stack[64];
    for (unsigned i = 0; i < 64; i++)
        stack[i] = 0x1000 + i;
    const uint64_t base = (uint64_t)(uintptr_t)stack;
#define AT(i) (base + (uint64_t)(i) * sizeof(word))
    stack[4] = tramp;       /* inner call's saved lr (range [sp, inner entry)) */
    stack[5] = tramp | 1;   /* a Thumb-bit copy: the same trampoline on arm */
    stack[20] = tramp;      /* outer call's saved lr (range [inner entry, outer entry)) */
    stack[40] = tramp;      /* above the outer call's entry sp: not ours to touch */
    stack[1] = tramp;       /* below sp: dead stack, not touched */

    struct pending_call calls[2];
    memset(calls, 0, sizeof(calls));
    calls[0].orig_ret = 0xaaaa0;   /* outer */
    calls[0].entry_sp = AT(32);
    calls[1].orig_ret = 0xbbbb0;   /* inner (a malloc in a signal handler) */
    calls[1].entry_sp = AT(10);
    struct thread th;
    memset(&th, 0, sizeof(th));
    th.tid = getpid();
    th.calls = calls;
    th.ncalls = 2;

    struct target_mem mem;
    if (target_mem_open(&mem, getpid()) != 0) {
        fprintf(stderr, "cannot open /proc/self/mem\n");
        return 1;
    }
    call_restore_saved_returns(&t, &mem, &th, AT(2));
    target_mem_close(&mem);

    bool thumb_is_code_bit = ARCH_CODE_ADDR((uint64_t)1) == 0;
    CHECK(stack[4] == 0xbbbb0);
    CHECK(stack[5] == (thumb_is_code_bit ? 0xbbbb0 : (tramp | 1)));
    CHECK(stack[20] == 0xaaaa0);
    CHECK(stack[40] == tramp);
    CHECK(stack[1] == tramp);
    for (unsigned i = 0; i < 64; i++)
        if (i != 1 && i != 4 && i != 5 && i != 20 && i != 40)
            CHECK(stack[i] == 0x1000 + i);
    if (failures)
        return 1;
    printf("test_restore_returns: ok\n");
    return 0;
}
