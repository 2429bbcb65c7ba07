/* The agent's entry has unwind information the target's unwinder finds
 * (issue 29): the agent image of the build's CPU (x86_64, i386, aarch64), copied to an address of its own,
 * has its .eh_frame registered with libgcc_s's __register_frame_info, as
 * the agent registers it in the target (agent_core.inc.c, register_frames);
 * then agent_entry's own call of the function (`call *%r11`, i386
 * `call *%eax`, aarch64 `blr x16`) is run inside a frame built as
 * agent_entry builds it, and the function it calls walks the stack with
 * libgcc's _Unwind_Backtrace, the walk an exception's search phase makes.
 * The oracle is libgcc: the walk must pass the agent's return address and
 * go on to the real caller (the function that entered the frame) and up
 * to main; without the registration it ends at the agent's frame. */
#if defined(__x86_64__) || defined(__i386__) || defined(__aarch64__)
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unwind.h>

#include "target/agent/agent_abi.h"
#include "selftest/unit/test.h"

extern const unsigned char mt_agent_blob[];
extern const unsigned long mt_agent_blob_len;
void __register_frame_info(const void *begin, void *object);
void *__deregister_frame_info(const void *begin);

/* agent_entry's frame, then into the agent's call of the function
 * (call_insn) with the function in the register it calls. */
void enter_like_agent(uintptr_t call_insn, uintptr_t fn);
#if defined(__x86_64__)
/* push rbp, mov rsp->rbp, sub 176; r11 = fn: call *%r11 (41 ff d3) */
static const uint8_t call_bytes[] = {0x41, 0xff, 0xd3};
__asm__(".text\n"
        ".globl enter_like_agent\n"
        "enter_like_agent:\n"
        "  push %rbp\n"
        "  mov %rsp, %rbp\n"
        "  sub $176, %rsp\n"
        "  mov %rsi, %r11\n"
        "  jmp *%rdi\n");
#elif defined(__aarch64__)
/* stp x29, x30, [sp, #-208]!; mov x29, sp; x16 = fn: blr x16 */
static const uint8_t call_bytes[] = {0x00, 0x02, 0x3f, 0xd6};
__asm__(".text\n"
        ".globl enter_like_agent\n"
        "enter_like_agent:\n"
        "  stp x29, x30, [sp, #-208]!\n"
        "  mov x29, sp\n"
        "  mov x16, x1\n"
        "  br x0\n");
#else
/* push ebp, mov esp->ebp, and -16, sub 128; eax = fn: call *%eax (ff d0) */
static const uint8_t call_bytes[] = {0xff, 0xd0};
__asm__(".text\n"
        ".globl enter_like_agent\n"
        "enter_like_agent:\n"
        "  push %ebp\n"
        "  mov %esp, %ebp\n"
        "  and $-16, %esp\n"
        "  sub $128, %esp\n"
        "  mov 12(%ebp), %eax\n"
        "  mov 8(%ebp), %ecx\n"
        "  jmp *%ecx\n");
#endif

static jmp_buf back;
static uintptr_t pcs[32];
static unsigned npcs;

static _Unwind_Reason_Code one_frame(struct _Unwind_Context *ctx, void *arg)
{
    (void)arg;
    if (npcs == 32)
        return _URC_END_OF_STACK;
    pcs[npcs++] = (uintptr_t)_Unwind_GetIP(ctx);
    return _URC_NO_REASON;
}

/* Called by the agent's code: walks, and leaves by longjmp (returning
 * would run the rest of agent_entry on a frame that is not its own). */
static void walker(void)
{
    _Unwind_Backtrace(one_frame, NULL);
    longjmp(back, 1);
}

static volatile uint64_t entered_from; /* the return address into run_once */

__attribute__((noinline)) static void run_once(uintptr_t call_insn)
{
    if (setjmp(back) == 0) {
        enter_like_agent(call_insn, (uintptr_t)walker);
        entered_from = 1; /* not reached */
    }
}

int main(void)
{
    struct agent_header h;
    CHECK(mt_agent_blob_len >= sizeof(h), " no agent image");
    if (failures)
        return test_end("test_agent_eh_frame");
    memcpy(&h, mt_agent_blob, sizeof(h));
    uint8_t *img = mmap(NULL, h.text_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(img != MAP_FAILED);
    memcpy(img, mt_agent_blob, h.text_size);
    /* agent_entry's call of the function */
    uint64_t call_off = 0;
    const size_t cl = sizeof(call_bytes);
    for (uint32_t o = h.entry_off; o + cl <= h.entry_off + 256 && o + cl <= h.text_size; o++)
        if (memcmp(img + o, call_bytes, cl) == 0) {
            call_off = o;
            break;
        }
    CHECK(call_off, " no call of the function in agent_entry");
    /* .eh_frame: after the code, the first CIE (length 0x14, id 0, version 1). */
    uint64_t eh_off = 0;
    for (uint64_t o = (call_off + 7) & ~7ull; o + 16 <= h.text_size; o += 8) { /* (agent.ld: 8-aligned) */
        uint32_t len, id;
        memcpy(&len, img + o, 4);
        memcpy(&id, img + o + 4, 4);
        if (len >= 12 && len < 64 && id == 0 && img[o + 8] == 1 && memcmp(img + o + 9, "zR", 3) == 0) {
            eh_off = o;
            break;
        }
    }
    CHECK(eh_off, " no .eh_frame in the agent's text");
    CHECK(mprotect(img, h.text_size, PROT_READ | PROT_EXEC) == 0);
    if (failures)
        return test_end("test_agent_eh_frame");

    static uint64_t object[16]; /* as agent_data.frame_object */
    CHECK(sizeof(object) == sizeof(((struct agent_data *)0)->frame_object));
    __register_frame_info(img + eh_off, object);
    npcs = 0;
    run_once((uintptr_t)(img + call_off));
    uintptr_t ret_in_agent = (uintptr_t)(img + call_off + cl);
    unsigned at = npcs;
    for (unsigned i = 0; i < npcs; i++)
        if (pcs[i] == ret_in_agent)
            at = i;
    CHECK(at < npcs, " the walk never met the agent's frame (%u frames)", npcs);
    CHECK(at + 1 < npcs && pcs[at + 1] > (uintptr_t)run_once && pcs[at + 1] < (uintptr_t)run_once + 256,
          " the walk did not go from the agent's frame to its caller (%u frames, agent at %u)", npcs, at);
    CHECK(at + 2 < npcs && pcs[at + 2] > (uintptr_t)main && pcs[at + 2] < (uintptr_t)main + 4096,
          " the walk did not reach main");
    unsigned with = npcs;

    /* The same without the registration: the walk stops at the agent. */
    CHECK(__deregister_frame_info(img + eh_off) == object);
    npcs = 0;
    run_once((uintptr_t)(img + call_off));
    CHECK(npcs > 0 && pcs[npcs - 1] == ret_in_agent,
          " unregistered, the walk should end at the agent's frame (%u frames)", npcs);
    printf("frames walked: %u registered, %u not\n", with, npcs);
    return test_end("test_agent_eh_frame");
}
#else
#include <stdio.h>
int main(void)
{
    printf("test_agent_eh_frame: ok (no agent on this CPU)\n");
    return 0;
}
#endif
