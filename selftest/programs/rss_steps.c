/* Three steps of resident heap for record_rss.sh:
 *
 *   rss_steps CTL_DIR
 *
 * Step K (1..3) allocates and writes K * 8 blocks of 1 MiB more, then a
 * marker block of 64 KiB, reads its own resident size from the kernel
 * (/proc/self/status VmRSS, /proc/self/smaps_rollup Rss, and of that the
 * Rss of mappings named memfd:memtrace-agent in /proc/self/smaps: the
 * tracer's agent ring, whose pages turn resident as the agent writes it)
 * and prints
 *
 *   step K in_use BYTES vmrss BYTES rollup BYTES memtrace BYTES
 *
 * BYTES in use counting every block this program holds, then waits for
 * CTL_DIR/goK.  While it waits, it allocates and frees 16 bytes every 2 ms
 * (the books change, so the recording goes on sampling) and touches no new
 * page: the RSS stays what it printed, but for the ring's pages.
 *
 * The marker comes last so that books holding it were read after every
 * page of the step was written: a sample whose books hold BYTES in use
 * (the marker's bytes exceed stdio's buffers) is one taken after that. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MIB (1 << 20)
#define MARKER (64 << 10)

/* The figure after `key` in a /proc/self file, in bytes (the kernel says kB). */
static unsigned long long proc_kb(const char *path, const char *key)
{
    FILE *f = fopen(path, "r");
    char line[256];
    unsigned long long kb = 0;
    size_t n = strlen(key);
    while (f && fgets(line, sizeof(line), f))
        if (!strncmp(line, key, n)) {
            kb = strtoull(line + n, NULL, 10);
            break;
        }
    if (f)
        fclose(f);
    return kb * 1024;
}

/* The Rss of the mappings whose name holds `name`, in bytes. */
static unsigned long long smaps_rss_of(const char *name)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    unsigned long long kb = 0;
    int named = 0;
    while (f && fgets(line, sizeof(line), f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
            named = strstr(line, name) != NULL;
        else if (named && !strncmp(line, "Rss:", 4))
            kb += strtoull(line + 4, NULL, 10);
    }
    if (f)
        fclose(f);
    return kb * 1024;
}

static char *__attribute__((noinline)) step_block(size_t size)
{
    char *p = malloc(size);
    if (p)
        memset(p, 0x5a, size);
    return p;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    /* stdout's buffer, allocated now: not a block of a step */
    printf("rss_steps: start\n");
    fflush(stdout);
    static char *blocks[64 + 3];
    size_t held = 0, in_use = 0;
    char path[4096], line[256];
    for (int k = 1; k <= 3; k++) {
        for (int i = 0; i < 8 * k; i++) {
            blocks[held] = step_block(MIB);
            if (!blocks[held])
                return 1;
            held++;
            in_use += MIB;
        }
        if (!(blocks[held++] = step_block(MARKER)))
            return 1;
        in_use += MARKER;
        unsigned long long vmrss = proc_kb("/proc/self/status", "VmRSS:");
        unsigned long long rollup = proc_kb("/proc/self/smaps_rollup", "Rss:");
        unsigned long long own = smaps_rss_of("memfd:memtrace-agent");
        /* formatted first: printing allocates nothing the books see */
        snprintf(line, sizeof(line), "step %d in_use %zu vmrss %llu rollup %llu memtrace %llu\n", k,
                 in_use, vmrss, rollup, own);
        fputs(line, stdout);
        fflush(stdout);
        snprintf(path, sizeof(path), "%s/go%d", argv[1], k);
        while (access(path, F_OK) != 0) {
            free(malloc(16));
            usleep(2000);
        }
    }
    for (size_t i = 0; i < held; i++)
        free(blocks[i]);
    return 0;
}
