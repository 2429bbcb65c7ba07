/* The facts map_place.c decides by, from the target's /proc files. */
#include "target/tracer/map_place.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "arch/arch.h"

/* ADDR_COMPAT_LAYOUT of <linux/personality.h>, without the header. */
#define PERSONALITY_COMPAT_LAYOUT 0x0200000u

uint64_t place_auxv_value(const uint8_t *buf, size_t len, unsigned word, uint64_t type)
{
    if (word != 4 && word != 8)
        return 0;
    for (size_t off = 0; len >= 2 * word && off <= len - 2 * word; off += 2 * word) {
        uint64_t key = 0, val = 0;
        if (word == 8) {
            memcpy(&key, buf + off, 8);
            memcpy(&val, buf + off + 8, 8);
        } else {
            uint32_t k, v;
            memcpy(&k, buf + off, 4);
            memcpy(&v, buf + off + 4, 4);
            key = k;
            val = v;
        }
        if (key == 0)
            break; /* AT_NULL */
        if (key == type)
            return val;
    }
    return 0;
}

uint64_t place_limits_stack(const char *text, size_t len)
{
    static const char name[] = "Max stack size";
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            eol = end;
        if ((size_t)(eol - p) > sizeof(name) - 1 && memcmp(p, name, sizeof(name) - 1) == 0) {
            const char *s = p + sizeof(name) - 1;
            while (s < eol && *s == ' ')
                s++;
            if (eol - s >= 9 && memcmp(s, "unlimited", 9) == 0)
                return UINT64_MAX;
            uint64_t v = 0;
            int digits = 0;
            while (s < eol && *s >= '0' && *s <= '9' && digits < 19) {
                v = v * 10 + (uint64_t)(*s++ - '0');
                digits++;
            }
            return digits && (s == eol || *s == ' ') ? v : 0;
        }
        p = eol + 1;
    }
    return 0;
}

/* Up to cap bytes of a /proc file; <0: -errno. */
static ssize_t read_small(const char *path, void *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t got = 0;
    while (got < cap) {
        ssize_t n = read(fd, (char *)buf + got, cap - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    return (ssize_t)got;
}

int place_facts_read(pid_t pid, struct place_facts *f)
{
    memset(f, 0, sizeof(*f));
    f->word = ARCH_PTR_SIZE;
    int rc = proc_maps_read(pid, &f->maps);
    if (rc < 0)
        return rc;
    char path[64];
    uint8_t auxv[1024];
    snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
    ssize_t n = read_small(path, auxv, sizeof(auxv));
    if (n > 0) {
        f->interp_base = place_auxv_value(auxv, (size_t)n, f->word, 7 /* AT_BASE */);
        f->entry = place_auxv_value(auxv, (size_t)n, f->word, 9 /* AT_ENTRY */);
    }
    char text[4096] = {0}; /* (read() fills what it says; the analyzer cannot tell) */
    snprintf(path, sizeof(path), "/proc/%d/limits", (int)pid);
    n = read_small(path, text, sizeof(text));
    if (n > 0)
        f->stack_limit = place_limits_stack(text, (size_t)n);
    snprintf(path, sizeof(path), "/proc/%d/personality", (int)pid);
    n = read_small(path, text, sizeof(text) - 1);
    unsigned persona = 0;
    if (n > 0) {
        text[n] = '\0';
        sscanf(text, "%x", &persona);
    }
    n = read_small("/proc/sys/vm/legacy_va_layout", text, sizeof(text) - 1);
    int legacy = 0;
    if (n > 0) {
        text[n] = '\0';
        sscanf(text, "%d", &legacy);
    }
    f->legacy = legacy != 0 || (persona & PERSONALITY_COMPAT_LAYOUT);
    return 0;
}

void place_facts_free(struct place_facts *f)
{
    proc_maps_free(&f->maps);
}

uint64_t map_place_hint(pid_t pid, enum map_place_kind kind, uint64_t size, uint64_t near,
                        const char **why)
{
    struct place_facts f;
    struct place_layout l;
    if (why)
        *why = "its /proc/PID/maps is unreadable";
    if (place_facts_read(pid, &f) < 0)
        return 0;
    place_layout_of(&f, &l);
    uint64_t at = 0;
    switch (kind) {
    case MAP_PLACE_CODE:
        at = place_near(&l, &f.maps, size, near, ARCH_PLACE_REACH);
        break;
    case MAP_PLACE_SMALL:
        at = place_near(&l, &f.maps, size, l.mmap_base, l.room_top - l.mmap_base);
        break;
    case MAP_PLACE_FAR:
        at = place_far(&l, &f.maps, size, f.word);
        break;
    }
    if (why)
        *why = l.why ? l.why : at ? NULL : "the neutral places are taken or out of reach";
    place_facts_free(&f);
    return at;
}
