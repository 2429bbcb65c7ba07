/* record_cost: the cost of --record per sample, and its bytes per hour.
 *
 *   record_cost [STACKS [CHANGED [SAMPLES]]]    (default 4096, 256, 2000)
 *
 * Books with STACKS distinct stacks of 8 frames (named by a resolver, as
 * the real one names them) each holding blocks; then SAMPLES samples 100 ms
 * apart in the books' time, before each of which CHANGED stacks (a sliding
 * window) allocate and free blocks, as in a busy program.  Only
 * recorder_sample is timed (CPU of this process); the first sample, which
 * writes every stack's frames, is reported apart.  A second run moves the
 * peak at every sample (the worst case: each sample then also writes the
 * peak's stacks that changed).  One line per run:
 *
 *   record_cost: MODE S stacks, C changed/sample: U us/sample, B bytes/sample,
 *                H MB/hour at 10 samples/s; first sample F us, D bytes
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "target/heap/heap.h"
#include "target/heap/stacks.h"
#include "target/record/record.h"

static char fn_buf[64];

static void resolve(void *ctx, uint64_t pc, unsigned frame_index, struct report_frame *out)
{
    (void)ctx;
    (void)frame_index;
    snprintf(fn_buf, sizeof(fn_buf), "function_%llx", (unsigned long long)(pc >> 4));
    out->function = fn_buf;
    out->file = "/src/project/module/file.c";
    out->line = (unsigned)(pc & 0xfff);
    out->module = "/usr/lib/libproject.so.1";
    out->offset = pc & 0xfffff;
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void run(const char *mode, unsigned nstacks, unsigned changed, unsigned samples, bool peak_moves)
{
    char path[] = "/tmp/record_cost.XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) {
        perror("mkstemp");
        exit(1);
    }
    close(fd);
    char why[256];
    struct recorder *r = recorder_open(path, 100, 1ull << 40, why, sizeof(why));
    if (!r) {
        fprintf(stderr, "record_cost: %s\n", why);
        exit(1);
    }
    recorder_start(r, 1, 20, "bench", "ptrace");
    struct heap_books *b = heap_books_new();
    struct stack_table *st = stack_table_new();
    uint32_t *ids = calloc(nstacks, sizeof(*ids));
    uint64_t addr = 0x10000;
    for (unsigned s = 0; s < nstacks; s++) {
        uint64_t pcs[8];
        for (unsigned k = 0; k < 8; k++)
            pcs[k] = 0x400000 + (uint64_t)s * 0x1000 + k * 0x10 + (k == 0 ? 0 : 0x100000 * k);
        ids[s] = stack_table_intern(st, pcs, 8);
        heap_record_alloc(b, addr += 64, 48, ids[s], ALLOC_MALLOC);
    }
    struct report_source src = { .books = b, .stacks = st, .resolve = resolve, .max_frames = 20 };
    double c0 = cpu_now();
    recorder_sample(r, &src, 0.0, true);
    double first_us = (cpu_now() - c0) * 1e6;
    uint64_t first_bytes = recorder_bytes(r);

    double spent = 0;
    unsigned window = 0;
    for (unsigned i = 1; i <= samples; i++) {
        for (unsigned k = 0; k < changed; k++) {
            uint32_t id = ids[(window + k) % nstacks];
            heap_record_alloc(b, addr += 64, 100 + k, id, ALLOC_MALLOC);
            if (!peak_moves)
                heap_record_free(b, addr, ALLOC_MALLOC, NULL);
        }
        window += changed;
        double t0 = cpu_now();
        recorder_sample(r, &src, i * 0.1, true);
        spent += cpu_now() - t0;
    }
    double per_us = spent * 1e6 / samples;
    double per_bytes = (double)(recorder_bytes(r) - first_bytes) / samples;
    printf("record_cost: %s %u stacks, %u changed/sample: %.1f us/sample, %.0f bytes/sample, "
           "%.1f MB/hour at 10 samples/s; first sample %.0f us, %llu bytes\n",
           mode, nstacks, changed, per_us, per_bytes, per_bytes * 36000 / 1e6, first_us,
           (unsigned long long)first_bytes);
    recorder_close(r);
    unlink(path);
    heap_books_free(b);
    stack_table_free(st);
    free(ids);
}

int main(int argc, char **argv)
{
    unsigned nstacks = argc > 1 ? (unsigned)atoi(argv[1]) : 4096;
    unsigned changed = argc > 2 ? (unsigned)atoi(argv[2]) : 256;
    unsigned samples = argc > 3 ? (unsigned)atoi(argv[3]) : 2000;
    if (!nstacks || changed > nstacks || !samples) {
        fprintf(stderr, "usage: record_cost [STACKS [CHANGED [SAMPLES]]]\n");
        return 2;
    }
    run("steady", nstacks, changed, samples, false);
    run("growing", nstacks, changed, samples, true);
    return 0;
}
