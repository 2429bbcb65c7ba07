/* The target's descriptors, taken by the tracer without trusting them.
 *
 * The traced program is untrusted, and the tracer usually runs as root.
 * Reopening a target's descriptor through /proc/PID/fd/N would open the
 * file again with the tracer's rights: a sibling sharing the target's
 * descriptor table (clone(CLONE_FILES)) could swap descriptor N for an
 * O_PATH descriptor of a file only root may write, and the tracer would map
 * it read-write.  So the tracer takes the very open file the target holds
 * (pidfd_getfd: the target's own rights, nothing more), and checks what it
 * got before it uses it: the shared region must be a memfd of exactly the
 * region's size that nobody can shrink or grow any more (sealed here), the
 * doorbell a FIFO, read without blocking whatever flags the target sets on
 * it. */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "target/agent/agent_internal.h"

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010
#endif

/* The seals the tracer puts on the region: its size is fixed for good (no
 * SIGBUS for a mapping that shrank under it); writes stay allowed. */
#define REGION_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

int agent_take_target_fd(pid_t pid, int64_t fd)
{
    if (fd < 0 || fd > INT32_MAX)
        return -EBADF;
    int pidfd = (int)syscall(SYS_pidfd_open, (long)pid, 0L);
    if (pidfd < 0)
        return -errno;
    int got = (int)syscall(SYS_pidfd_getfd, (long)pidfd, (long)fd, 0L);
    int err = errno;
    close(pidfd);
    /* pidfd_getfd sets O_CLOEXEC on what it returns */
    return got < 0 ? -err : got;
}

void *agent_take_region(pid_t pid, int64_t fd, uint64_t size, char *why, size_t whylen)
{
    int lfd = agent_take_target_fd(pid, fd);
    if (lfd < 0) {
        snprintf(why, whylen, "cannot take the target's memfd (pidfd_getfd): %s", strerror(-lfd));
        return NULL;
    }
    struct stat st;
    struct statfs sfs;
    void *map = NULL;
    /* A memfd is a regular file of the kernel's internal tmpfs (not
     * hugetlbfs: a huge page that cannot be had is a SIGBUS), and only a
     * memfd made with MFD_ALLOW_SEALING takes these seals. */
    if (fstat(lfd, &st) < 0 || !S_ISREG(st.st_mode) || fstatfs(lfd, &sfs) < 0 ||
        sfs.f_type != TMPFS_MAGIC || (fcntl(lfd, F_GETFL) & O_ACCMODE) != O_RDWR) {
        snprintf(why, whylen, "the target's descriptor %d is not the agent's memfd", (int)fd);
        goto out;
    }
    if (fcntl(lfd, F_ADD_SEALS, REGION_SEALS) < 0 || fcntl(lfd, F_GET_SEALS) != REGION_SEALS) {
        snprintf(why, whylen, "the target's descriptor %d cannot be sealed as the agent's memfd",
                 (int)fd);
        goto out;
    }
    /* Its size, read once it can no longer change. */
    if (fstat(lfd, &st) < 0 || (uint64_t)st.st_size != size) {
        snprintf(why, whylen, "the target's memfd has %lld bytes, not %llu", (long long)st.st_size,
                 (unsigned long long)size);
        goto out;
    }
    map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, lfd, 0);
    if (map == MAP_FAILED) {
        snprintf(why, whylen, "mmap of the shared region: %s", strerror(errno));
        map = NULL;
    }
out:
    close(lfd);
    return map;
}

int agent_take_doorbell(pid_t pid, int64_t fd)
{
    int lfd = agent_take_target_fd(pid, fd);
    if (lfd < 0)
        return -1;
    struct stat st;
    if (fstat(lfd, &st) < 0 || !S_ISFIFO(st.st_mode)) {
        close(lfd);
        return -1;
    }
    return lfd;
}

int agent_doorbell_read(int fd)
{
    /* The open file is the target's too: it may clear O_NONBLOCK, or read
     * the byte poll() announced first.  RWF_NOWAIT never blocks, whatever
     * the file's flags say. */
    char buf[256];
    struct iovec iov = {buf, sizeof(buf)};
    ssize_t n = preadv2(fd, &iov, 1, -1, RWF_NOWAIT);
    if (n > 0)
        return (int)n;
    if (n == 0)
        return -EPIPE; /* no writer left: poll() would say POLLHUP for ever */
    return errno == EAGAIN || errno == EINTR ? 0 : -errno;
}
