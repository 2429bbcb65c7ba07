/* A heap whose leak scan takes long: MIB blocks of 1 MiB (argument 1),
 * filled and reachable from a global array, then "held MIB MiB" on
 * stdout, and a wait until the file named by argument 2 exists (none:
 * exit at once).  Ends with "done" and exit status 0; a block that lost
 * its contents meanwhile is exit status 3. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCK (1u << 20)
#define MAX_BLOCKS 65536

/* Global, and read at the end: the stores cannot be optimized away, and
 * the blocks stay reachable for the scan. */
char *held_blocks[MAX_BLOCKS];

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 64;
    if (mib > MAX_BLOCKS)
        mib = MAX_BLOCKS;
    for (size_t i = 0; i < mib; i++) {
        held_blocks[i] = malloc(BLOCK);
        if (!held_blocks[i])
            return 1;
        memset(held_blocks[i], (int)(i & 0x7f) | 1, BLOCK);
    }
    printf("held %zu MiB\n", mib);
    fflush(stdout);
    while (argc > 2 && access(argv[2], F_OK) != 0)
        usleep(10000);
    for (size_t i = 0; i < mib; i++) {
        if (held_blocks[i][BLOCK - 1] != (char)((i & 0x7f) | 1))
            return 3;
        free(held_blocks[i]);
    }
    printf("done\n");
    return 0;
}
