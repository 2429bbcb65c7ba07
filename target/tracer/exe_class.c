#include "target/tracer/exe_class.h"

#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "arch/arch.h"

static const char *machine_name(unsigned machine, char *buf, size_t len)
{
    switch (machine) {
    case EM_386: return "i386";
    case EM_X86_64: return "x86_64";
    case EM_ARM: return "arm";
    case EM_AARCH64: return "aarch64";
    default: snprintf(buf, len, "ELF machine %u", machine); return buf;
    }
}

int exe_class_check(pid_t pid, char *err, size_t errlen)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    unsigned char h[EI_NIDENT + 4];
    ssize_t n = pread(fd, h, sizeof(h), 0);
    close(fd);
    if (n != (ssize_t)sizeof(h) || memcmp(h, ELFMAG, SELFMAG) != 0)
        return 0;
    unsigned bits = h[EI_CLASS] == ELFCLASS64 ? 64 : h[EI_CLASS] == ELFCLASS32 ? 32 : 0;
    /* e_machine follows e_type, in the file's byte order. */
    unsigned machine = h[EI_DATA] == ELFDATA2MSB ? (unsigned)h[18] << 8 | h[19]
                                                 : (unsigned)h[19] << 8 | h[18];
    bool same = bits == 8 * ARCH_PTR_SIZE;
#ifdef ARCH_ELF_MACHINE
    same = same && machine == ARCH_ELF_MACHINE;
#endif
    if (same)
        return 0;
    char buf[32];
    snprintf(err, errlen,
             "cannot trace process %d: it runs a %u-bit %s program and this memtrace is built for "
             "%s (use a memtrace built for its CPU%s)",
             (int)pid, bits, machine_name(machine, buf, sizeof(buf)), ARCH_NAME,
             machine == EM_386 ? ": make ARCH=i386" : machine == EM_X86_64 ? ": plain make" : "");
    return -1;
}
