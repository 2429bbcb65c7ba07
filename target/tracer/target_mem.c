#include "target/tracer/target_mem.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

int target_mem_open(struct target_mem *m, pid_t pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
    m->pid = pid;
    m->mem_fd = open(path, O_RDWR | O_CLOEXEC);
    return m->mem_fd < 0 ? -errno : 0;
}

void target_mem_close(struct target_mem *m)
{
    if (m->mem_fd >= 0)
        close(m->mem_fd);
    m->mem_fd = -1;
}

size_t target_mem_read_partial(struct target_mem *m, uint64_t addr, void *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        struct iovec local = {(char *)buf + done, len - done};
        struct iovec remote = {(void *)(uintptr_t)(addr + done), len - done};
        ssize_t n = process_vm_readv(m->pid, &local, 1, &remote, 1, 0);
        if (n <= 0) {
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0 && errno == ENOSYS) {
                n = pread(m->mem_fd, (char *)buf + done, len - done, (off_t)(addr + done));
                if (n > 0) {
                    done += (size_t)n;
                    continue;
                }
            }
            break;
        }
        done += (size_t)n;
        /* A short read stops at the first unmapped page: asking again
         * would only fail there (one system call saved per stack window
         * that reaches past the top of the stack). */
        if (done < len)
            break;
    }
    return done;
}

int target_mem_read(struct target_mem *m, uint64_t addr, void *buf, size_t len)
{
    return target_mem_read_partial(m, addr, buf, len) == len ? 0 : -EFAULT;
}

int target_mem_write(struct target_mem *m, uint64_t addr, const void *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = pwrite(m->mem_fd, (const char *)buf + done, len - done, (off_t)(addr + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -errno : -EFAULT;
        done += (size_t)n;
    }
    return 0;
}

int target_mem_read_word(struct target_mem *m, uint64_t addr, uint64_t *out, unsigned size)
{
    uint64_t v = 0;
    int rc = target_mem_read(m, addr, &v, size);
    /* Target and tracer share byte order (same machine). */
    if (size == 4) {
        uint32_t w;
        memcpy(&w, &v, 4);
        v = w;
    }
    *out = v;
    return rc;
}

int target_mem_write_word(struct target_mem *m, uint64_t addr, uint64_t value, unsigned size)
{
    if (size == 4) {
        uint32_t w = (uint32_t)value;
        return target_mem_write(m, addr, &w, 4);
    }
    return target_mem_write(m, addr, &value, size);
}
