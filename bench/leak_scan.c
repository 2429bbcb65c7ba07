/* leak_scan: throughput of memtrace's leak scan on a real process.
 *
 *   leak_scan [BLOCKS [ROOT_MIB]]        (default 1000000 blocks, 100 MiB)
 *
 * A child allocates BLOCKS blocks of 64 bytes with malloc (untraced: the
 * cost of tracing a million calls is measured elsewhere) in chains of 16,
 * fills ROOT_MIB MiB of anonymous memory with words of which one in eight
 * points to a chain head (the rest are random numbers and zeros), drops one
 * chain in sixteen, and stops.  The parent scans it exactly as memtrace
 * does (root set from /proc/PID/maps, process_vm_readv, the scanner core)
 * and prints one line:
 *
 *   leak_scan: B bytes scanned, N blocks in S s = M MiB/s, C s CPU (definite D, indirect I, reachable R)
 *
 * CPU is the scanning process's own user+system time (the wall time also
 * counts waiting for a CPU on a loaded machine).
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "target/leak/leak_tracee.h"
#include "target/tracer/target_mem.h"

#define CHAIN 16

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void child(uint64_t *addrs, long n, long root_mib)
{
    for (long i = 0; i < n; i++) {
        void **b = malloc(64);
        if (!b)
            _exit(1);
        memset(b, 0, 64);
        addrs[i] = (uint64_t)(uintptr_t)b;
        if (i % CHAIN)
            ((void **)(uintptr_t)addrs[i - 1])[0] = b;   /* chain: previous -> this */
    }
    size_t words = (size_t)root_mib << 17;
    uint64_t *roots = mmap(NULL, words * 8, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (roots == MAP_FAILED)
        _exit(1);
    long heads = (n + CHAIN - 1) / CHAIN;
    for (size_t w = 0; w < words; w++) {
        uint64_t r = rnd();
        if (r % 8 == 0 && heads) {
            long h = (long)((r >> 8) % (uint64_t)heads);
            if (h % 16 != 15)   /* one chain in sixteen is leaked */
                roots[w] = addrs[h * CHAIN];
        } else if (r % 8 < 4) {
            roots[w] = r >> 3;  /* noise, mostly far from the heap */
        }
    }
    munmap(addrs, (size_t)n * 8);   /* the list of blocks must not be a root */
    raise(SIGSTOP);
    _exit(0);
}

static int cmp_block(const void *a, const void *b)
{
    uint64_t x = ((const struct heap_block *)a)->addr, y = ((const struct heap_block *)b)->addr;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    long root_mib = argc > 2 ? atol(argv[2]) : 100;
    if (n < 1 || root_mib < 1) {
        fprintf(stderr, "leak_scan: BLOCKS >= 1, ROOT_MIB >= 1\n");
        return 2;
    }
    uint64_t *addrs = mmap(NULL, (size_t)n * 8, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (addrs == MAP_FAILED)
        return 1;
    pid_t pid = fork();
    if (pid == 0)
        child(addrs, n, root_mib);
    int status;
    if (waitpid(pid, &status, WUNTRACED) < 0 || !WIFSTOPPED(status)) {
        fprintf(stderr, "leak_scan: child failed\n");
        return 1;
    }
    struct heap_block *blocks = calloc((size_t)n, sizeof(*blocks));
    for (long i = 0; i < n; i++)
        blocks[i] = (struct heap_block){addrs[i], 64, 1, ALLOC_MALLOC, 0, 0};
    qsort(blocks, (size_t)n, sizeof(*blocks), cmp_block);

    struct timespec t0, t1, c0, c1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "r");
    static char maps[1 << 20];
    size_t len = f ? fread(maps, 1, sizeof(maps), f) : 0;
    if (f)
        fclose(f);
    size_t nroots;
    struct leak_range *roots = leak_roots_from_maps(maps, len, blocks, (size_t)n, NULL, 0, NULL, 0,
                                                    false, &nroots);
    struct target_mem mem;
    target_mem_open(&mem, pid);
    struct leak_scan_input in = {.blocks = blocks, .nblocks = (size_t)n, .roots = roots,
                                 .nroots = nroots, .word_size = 8, .read = leak_read_process,
                                 .read_ctx = &mem};
    struct leak_scan_result r;
    leak_scan_run(&in, &r);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    double cpu = (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) / 1e9;
    printf("leak_scan: %llu bytes scanned, %ld blocks in %.3f s = %.0f MiB/s, %.3f s CPU (definite %llu, indirect %llu, reachable %llu)\n",
           (unsigned long long)r.bytes_scanned, n, s, (double)r.bytes_scanned / 1048576.0 / s, cpu,
           (unsigned long long)r.blocks[LEAK_DEFINITE], (unsigned long long)r.blocks[LEAK_INDIRECT],
           (unsigned long long)r.blocks[LEAK_REACHABLE]);
    target_mem_close(&mem);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    free(roots);
    free(blocks);
    leak_scan_result_free(&r);
    return 0;
}
