#include "target/dwarf/dwarf_sections.h"

#include <string.h>

#include "target/elf/elf_section_map.h"
#include "shared/files/cursor.h"

bool dwarf_span_ensure(const struct dwarf_span *s, uint64_t off, uint64_t len)
{
    if (!s->map)
        return true;
    if (off >= s->size)
        return false;
    if (len > s->size - off)
        len = s->size - off;
    return section_map_ensure(s->map, off, len);
}

/* Step of a string search through a mapped span. */
#define STRING_STEP 256

const char *dwarf_span_string(const struct dwarf_span *s, uint64_t off)
{
    if (!s->data || off >= s->size)
        return NULL;
    const char *p = (const char *)s->data + off;
    if (s->map) {
        /* Resident piece by piece until the NUL, then the whole string at
         * once so that none of it is the least recently used. */
        for (uint64_t pos = off;; pos += STRING_STEP) {
            if (pos >= s->size || !dwarf_span_ensure(s, pos, STRING_STEP))
                return NULL;
            size_t n = s->size - pos < STRING_STEP ? (size_t)(s->size - pos) : STRING_STEP;
            const char *nul = memchr(s->data + pos, 0, n);
            if (nul)
                return dwarf_span_ensure(s, off, (uint64_t)(nul - p) + 1) ? p : NULL;
        }
    }
    if (!memchr(p, 0, s->size - (size_t)off))
        return NULL;
    return p;
}

bool dwarf_span_entry(const struct dwarf_span *s, bool big_endian, uint64_t base, uint64_t index,
                      unsigned size, uint64_t *out)
{
    if (!s->data || size == 0 || index > (UINT64_MAX - base) / size)
        return false;
    uint64_t pos = base + index * size;
    if (pos > s->size || !dwarf_span_ensure(s, pos, size))
        return false;
    struct cursor c;
    cursor_init(&c, s->data, s->size, big_endian);
    cursor_seek(&c, (size_t)pos);
    *out = cursor_uint(&c, size);
    return cursor_ok(&c);
}
