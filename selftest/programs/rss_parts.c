/* Memory whose parts a test can know from outside memtrace, paused at three
 * points (rss_parts.sh):
 *
 *   rss_parts CTLDIR
 *
 * Writes its pid to CTLDIR/pid; after stop N prints one line of figures
 * and waits for the file CTLDIR/goN.
 *
 *   stop 1: 64 blocks of 60000 bytes (glibc's main arena), one of 1 MiB
 *           (its own mmap'ed chunk), an anonymous mmap of 512 KiB with 75
 *           pages written, and a thread blocked in read();
 *   stop 2: every other block of 60000 bytes freed (fragmentation: the
 *           free chunks lie between live ones, nothing is given back);
 *   stop 3: after malloc_trim(0).
 *
 * The line: "stop N arena=A fordblks=F uordblks=U hblkhd=H nonresident=R
 * mmap_resident=M heap_resident=P rollup=S page=Z" with glibc's mallinfo2()
 * figures (the oracle for what the allocator holds), and, from mincore(2),
 * the bytes of the allocator's memory ([heap] and the 1 MiB chunk) that are
 * not resident, the resident bytes of the program's own mmap and of [heap];
 * then the kernel's Rss of /proc/self/smaps_rollup in bytes (0 without it),
 * read by the program itself before the line goes out (the tests prefer
 * their own reading after memtrace's report, at the same pause: the wait
 * below can fault in file pages after this one), and the page size.
 * Lines go out with write(2): stdio would allocate.  Transparent huge
 * pages are off for the process (PR_SET_THP_DISABLE): khugepaged would
 * otherwise fill a 2 MiB range of a mapping with a huge page whenever it
 * passes, between the program's read of its Rss and memtrace's (seen on
 * the arm64 board: 1.2 MiB more at one stop). */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define NBLOCKS 64
#define BLOCK 60000
#define BIG (1 << 20)
#define MAPPED (512 << 10)
#define MAPPED_WRITTEN_PAGES 75
#define WAIT_LIMIT_S 60

static const char *ctldir;
static char *blocks[NBLOCKS];
static char *big;
static char *mapped;
static int thread_pipe[2];

