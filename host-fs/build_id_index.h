/* Build-ids of the ELF files inside the sysroots, for a target that asks by
 * build-id when the sysroot has no /usr/lib/debug/.build-id entry for it but
 * holds the unstripped object itself (a build tree used as a sysroot).
 * Built lazily on the first miss, rebuilt on a miss at most every 30 s;
 * bounded in files and depth; shared by all sessions (locked).  The walk
 * runs in a thread of its own: a lookup waits for it at most
 * BUILD_ID_INDEX_WAIT_MS and otherwise answers "not found", so that a
 * client (5 s timeout) never times out on a big tree such as "/".
 * Kernel pseudo-filesystems (/proc, /sys...) are not walked. */
#ifndef MTFS_BUILD_ID_INDEX_H
#define MTFS_BUILD_ID_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "host-fs/lookup.h"

#define BUILD_ID_INDEX_WAIT_MS 2000

/* An fd of an ELF file in the sysroots whose build-id is id, or -ENOENT. */
int build_id_index_open(const struct sysroot_set *s, const uint8_t *id, size_t len);

/* The same, keeping only a file that want(fd, size) accepts (NULL: any). */
int build_id_index_open_if(const struct sysroot_set *s, const uint8_t *id, size_t len,
                           int (*want)(int fd, uint64_t size));

#endif
