/* Upstream debuginfod servers for what the sysroots lack (--upstream URL,
 * repeatable; else $DEBUGINFOD_URLS).  Fetched by build-id through elfutils'
 * libdebuginfod, checked (a regular ELF file of at most the cache size whose
 * build-id is the one asked) and only then kept in a cache directory that
 * memtrace-fs owns (--cache-dir, mode 0700, files named by build-id and
 * opened without following links), under a size limit (--cache-size) by
 * evicting the least recently used.  Both protocols serve from the cache.
 *
 * A request that itself comes from a memtrace-fs fetching upstream (it
 * carries UPSTREAM_HOP_HEADER) is answered from the sysroots only: two
 * servers naming each other never loop. */
#ifndef MTFS_UPSTREAM_H
#define MTFS_UPSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define UPSTREAM_HOP_HEADER "X-Memtrace-Fs-Upstream"
#define UPSTREAM_DEFAULT_CACHE_SIZE (1ull << 30)

/* Before any thread starts (it sets libdebuginfod's environment).  urls
 * (n of them) or, when n is 0, $DEBUGINFOD_URLS; nothing to do when both
 * are empty.  cache_dir NULL: $CACHE_DIRECTORY (systemd), else
 * $XDG_CACHE_HOME/memtrace-fs, else ~/.cache/memtrace-fs.  0, or -1 with
 * a one-line err. */
int upstream_configure(const char *const *urls, int n, const char *cache_dir,
                       uint64_t cache_size, char *err, size_t errlen);
bool upstream_enabled(void);

/* An fd of the debug file (debuginfo) or the executable with this build-id,
 * from the cache or fetched now; a negative errno (-ENOENT) otherwise. */
int upstream_open(const uint8_t *id, size_t len, bool debuginfo);

/* "1G", "512M", "4096": bytes; -1 when not a size. */
int upstream_parse_size(const char *s, uint64_t *out);

#endif
