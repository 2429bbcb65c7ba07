/* own_text_release against the kernel's own account (/proc/self/smaps):
 * the resident pages of clean r-x file mappings go (and code runs on,
 * faulting them back); a private copy in an r-x file mapping (a page
 * written, then made executable) keeps both its pages and its bytes.
 * The same for read-only data (r--): a clean mapping read whole is given
 * back and reads the same bytes after, one with a page written before it
 * was made read-only (as RELRO is) keeps that page. */
#include "target/symbols/own_text.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; \
    fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

/* Rss in KiB of the mappings that are r-x and file-backed; of the one
 * starting at `at` in *at_rss when at is not 0. */
static unsigned long text_rss(uintptr_t at, unsigned long *at_rss)
{
    FILE *f = fopen("/proc/self/smaps", "re");
    if (!f)
        return 0;
    char line[512];
    unsigned long total = 0;
    int text = 0, is_at = 0;
    while (fgets(line, sizeof(line), f)) {
        unsigned long start, end, inode, kib;
        char perms[5];
        if (sscanf(line, "%lx-%lx %4s %*s %*s %lu", &start, &end, perms, &inode) == 4) {
            text = inode != 0 && strcmp(perms, "r-xp") == 0;
            is_at = at && start == at;
        } else if (sscanf(line, "Rss: %lu", &kib) == 1) {
            if (text)
                total += kib;
            if (is_at && at_rss)
                *at_rss = kib;
        }
    }
    fclose(f);
    return total;
}

static int compare(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/* A two-page file of 0x5a bytes mapped private, read-only; its first page
 * written before the mapping is made read-only when `copy`. */
static uint8_t *ro_map(long page, int copy)
{
    char path[] = "/tmp/test_own_text.XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    uint8_t buf[4096];
    memset(buf, 0x5a, sizeof(buf));
    for (long off = 0; off < 2 * page; off += (long)sizeof(buf))
        CHECK(write(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf), "write");
    uint8_t *m = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    CHECK(m != MAP_FAILED, "mmap");
    unlink(path);
    close(fd);
    if (copy)
        memset(m, 0xa5, (size_t)page);
    CHECK(mprotect(m, 2 * (size_t)page, PROT_READ) == 0, "mprotect");
    return m;
}

static unsigned long sum(const volatile uint8_t *p, long n)
{
    unsigned long s = 0;
    for (long i = 0; i < n; i++)
        s += p[i];
    return s;
}

static void read_only_data(long page)
{
    uint8_t *clean = ro_map(page, 0), *copy = ro_map(page, 1);
    CHECK(sum(clean, 2 * page) == 0x5aul * 2 * (unsigned long)page, "clean mapping: bytes");
    CHECK(sum(copy + page, page) == 0x5aul * (unsigned long)page, "copy mapping: bytes");
    unsigned long clean_before = 0, clean_after = 0, copy_before = 0, copy_after = 0;
    text_rss((uintptr_t)clean, &clean_before);
    text_rss((uintptr_t)copy, &copy_before);
    own_text_release();
    text_rss((uintptr_t)clean, &clean_after);
    text_rss((uintptr_t)copy, &copy_after);
    CHECK(clean_before >= 8 && clean_after == 0, "clean r-- mapping: %lu KiB resident before, %lu after",
          clean_before, clean_after);
    CHECK(copy_before >= 8 && copy_after == copy_before, "r-- mapping with a private copy: %lu KiB before, %lu after",
          copy_before, copy_after);
    CHECK(sum(clean, 2 * page) == 0x5aul * 2 * (unsigned long)page, "clean mapping: bytes after the release");
    CHECK(sum(copy, page) == 0xa5ul * (unsigned long)page, "the private copy changed");
    printf("r-- file mappings: clean %lu KiB resident before, %lu after; with a copy %lu, %lu\n",
           clean_before, clean_after, copy_before, copy_after);
    munmap(clean, 2 * (size_t)page);
    munmap(copy, 2 * (size_t)page);
}

int main(void)
{
    /* A private copy in an r-x file mapping: two pages of a file, the
     * first written, then the mapping made r-x. */
    char path[] = "/tmp/test_own_text.XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    long page = sysconf(_SC_PAGESIZE);
    CHECK(ftruncate(fd, 2 * page) == 0, "ftruncate");
    uint8_t *m = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    CHECK(m != MAP_FAILED, "mmap");
    unlink(path);
    close(fd);
    memset(m, 0xa5, (size_t)page);
    CHECK(mprotect(m, 2 * (size_t)page, PROT_READ | PROT_EXEC) == 0, "mprotect");

    unsigned long copy_before = 0, copy_after = 0;
    unsigned long before = text_rss((uintptr_t)m, &copy_before);
    own_text_release();
    unsigned long after = text_rss((uintptr_t)m, &copy_after);
    /* The page written is still there, with its bytes; the rest went
     * (the code that runs between the two counts faults some back). */
    CHECK(copy_before >= 4 && copy_after == copy_before, "the private copy: %lu KiB before, %lu after",
          copy_before, copy_after);
    for (long i = 0; i < page; i++)
        if (m[i] != 0xa5) {
            CHECK(0, "byte %ld of the private copy changed", i);
            break;
        }
    CHECK(after + 64 < before, "r-x file mappings: %lu KiB resident before, %lu after", before, after);

    /* Code dropped comes back when called. */
    int v[] = {3, 1, 2};
    qsort(v, 3, sizeof(v[0]), compare);
    CHECK(v[0] == 1 && v[1] == 2 && v[2] == 3, "qsort after the release");
    printf("r-x file mappings: %lu KiB resident before, %lu KiB after\n", before, after);
    munmap(m, 2 * (size_t)page);
    read_only_data(page);
    return failures ? 1 : 0;
}
