#include "host-fs/build_id_index.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <time.h>
#include <unistd.h>

#include "host-fs/elf_build_id.h"
#include "host-fs/safe_path.h"
#include "shared/log.h"
#include "shared/xalloc.h"

#define MAX_FILES 200000
#define MAX_DEPTH 24
#define RESCAN_S 30

struct entry {
    uint8_t id[64];
    uint8_t id_len;
    int sysroot;
    char *path; /* absolute inside the sysroot */
};

/* The entries of one walk. */
struct index {
    struct entry *entries;
    size_t n, cap, files_seen;
};

/* One index for the process: every session asks the same sysroots.  The
 * walk fills an index of its own and publishes it when done. */
static pthread_mutex_t index_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t index_done = PTHREAD_COND_INITIALIZER;
static struct index published;
static time_t last_scan;
static bool scanned, scanning;

static void add(struct index *ix, int sysroot, const char *path, const uint8_t *id, size_t len)
{
    if (ix->n == ix->cap) {
        ix->cap = ix->cap ? ix->cap * 2 : 256;
        ix->entries = xreallocarray(ix->entries, ix->cap, sizeof(*ix->entries));
    }
    struct entry *e = &ix->entries[ix->n++];
    memcpy(e->id, id, len);
    e->id_len = (uint8_t)len;
    e->sysroot = sysroot;
    e->path = xstrdup(path);
}

static void index_free(struct index *ix)
{
    for (size_t i = 0; i < ix->n; i++)
        free(ix->entries[i].path);
    free(ix->entries);
    *ix = (struct index){ 0 };
}

/* The kernel's own trees hold no sysroot files, and /proc alone has tens
 * of thousands of entries (and /proc/kcore). */
static bool is_pseudo_fs(int dir_fd)
{
    struct statfs fs;
    if (fstatfs(dir_fd, &fs) < 0)
        return true;
    switch ((unsigned long)fs.f_type) {
    case PROC_SUPER_MAGIC: case SYSFS_MAGIC: case DEBUGFS_MAGIC: case TRACEFS_MAGIC:
    case CGROUP_SUPER_MAGIC: case CGROUP2_SUPER_MAGIC: case DEVPTS_SUPER_MAGIC:
    case SECURITYFS_MAGIC: case BPF_FS_MAGIC: case PSTOREFS_MAGIC:
        return true;
    default:
        return false;
    }
}

/* A readable descriptor for what the O_PATH pfd names, which fstat said is
 * a directory or a regular file: "." below it, or /proc/self/fd/N, so it
 * is the very inode checked (no name is looked up again, nothing can be
 * swapped in; without /proc files are skipped). */
