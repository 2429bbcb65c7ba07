/* See upstream.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "host-fs/upstream.h"

#include <dirent.h>
#include <elfutils/debuginfod.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "host-fs/elf_build_id.h"
#include "shared/build_id.h"
#include "shared/log.h"
#include "shared/xalloc.h"

#define ID_MAX 64
/* libdebuginfod's own cache: it makes a directory per build-id there (the
 * file, or an empty one that says "not found upstream").  Each is removed
 * when its fetch ends, whatever the end, so at most IN_FLIGHT_MAX exist at
 * a time; those left by a memtrace-fs that was killed go at the start; and
 * eviction counts the bytes of those in flight. */
#define FETCH_DIR ".fetch"

static bool enabled;
static int cache_fd = -1;             /* O_PATH of the cache directory */
static char cache_path[PATH_MAX];
static uint64_t cache_limit;
/* The cache directory and the fetches in flight: fetches of different
 * build-ids run side by side (unlocked), a second request for one in
 * flight waits for it. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fetched = PTHREAD_COND_INITIALIZER;
#define IN_FLIGHT_MAX 16
static char in_flight[IN_FLIGHT_MAX][2 * ID_MAX + 8];

bool upstream_enabled(void) { return enabled; }

int upstream_parse_size(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || s[0] == '-')
        return -1;
    unsigned shift = 0;
    switch (*end) {
    case 0: break;
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: return -1;
    }
    if (*end || v == 0 || v > (UINT64_MAX >> shift))
        return -1;
    *out = (uint64_t)v << shift;
    return 0;
}

/* mkdir -p with mode 0700 for what it creates. */
static int make_dirs(const char *path)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
        return -ENAMETOOLONG;
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == 0) {
            char c = *p;
            *p = 0;
            if (mkdir(buf, 0700) < 0 && errno != EEXIST)
                return -errno;
            *p = c;
            if (!c)
                return 0;
        }
    }
}

/* Removes entry name of dir_fd: a file, or a directory and the files in
 * it (libdebuginfod puts nothing deeper there; a deeper directory is
 * removed when empty).  0 or -errno. */
static int remove_entry(int dir_fd, const char *name)
{
    int fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno != ENOTDIR && errno != ELOOP)
            return -errno;
        return unlinkat(dir_fd, name, 0) < 0 ? -errno : 0;
    }
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return -errno;
    }
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
            unlinkat(fd, e->d_name, 0) < 0 && errno == EISDIR)
            unlinkat(fd, e->d_name, AT_REMOVEDIR);
    closedir(d);
    return unlinkat(dir_fd, name, AT_REMOVEDIR) < 0 ? -errno : 0;
}

/* An fd of the cache's FETCH_DIR, or -1. */
static int open_fetch_dir(void)
{
    return openat(cache_fd, FETCH_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* Every per-build-id directory of FETCH_DIR (a killed memtrace-fs leaves
 * its fetches in flight), before any fetch starts; libdebuginfod's own
 * settings files there stay. */
static void sweep_fetch_dir(void)
{
    int fd = open_fetch_dir();
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        struct stat st;
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
            fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode))
            remove_entry(fd, e->d_name);
    }
    closedir(d);
}

