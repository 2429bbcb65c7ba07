/* Reading and writing the traced process's memory.  Reads use
 * process_vm_readv (one system call for a whole stack window); writes go
 * through /proc/PID/mem, which, like ptrace, may write to read-only code
 * pages (breakpoints). */
#ifndef MT_TRACER_TARGET_MEM_H
#define MT_TRACER_TARGET_MEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct target_mem {
    pid_t pid;
    int mem_fd;
};

int target_mem_open(struct target_mem *m, pid_t pid);
void target_mem_close(struct target_mem *m);
/* Reads exactly len bytes; -EFAULT when any part is unmapped. */
int target_mem_read(struct target_mem *m, uint64_t addr, void *buf, size_t len);
/* Reads as much of [addr, addr+len) as is mapped from addr on; returns the
 * number of bytes read (0 when addr itself is unmapped). */
size_t target_mem_read_partial(struct target_mem *m, uint64_t addr, void *buf, size_t len);
int target_mem_write(struct target_mem *m, uint64_t addr, const void *buf, size_t len);
int target_mem_read_word(struct target_mem *m, uint64_t addr, uint64_t *out, unsigned size);
int target_mem_write_word(struct target_mem *m, uint64_t addr, uint64_t value, unsigned size);

#endif
