#include "target/dwarf/dwarf_sections.h"

#include <string.h>

#include "target/files/cursor.h"

const char *dwarf_span_string(const struct dwarf_span *s, uint64_t off)
{
    if (!s->data || off >= s->size)
        return NULL;
    const char *p = (const char *)s->data + off;
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
    if (pos > s->size)
        return false;
    struct cursor c;
    cursor_init(&c, s->data, s->size, big_endian);
    cursor_seek(&c, (size_t)pos);
    *out = cursor_uint(&c, size);
    return cursor_ok(&c);
}