/* The bytes under FETCH_DIR: its files and those of its directories. */
static uint64_t fetch_dir_bytes(void)
{
    int fd = open_fetch_dir();
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    uint64_t total = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        struct stat st;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
            fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue;
        if (S_ISREG(st.st_mode)) {
            total += (uint64_t)st.st_size;
            continue;
        }
        int sub = S_ISDIR(st.st_mode) ? openat(fd, e->d_name, O_RDONLY | O_DIRECTORY |
                                                                  O_NOFOLLOW | O_CLOEXEC)
                                      : -1;
        DIR *sd = sub >= 0 ? fdopendir(sub) : NULL;
        if (!sd) {
            if (sub >= 0)
                close(sub);
            continue;
        }
        struct dirent *f;
        while ((f = readdir(sd)))
            if (fstatat(sub, f->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
                total += (uint64_t)st.st_size;
        closedir(sd);
    }
    closedir(d);
    return total;
}

static const char *default_cache_dir(char *buf, size_t len)
{
    const char *d = getenv("CACHE_DIRECTORY"); /* systemd's CacheDirectory= */
    if (d && *d) {
        snprintf(buf, len, "%.*s", (int)strcspn(d, ":"), d);
        return buf;
    }
    d = getenv("XDG_CACHE_HOME");
    if (d && d[0] == '/') {
        snprintf(buf, len, "%s/memtrace-fs", d);
        return buf;
    }
    d = getenv("HOME");
    if (d && d[0] == '/') {
        snprintf(buf, len, "%s/.cache/memtrace-fs", d);
        return buf;
    }
    return NULL;
}

int upstream_configure(const char *const *urls, int n, const char *cache_dir,
                       uint64_t cache_size, char *err, size_t errlen)
{
    char joined[4096] = "";
    size_t used = 0;
    for (int i = 0; i < n; i++) {
        int k = snprintf(joined + used, sizeof(joined) - used, "%s%s", i ? " " : "", urls[i]);
        if (k < 0 || (size_t)k >= sizeof(joined) - used) {
            snprintf(err, errlen, "--upstream: the URLs are too long together");
            return -1;
        }
        used += (size_t)k;
    }
    const char *env = getenv(DEBUGINFOD_URLS_ENV_VAR);
    if (n == 0 && env)
        snprintf(joined, sizeof(joined), "%s", env);
    if (strspn(joined, " \t\n") == strlen(joined))
        return 0; /* no upstream */
    char dbuf[PATH_MAX];
    if (!cache_dir)
        cache_dir = default_cache_dir(dbuf, sizeof(dbuf));
    if (!cache_dir || cache_dir[0] != '/') {
        snprintf(err, errlen, "--upstream needs --cache-dir DIR (an absolute path)");
        return -1;
    }
    int r = make_dirs(cache_dir);
    char fetch[PATH_MAX];
    if (r == 0 && snprintf(fetch, sizeof(fetch), "%s/" FETCH_DIR, cache_dir) >= (int)sizeof(fetch))
        r = -ENAMETOOLONG;
    if (r == 0)
        r = make_dirs(fetch);
    if (r < 0) {
        snprintf(err, errlen, "--cache-dir %s: %s", cache_dir, strerror(-r));
        return -1;
    }
    cache_fd = open(cache_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    struct stat st;
    if (cache_fd < 0 || fstat(cache_fd, &st) < 0 || st.st_uid != geteuid() ||
        (st.st_mode & 022)) {
        snprintf(err, errlen, "--cache-dir %s: %s", cache_dir,
                 cache_fd < 0 ? strerror(errno)
                              : "must be a directory of this user that no one else may write");
        return -1;
    }
    snprintf(cache_path, sizeof(cache_path), "%s", cache_dir);
    sweep_fetch_dir();
    cache_limit = cache_size ? cache_size : UPSTREAM_DEFAULT_CACHE_SIZE;
    /* libdebuginfod reads its settings from the environment, at each
     * query: set here, before any thread. */
    char maxsize[32];
    snprintf(maxsize, sizeof(maxsize), "%llu", (unsigned long long)cache_limit);
    setenv(DEBUGINFOD_URLS_ENV_VAR, joined, 1);
    setenv(DEBUGINFOD_CACHE_PATH_ENV_VAR, fetch, 1);
    setenv(DEBUGINFOD_MAXSIZE_ENV_VAR, maxsize, 1);
    if (!getenv(DEBUGINFOD_TIMEOUT_ENV_VAR))
        setenv(DEBUGINFOD_TIMEOUT_ENV_VAR, "10", 1);
    enabled = true;
    mt_info("upstream debuginfod: %s (cache %s, at most %llu bytes)", joined, cache_dir,
            (unsigned long long)cache_limit);
    return 0;
}

static void name_of(const uint8_t *id, size_t len, bool debuginfo, char *out, size_t outlen)
{
    size_t n = build_id_hex(out, outlen, id, len);
    snprintf(out + n, outlen - n, "%s", debuginfo ? ".debug" : ".exe");
}

static int open_cached(const char *name)
{
    int fd = openat(cache_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return -errno;
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return -ENOENT;
    }
    futimens(fd, NULL); /* used now: the last to be evicted */
    return fd;
}

/* Removes the least recently used files until the cache holds at most
 * limit bytes, the fetches in flight counted; keep is never removed. */
static void evict(const char *keep)
{
    int dfd = openat(cache_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        if (dfd >= 0)
            close(dfd);
        return;
    }
    uint64_t in_flight_bytes = fetch_dir_bytes();
    for (;;) {
        uint64_t total = in_flight_bytes;
        char oldest[NAME_MAX + 1] = "";
        struct timespec oldest_t = {0, 0};
        rewinddir(d);
        struct dirent *e;
        while ((e = readdir(d))) {
            struct stat st;
            if (e->d_name[0] == '.' ||
                fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
                continue;
            total += (uint64_t)st.st_size;
            if (strcmp(e->d_name, keep) == 0)
                continue;
            if (!oldest[0] || st.st_mtim.tv_sec < oldest_t.tv_sec ||
                (st.st_mtim.tv_sec == oldest_t.tv_sec && st.st_mtim.tv_nsec < oldest_t.tv_nsec)) {
                snprintf(oldest, sizeof(oldest), "%s", e->d_name);
                oldest_t = st.st_mtim;
            }
        }
        if (total <= cache_limit || !oldest[0])
            break;
        mt_info("upstream cache: evicting %s", oldest);
        if (unlinkat(dfd, oldest, 0) < 0)
            break;
    }
    closedir(d);
}

/* Copies the fetched file into the cache as name; 0 or -errno. */
static int keep(int src, uint64_t size, const char *name)
{
    int dfd = openat(cache_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return -errno;
    int out = openat(dfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    int r = out < 0 ? -errno : 0;
    off_t off = 0;
    while (r == 0 && (uint64_t)off < size) {
        ssize_t k = sendfile(out, src, &off, (size_t)(size - (uint64_t)off));
        if (k < 0 && errno != EINTR)
            r = -errno;
        else if (k == 0)
            r = -EIO;
    }
    if (r == 0) {
        char proc[64];
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", out);
        unlinkat(dfd, name, 0);
        if (linkat(AT_FDCWD, proc, dfd, name, AT_SYMLINK_FOLLOW) < 0)
            r = -errno;
    }
    if (out >= 0)
        close(out);
    close(dfd);
    return r;
}

/* Aborts a transfer larger than the cache (libdebuginfod calls this with
 * the bytes so far and the total when known). */
static int progress(debuginfod_client *c, long a, long b)
{
    (void)c;
    return (a > 0 && (uint64_t)a > cache_limit) || (b > 0 && (uint64_t)b > cache_limit);
}

/* Asks upstream (the lock not held); an fd of the checked file, or -errno. */
static int fetch(const uint8_t *id, size_t len, bool debuginfo, const char *name)
{
    debuginfod_client *cl = debuginfod_begin();
    if (!cl)
        return -ENOMEM;
    debuginfod_set_progressfn(cl, progress);
    debuginfod_add_http_header(cl, UPSTREAM_HOP_HEADER ": 1");
    char *path = NULL;
    int fd = debuginfo ? debuginfod_find_debuginfo(cl, id, (int)len, &path)
                       : debuginfod_find_executable(cl, id, (int)len, &path);
    debuginfod_end(cl);
    /* libdebuginfod's directory for this build-id (its copy, or its note
     * of a miss) is ours to forget: the fd, if any, keeps the file. */
    free(path);
    char hex[2 * ID_MAX + 1];
    build_id_hex(hex, sizeof(hex), id, len);
    int fetch_fd = open_fetch_dir();
    if (fetch_fd >= 0) {
        int r = remove_entry(fetch_fd, hex);
        if (r < 0 && r != -ENOENT)
            mt_warn("upstream cache %s: cannot remove %s/%s: %s", cache_path, FETCH_DIR, hex,
                    strerror(-r));
        close(fetch_fd);
    }
    if (fd < 0)
        return fd == -ENOENT ? -ENOENT : fd;
    struct stat st;
    uint8_t got[ID_MAX];
    const char *why = NULL;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
        why = "not a regular file";
    else if ((uint64_t)st.st_size > cache_limit)
        why = "larger than --cache-size";
    else if (elf_build_id_of_fd(fd, (uint64_t)st.st_size, got, sizeof(got)) != len ||
             memcmp(got, id, len) != 0)
        why = "not an ELF file with the build-id asked";
    if (why) {
        mt_warn("upstream debuginfod: refusing %s: %s", name, why);
        close(fd);
        return -ENOENT;
    }
    return fd;
}

/* Under the lock: the checked file into the cache, then the cache back
 * under its limit. */
static int store(int fd, const char *name)
{
    struct stat st;
    int r = fstat(fd, &st) < 0 ? -errno : keep(fd, (uint64_t)st.st_size, name);
    if (r < 0) {
        mt_warn("upstream cache %s: cannot keep %s: %s", cache_path, name, strerror(-r));
        return r;
    }
    mt_info("upstream debuginfod: fetched %s (%llu bytes)", name, (unsigned long long)st.st_size);
    evict(name);
    return 0;
}

/* Names of one build-id ("ID.debug", "ID.exe"): their fetches share
 * libdebuginfod's directory of that build-id, so they run one at a time. */
static bool same_build_id(const char *a, const char *b)
{
    size_t n = strcspn(a, ".");
    return n == strcspn(b, ".") && memcmp(a, b, n) == 0;
}

static int flight_slot(const char *name, bool *busy)
{
    int free_slot = -1;
    *busy = false;
    for (int i = 0; i < IN_FLIGHT_MAX; i++) {
        if (in_flight[i][0] == 0) {
            if (free_slot < 0)
                free_slot = i;
        } else if (same_build_id(in_flight[i], name)) {
            *busy = true;
            return i;
        }
    }
    return free_slot;
}

int upstream_open(const uint8_t *id, size_t len, bool debuginfo)
{
    if (!enabled || len < 2 || len > ID_MAX)
        return -ENOENT;
    char name[2 * ID_MAX + 8];
    name_of(id, len, debuginfo, name, sizeof(name));
    pthread_mutex_lock(&lock);
    int fd, slot;
    for (;;) {
        fd = open_cached(name);
        if (fd != -ENOENT)
            break;
        bool busy;
        slot = flight_slot(name, &busy);
        if (slot >= 0 && !busy)
            break;
        pthread_cond_wait(&fetched, &lock); /* that one in flight, or a free slot */
    }
    if (fd == -ENOENT) {
        snprintf(in_flight[slot], sizeof(in_flight[slot]), "%s", name);
        pthread_mutex_unlock(&lock);
        int got = fetch(id, len, debuginfo, name);
        pthread_mutex_lock(&lock);
        fd = got;
        if (got >= 0) {
            fd = store(got, name) < 0 ? -ENOENT : open_cached(name);
            close(got);
        }
        in_flight[slot][0] = 0;
        pthread_cond_broadcast(&fetched);
    }
    pthread_mutex_unlock(&lock);
    return fd < 0 ? -ENOENT : fd;
}
