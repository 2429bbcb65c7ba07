/* engine_fallback.sh: a program whose own pvalloc (exported, so it wins
 * over libc's) begins with a 2-byte jump.  The agent's trampoline needs the
 * first 5 bytes and cannot move a jump that lands inside them, so the agent
 * refuses this function; memtrace must then trace the whole process with
 * breakpoints, which intercept it.  Figures: valgrind's for the same run. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>

void *pvalloc_impl(size_t n);

__asm__(".text\n"
        ".globl pvalloc\n"
        ".type pvalloc, @function\n"
        "pvalloc:\n"
        "\tjmp 1f\n"
        "1:\tjmp pvalloc_impl\n"
        ".size pvalloc, .-pvalloc\n");

void *pvalloc_impl(size_t n)
{
    size_t page = 4096;
    return memalign(page, n ? (n + page - 1) / page * page : page);
}

int main(void)
{
    static void *kept[8];
    void *p[20];
    for (int i = 0; i < 20; i++)
        p[i] = pvalloc(100 + (size_t)i);
    for (int i = 3; i < 20; i++)
        free(p[i]);
    for (int i = 0; i < 3; i++)
        kept[i] = p[i];
    for (int i = 0; i < 50; i++) {
        char *q = malloc(10 + (size_t)i);
        if (i < 5)
            kept[3 + i] = q;
        else
            free(q);
    }
    printf("done %p\n", (void *)kept);
    return 0;
}
