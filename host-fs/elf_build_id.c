#include "host-fs/elf_build_id.h"

#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#define NOTE_MAX (64 * 1024)
#define TABLE_MAX 4096

struct elf_view {
    int fd;
    uint64_t size;
    bool is64, big;
};

static uint64_t get(const struct elf_view *e, const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)p[e->big ? n - 1 - i : i] << (8 * i);
    return v;
}

static bool read_at(const struct elf_view *e, uint64_t off, void *buf, size_t len)
{
    if (off > e->size || len > e->size - off)
        return false;
    return pread(e->fd, buf, len, (off_t)off) == (ssize_t)len;
}

/* Finds NT_GNU_BUILD_ID among the notes at [off, off+len). */
static size_t scan_notes(const struct elf_view *e, uint64_t off, uint64_t len, uint8_t *id,
                         size_t max)
{
    if (len > NOTE_MAX || len < 12)
        return 0;
    uint8_t buf[NOTE_MAX];
    if (!read_at(e, off, buf, (size_t)len))
        return 0;
    size_t pos = 0;
    while (len - pos >= 12) {
        uint64_t namesz = get(e, buf + pos, 4);
        uint64_t descsz = get(e, buf + pos + 4, 4);
        uint64_t type = get(e, buf + pos + 8, 4);
        pos += 12;
        uint64_t name_pad = (namesz + 3) & ~3ull;
        uint64_t desc_pad = (descsz + 3) & ~3ull;
        if (name_pad > len - pos)
            return 0;
        bool gnu = namesz == 4 && memcmp(buf + pos, "GNU", 4) == 0;
        pos += name_pad;
        if (descsz > len - pos)
            return 0;
        if (gnu && type == 3 && descsz > 0 && descsz <= max) {
            memcpy(id, buf + pos, descsz);
            return descsz;
        }
        if (desc_pad > len - pos)
            return 0;
        pos += desc_pad;
    }
    return 0;
}

size_t elf_build_id_of_fd(int fd, uint64_t file_size, uint8_t *id, size_t max)
{
    struct elf_view e = { .fd = fd, .size = file_size };
    uint8_t eh[64];
    if (!read_at(&e, 0, eh, 52) || memcmp(eh, "\177ELF", 4) != 0)
        return 0;
    if (eh[4] != 1 && eh[4] != 2)
        return 0;
    if (eh[5] != 1 && eh[5] != 2)
        return 0;
    e.is64 = eh[4] == 2;
    e.big = eh[5] == 2;
    if (e.is64 && !read_at(&e, 0, eh, 64))
        return 0;
    uint64_t shoff = e.is64 ? get(&e, eh + 40, 8) : get(&e, eh + 32, 4);
    uint64_t phoff = e.is64 ? get(&e, eh + 32, 8) : get(&e, eh + 28, 4);
    uint64_t phentsize = get(&e, eh + (e.is64 ? 54 : 42), 2);
    uint64_t phnum = get(&e, eh + (e.is64 ? 56 : 44), 2);
    uint64_t shentsize = get(&e, eh + (e.is64 ? 58 : 46), 2);
    uint64_t shnum = get(&e, eh + (e.is64 ? 60 : 48), 2);

    /* Section headers first: a separate debug file keeps its notes there while
     * its program headers may point at nothing. */
    if (shoff && shnum && shnum < TABLE_MAX && shentsize >= (e.is64 ? 64u : 40u) &&
        shentsize <= 256) {
        for (uint64_t i = 0; i < shnum; i++) {
            uint8_t sh[64];
            if (!read_at(&e, shoff + i * shentsize, sh, e.is64 ? 64 : 40))
                break;
            uint64_t type = get(&e, sh + 4, 4);
            if (type != 7) /* SHT_NOTE */
                continue;
            uint64_t off = e.is64 ? get(&e, sh + 24, 8) : get(&e, sh + 16, 4);
            uint64_t sz = e.is64 ? get(&e, sh + 32, 8) : get(&e, sh + 20, 4);
            size_t n = scan_notes(&e, off, sz, id, max);
            if (n)
                return n;
        }
    }
    if (phoff && phnum && phnum < TABLE_MAX && phentsize >= (e.is64 ? 56u : 32u) &&
        phentsize <= 256) {
        for (uint64_t i = 0; i < phnum; i++) {
            uint8_t ph[56];
            if (!read_at(&e, phoff + i * phentsize, ph, e.is64 ? 56 : 32))
                break;
            if (get(&e, ph, 4) != 4) /* PT_NOTE */
                continue;
            uint64_t off = e.is64 ? get(&e, ph + 8, 8) : get(&e, ph + 4, 4);
            uint64_t sz = e.is64 ? get(&e, ph + 32, 8) : get(&e, ph + 16, 4);
            size_t n = scan_notes(&e, off, sz, id, max);
            if (n)
                return n;
        }
    }
    return 0;
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
