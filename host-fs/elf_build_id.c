/* memtrace-fs reads build-ids with the target's own ELF reader
 * (target/elf): one set of rules for notes in both programs. */
#include "host-fs/elf_build_id.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "target/elf/elf_file.h"
#include "target/files/byte_source.h"

size_t elf_build_id_of_fd(int fd, uint64_t file_size, uint8_t *id, size_t max)
{
    /* The source owns its descriptor; the caller keeps fd. */
    int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (own < 0)
        return 0;
    char err[256];
    struct elf_file *f = elf_file_open(byte_source_open_fd(own, file_size, "memtrace-fs file"),
                                       err, sizeof(err));
    if (!f)
        return 0;
    size_t n = elf_file_build_id(f, id, max);
    elf_file_close(f);
    return n;
}

int elf_section_of_fd(int fd, uint64_t file_size, const char *name, uint64_t *off,
                      uint64_t *size, uint32_t *type)
{
    struct elf_view e = { .fd = fd, .size = file_size };
    uint8_t eh[64];
    if (!read_at(&e, 0, eh, 52) || memcmp(eh, "\177ELF", 4) != 0 ||
        (eh[4] != 1 && eh[4] != 2) || (eh[5] != 1 && eh[5] != 2))
        return -1;
    e.is64 = eh[4] == 2;
    e.big = eh[5] == 2;
    if (e.is64 && !read_at(&e, 0, eh, 64))
        return -1;
    uint64_t shoff = e.is64 ? get(&e, eh + 40, 8) : get(&e, eh + 32, 4);
    uint64_t shentsize = get(&e, eh + (e.is64 ? 58 : 46), 2);
    uint64_t shnum = get(&e, eh + (e.is64 ? 60 : 48), 2);
    uint64_t shstrndx = get(&e, eh + (e.is64 ? 62 : 50), 2);
    size_t shsz = e.is64 ? 64 : 40;
    if (!shoff || !shnum || shnum >= TABLE_MAX || shstrndx >= shnum || shentsize < shsz ||
        shentsize > 256)
        return -1;
    uint8_t sh[64];
    if (!read_at(&e, shoff + shstrndx * shentsize, sh, shsz))
        return -1;
    uint64_t str_off = e.is64 ? get(&e, sh + 24, 8) : get(&e, sh + 16, 4);
    uint64_t str_size = e.is64 ? get(&e, sh + 32, 8) : get(&e, sh + 20, 4);
    size_t want = strlen(name) + 1;
    for (uint64_t i = 0; i < shnum; i++) {
        if (!read_at(&e, shoff + i * shentsize, sh, shsz))
            return -1;
        uint64_t name_off = get(&e, sh, 4);
        char got[256];
        if (want > sizeof(got) || name_off >= str_size || want > str_size - name_off ||
            !read_at(&e, str_off + name_off, got, want) || memcmp(got, name, want) != 0)
            continue;
        *type = (uint32_t)get(&e, sh + 4, 4);
        *off = e.is64 ? get(&e, sh + 24, 8) : get(&e, sh + 16, 4);
        *size = e.is64 ? get(&e, sh + 32, 8) : get(&e, sh + 20, 4);
        if (*type != 8 /* SHT_NOBITS */ && (*off > file_size || *size > file_size - *off))
            return -1;
        return 0;
    }
    return -1;
}
