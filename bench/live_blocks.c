/* live_blocks: allocate N small blocks, keep them all live, then exit
 * without freeing, so a tracer holds N live blocks at the end.
 *
 *   live_blocks N [SIZE [nobuf]]
 *
 * The last line printed is "live_blocks: N blocks".  With "nobuf" stdout is
 * unbuffered, so that stdio keeps no buffer of its own live either (N = 0
 * then leaves nothing for a tracer's report to symbolize).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 10000;
    long size = argc > 2 ? atol(argv[2]) : 16;
    if (argc > 3 && strcmp(argv[3], "nobuf") == 0)
        setvbuf(stdout, NULL, _IONBF, 0);
    if (n < 0 || size < 1) {
        fprintf(stderr, "live_blocks: N >= 0 and SIZE >= 1\n");
        return 2;
    }
    void **keep = n ? malloc(n * sizeof(*keep)) : NULL;
    for (long i = 0; i < n; i++) {
        keep[i] = malloc(size);
        if (!keep[i]) {
            fprintf(stderr, "live_blocks: out of memory\n");
            return 1;
        }
    }
    printf("live_blocks: %ld blocks\n", n);
    return 0;
}