static void say(const char *s)
{
    size_t n = strlen(s);
    while (n) {
        ssize_t w = write(1, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

static void wait_for_go(int stop)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/go%d", ctldir, stop);
    const struct timespec tick = {0, 10 * 1000 * 1000};
    for (int i = 0; i < WAIT_LIMIT_S * 100; i++) {
        if (access(path, F_OK) == 0)
            return;
        nanosleep(&tick, NULL);
    }
    say("rss_parts: nobody said go, giving up\n");
    exit(3);
}

/* Bytes of [start, end) resident and not, by mincore(2). */
static void residency(uintptr_t start, uintptr_t end, uint64_t *resident, uint64_t *absent)
{
    static unsigned char vec[1 << 16];
    long ps = sysconf(_SC_PAGESIZE);
    start &= ~(uintptr_t)(ps - 1);
    end = (end + (uintptr_t)ps - 1) & ~(uintptr_t)(ps - 1);
    while (start < end) {
        size_t pages = (end - start) / (uintptr_t)ps;
        if (pages > sizeof(vec))
            pages = sizeof(vec);
        if (mincore((void *)start, pages * (size_t)ps, vec) != 0) {
            say("rss_parts: mincore failed\n");
            exit(2);
        }
        for (size_t i = 0; i < pages; i++) {
            if (vec[i] & 1)
                *resident += (uint64_t)ps;
            else
                *absent += (uint64_t)ps;
        }
        start += pages * (uintptr_t)ps;
    }
}

/* A /proc file read with read(2) into buf, NUL-terminated (what does not
 * fit is left out); -1 when it cannot be opened. */
static int read_proc(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    size_t n = 0;
    ssize_t r;
    while (n < size - 1 && (r = read(fd, buf + n, size - 1 - n)) > 0)
        n += (size_t)r;
    close(fd);
    buf[n] = '\0';
    return 0;
}

/* [heap] from /proc/self/maps, read into a static buffer (a small
 * program: its maps fit). */
static int heap_range(uintptr_t *start, uintptr_t *end)
{
    static char buf[1 << 16];
    if (read_proc("/proc/self/maps", buf, sizeof(buf)) < 0)
        return -1;
    for (char *line = buf; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        unsigned long s, e;
        if (strstr(line, "[heap]") && sscanf(line, "%lx-%lx", &s, &e) == 2) {
            *start = s;
            *end = e;
            return 0;
        }
        line = nl ? nl + 1 : NULL;
    }
    return -1;
}

/* Rss of /proc/self/smaps_rollup in bytes, read with read(2); 0 when the
 * kernel has no smaps_rollup (before 4.14). */
static unsigned long long rollup_rss(void)
{
    static char buf[4096];
    if (read_proc("/proc/self/smaps_rollup", buf, sizeof(buf)) < 0)
        return 0;
    const char *rss = strstr(buf, "\nRss:");
    unsigned long long kb;
    if (!rss || sscanf(rss + 5, " %llu kB", &kb) != 1)
        return 0;
    return kb * 1024;
}

static void *blocked_thread(void *arg)
{
    (void)arg;
    char c;
    while (read(thread_pipe[0], &c, 1) < 0 && errno == EINTR)
        ;
    return NULL;
}

static void report_stop(int stop)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 mi = mallinfo2();
#else
    struct mallinfo mi = mallinfo();
#endif
    uint64_t heap_res = 0, absent = 0, map_res = 0, map_absent = 0, big_res = 0;
    uintptr_t hs = 0, he = 0;
    if (heap_range(&hs, &he) == 0)
        residency(hs, he, &heap_res, &absent);
    /* the 1 MiB block's chunk: a header of two words before it, whole pages */
    size_t chunk = malloc_usable_size(big) + 2 * sizeof(size_t);
    residency((uintptr_t)big - 2 * sizeof(size_t), (uintptr_t)big - 2 * sizeof(size_t) + chunk,
              &big_res, &absent);
    residency((uintptr_t)mapped, (uintptr_t)mapped + MAPPED, &map_res, &map_absent);
    char line[512];
    snprintf(line, sizeof(line),
             "stop %d arena=%llu fordblks=%llu uordblks=%llu hblkhd=%llu nonresident=%llu "
             "mmap_resident=%llu heap_resident=%llu rollup=%llu page=%ld\n",
             stop, (unsigned long long)mi.arena, (unsigned long long)mi.fordblks,
             (unsigned long long)mi.uordblks, (unsigned long long)mi.hblkhd,
             (unsigned long long)absent, (unsigned long long)map_res,
             (unsigned long long)heap_res, rollup_rss(), sysconf(_SC_PAGESIZE));
    say(line);
    wait_for_go(stop);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        say("usage: rss_parts CTLDIR\n");
        return 2;
    }
    ctldir = argv[1];
    if (prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) != 0)
        say("rss_parts: PR_SET_THP_DISABLE failed\n");
    char path[4096], pid[32];
    snprintf(path, sizeof(path), "%s/pid", ctldir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return 2;
    snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
    if (write(fd, pid, strlen(pid)) < 0)
        return 2;
    close(fd);

    for (int i = 0; i < NBLOCKS; i++) {
        blocks[i] = malloc(BLOCK);
        memset(blocks[i], i + 1, BLOCK);
    }
    big = malloc(BIG);
    memset(big, 7, BIG);
    mapped = mmap(NULL, MAPPED, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED)
        return 2;
    long ps = sysconf(_SC_PAGESIZE);
    for (int i = 0; i < MAPPED_WRITTEN_PAGES; i++)
        mapped[(size_t)i * (size_t)ps] = 1;
    pthread_t th;
    if (pipe(thread_pipe) != 0 || pthread_create(&th, NULL, blocked_thread, NULL) != 0)
        return 2;
    report_stop(1);

    for (int i = 0; i < NBLOCKS; i += 2) {
        free(blocks[i]);
        blocks[i] = NULL;
    }
    report_stop(2);

    malloc_trim(0);
    report_stop(3);

    if (write(thread_pipe[1], "x", 1) != 1)
        return 2;
    pthread_join(th, NULL);
    for (int i = 1; i < NBLOCKS; i += 2)
        free(blocks[i]);
    free(big);
    munmap(mapped, MAPPED);
    say("rss_parts: done\n");
    return 0;
}
