/* The mmap family in phases, each ended by raise(SIGSTOP) so that a test
 * can read /proc/PID/maps and ask memtrace for its figures while the
 * program stands still:
 *   0  baseline: the C library has mapped memory of its own (a big malloc,
 *      a thread stack), the program nothing yet
 *   1  mmap 16 anonymous pages (A), mmap64 8 pages of FILE (B), mmap 4 (C)
 *   2  munmap B whole; munmap 4 pages in the middle of A (A splits)
 *   3  munmap A's first page and its last page
 *   4  mremap C: grow to 10 pages (may move), shrink to 2, move to a fixed
 *      address elsewhere
 *   5  everything unmapped
 * Usage: intercept_mmap FILE (at least 8 pages long) [PIDFILE] */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void *thread_main(void *arg) { return arg; }

static void phase_done(int n)
{
    printf("phase %d\n", n);
    fflush(stdout);
    raise(SIGSTOP);
}

static char *map_anon(size_t len)
{
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    memset(p, 1, len);
    return p;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: intercept_mmap FILE [PIDFILE]\n");
        return 2;
    }
    if (argc > 2) {
        FILE *f = fopen(argv[2], "w");
        if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) != 0)
            return 1;
    }
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);

    /* Mappings of the C library, not of the program. */
    volatile char *big = malloc(1 << 20);
    big[0] = 1;
    pthread_t th;
    if (pthread_create(&th, NULL, thread_main, NULL) != 0 || pthread_join(th, NULL) != 0)
        return 1;
    phase_done(0);

    char *a = map_anon(16 * pg);
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    char *b = mmap64(NULL, 8 * pg, PROT_READ, MAP_PRIVATE, fd, 0);
    if (b == MAP_FAILED)
        return 1;
    close(fd);
    char *c = map_anon(4 * pg);
    phase_done(1);

    munmap(b, 8 * pg);
    munmap(a + 6 * pg, 4 * pg);
    phase_done(2);

    munmap(a, pg);
    munmap(a + 15 * pg, pg);
    phase_done(3);

    c = mremap(c, 4 * pg, 10 * pg, MREMAP_MAYMOVE);
    if (c == MAP_FAILED)
        return 1;
    c = mremap(c, 10 * pg, 2 * pg, 0);
    if (c == MAP_FAILED)
        return 1;
    /* A free spot for the move: reserve it, release it, move there. */
    char *spot = mmap(NULL, 64 * pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(spot, 64 * pg);
    c = mremap(c, 2 * pg, 2 * pg, MREMAP_MAYMOVE | MREMAP_FIXED, spot + 32 * pg);
    if (c != spot + 32 * pg)
        return 1;
    phase_done(4);

    munmap(a + pg, 5 * pg);
    munmap(a + 10 * pg, 5 * pg);
    munmap(c, 2 * pg);
    phase_done(5);
    free((void *)big);
    return 0;
}
