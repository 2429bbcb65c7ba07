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

/* One index for the process: every session asks the same sysroots. */
static pthread_mutex_t index_lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry *entries;
static size_t n_entries, cap_entries, files_seen;
static time_t last_scan;
static bool scanned;

static void add(int sysroot, const char *path, const uint8_t *id, size_t len)
{
    if (n_entries == cap_entries) {
        cap_entries = cap_entries ? cap_entries * 2 : 256;
        entries = xreallocarray(entries, cap_entries, sizeof(*entries));
    }
    struct entry *e = &entries[n_entries++];
    memcpy(e->id, id, len);
    e->id_len = (uint8_t)len;
    e->sysroot = sysroot;
    e->path = xstrdup(path);
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

static void scan_dir(int sysroot, int dir_fd, char *path, size_t plen, int depth)
{
    if (depth > MAX_DEPTH)
        return;
    DIR *d = fdopendir(dir_fd);
    if (!d) {
        close(dir_fd);
        return;
    }
    struct dirent *de;
    while ((de = readdir(d)) && files_seen < MAX_FILES) {
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
            scan_dir(sysroot, fd, path, plen + 1 + nlen, depth + 1);
            continue;
        }
        files_seen++;
        uint8_t id[64];
        size_t len = S_ISREG(st.st_mode) && st.st_size >= 64
                         ? elf_build_id_of_fd(fd, (uint64_t)st.st_size, id, sizeof(id))
                         : 0;
        if (len)
            add(sysroot, path, id, len);
        close(fd);
    }
    path[plen] = 0;
    closedir(d);
}

static void rescan(const struct sysroot_set *s)
{
    for (size_t i = 0; i < n_entries; i++)
        free(entries[i].path);
    n_entries = 0;
    files_seen = 0;
    char *path = xmalloc(4096);
    for (int i = 0; i < s->count; i++) {
        int fd = openat(s->items[i].fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
            continue;
        path[0] = 0;
        scan_dir(i, fd, path, 0, 0);
    }
    free(path);
    scanned = true;
    last_scan = time(NULL);
    mt_info("indexed %zu ELF files with a build-id (%zu files seen)", n_entries, files_seen);
}

int build_id_index_open(const struct sysroot_set *s, const uint8_t *id, size_t len)
{
    return build_id_index_open_if(s, id, len, NULL);
}

int build_id_index_open_if(const struct sysroot_set *s, const uint8_t *id, size_t len,
                           int (*want)(int fd, uint64_t size))
{
    pthread_mutex_lock(&index_lock);
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1 || !scanned) {
            if (scanned && time(NULL) - last_scan < RESCAN_S)
                break;
            rescan(s);
        }
        for (size_t i = 0; i < n_entries; i++) {
            if (entries[i].id_len != len || memcmp(entries[i].id, id, len) != 0)
                continue;
            /* The index may be stale: open it the safe way and check again. */
            int fd = safe_open_in_root(s->items[entries[i].sysroot].fd, entries[i].path);
            if (fd < 0)
                continue;
            struct stat st;
            uint8_t now[64];
            if (fstat(fd, &st) == 0 &&
                elf_build_id_of_fd(fd, (uint64_t)st.st_size, now, sizeof(now)) == len &&
                memcmp(now, id, len) == 0 && (!want || want(fd, (uint64_t)st.st_size))) {
                pthread_mutex_unlock(&index_lock);
                return fd;
            }
            close(fd);
        }
    }
    pthread_mutex_unlock(&index_lock);
    return -ENOENT;
}