static int reopen_checked(int pfd, const struct stat *st)
{
    int fd;
    if (S_ISDIR(st->st_mode)) {
        fd = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    } else {
        char link[64];
        snprintf(link, sizeof(link), "/proc/self/fd/%d", pfd);
        fd = open(link, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    }
    struct stat st2;
    if (fd >= 0 && (fstat(fd, &st2) < 0 || st2.st_ino != st->st_ino ||
                    st2.st_dev != st->st_dev || (st2.st_mode & S_IFMT) != (st->st_mode & S_IFMT))) {
        close(fd);
        fd = -1;
    }
    return fd;
}

static void scan_dir(struct index *ix, int sysroot, int dir_fd, char *path, size_t plen, int depth)
{
    if (depth > MAX_DEPTH || is_pseudo_fs(dir_fd)) {
        close(dir_fd);
        return;
    }
    DIR *d = fdopendir(dir_fd);
    if (!d) {
        close(dir_fd);
        return;
    }
    struct dirent *de;
    while ((de = readdir(d)) && ix->files_seen < MAX_FILES) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        size_t nlen = strlen(de->d_name);
        if (plen + 1 + nlen + 1 > 4096)
            continue;
        path[plen] = '/';
        memcpy(path + plen + 1, de->d_name, nlen + 1);
        /* Never follow links, and open nothing before its type is known: an
         * O_PATH descriptor opens no FIFO (its writer stays blocked) and no
         * device.  Only directories and regular files are opened for real. */
        int pfd = openat(dirfd(d), de->d_name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (pfd < 0)
            continue;
        struct stat st;
        if (fstat(pfd, &st) < 0 || !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
            close(pfd);
            continue;
        }
        int fd = reopen_checked(pfd, &st);
        close(pfd);
        if (fd < 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            scan_dir(ix, sysroot, fd, path, plen + 1 + nlen, depth + 1);
            continue;
        }
        ix->files_seen++;
        uint8_t id[64];
        size_t len = S_ISREG(st.st_mode) && st.st_size >= 64
                         ? elf_build_id_of_fd(fd, (uint64_t)st.st_size, id, sizeof(id))
                         : 0;
        if (len)
            add(ix, sysroot, path, id, len);
        close(fd);
    }
    path[plen] = 0;
    closedir(d);
}

static void *scan_main(void *arg)
{
    const struct sysroot_set *s = arg;
    struct index ix = { 0 };
    char *path = xmalloc(4096);
    for (int i = 0; i < s->count; i++) {
        int fd = openat(s->items[i].fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
            continue;
        path[0] = 0;
        scan_dir(&ix, i, fd, path, 0, 0);
    }
    free(path);
    mt_info("indexed %zu ELF files with a build-id (%zu files seen)", ix.n, ix.files_seen);
    pthread_mutex_lock(&index_lock);
    index_free(&published);
    published = ix;
    scanned = true;
    scanning = false;
    last_scan = time(NULL);
    pthread_cond_broadcast(&index_done);
    pthread_mutex_unlock(&index_lock);
    return NULL;
}

/* Called locked after a miss: starts a walk unless one runs or the last
 * one is recent, then waits for the running walk until the deadline.
 * True when a newer index was published meanwhile. */
static bool refresh(const struct sysroot_set *s, const struct timespec *deadline)
{
    if (!scanning && scanned && time(NULL) - last_scan < RESCAN_S)
        return false;
    if (!scanning) {
        pthread_attr_t attr;
        pthread_t t;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        scanning = pthread_create(&t, &attr, scan_main, (void *)s) == 0;
        pthread_attr_destroy(&attr);
        if (!scanning)
            return false;
    }
    while (scanning)
        if (pthread_cond_timedwait(&index_done, &index_lock, deadline) != 0)
            break;
    if (scanning)
        mt_info("the build-id index is still being built; answered \"not found\"");
    return !scanning;
}

int build_id_index_open(const struct sysroot_set *s, const uint8_t *id, size_t len)
{
    return build_id_index_open_if(s, id, len, NULL);
}

static int find(const struct sysroot_set *s, const uint8_t *id, size_t len,
                int (*want)(int fd, uint64_t size))
{
    for (size_t i = 0; i < published.n; i++) {
        const struct entry *e = &published.entries[i];
        if (e->id_len != len || memcmp(e->id, id, len) != 0)
            continue;
        /* The index may be stale: open it the safe way and check again. */
        int fd = safe_open_in_root(s->items[e->sysroot].fd, e->path);
        if (fd < 0)
            continue;
        struct stat st;
        uint8_t now[64];
        if (fstat(fd, &st) == 0 && elf_build_id_of_fd(fd, (uint64_t)st.st_size, now, sizeof(now)) == len &&
            memcmp(now, id, len) == 0 && (!want || want(fd, (uint64_t)st.st_size)))
            return fd;
        close(fd);
    }
    return -ENOENT;
}

int build_id_index_open_if(const struct sysroot_set *s, const uint8_t *id, size_t len,
                           int (*want)(int fd, uint64_t size))
{
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += BUILD_ID_INDEX_WAIT_MS / 1000;
    deadline.tv_nsec += (long)(BUILD_ID_INDEX_WAIT_MS % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&index_lock);
    int fd = find(s, id, len, want);
    if (fd < 0 && refresh(s, &deadline))
        fd = find(s, id, len, want);
    pthread_mutex_unlock(&index_lock);
    return fd;
}
