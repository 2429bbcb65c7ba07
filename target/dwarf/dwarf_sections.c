#include "target/dwarf/dwarf_sections.h"

#include <string.h>

const char *dwarf_span_string(const struct dwarf_span *s, uint64_t off)
{
    if (!s->data || off >= s->size)
        return NULL;
    const char *p = (const char *)s->data + off;
    if (!memchr(p, 0, s->size - (size_t)off))
        return NULL;
    return p;
}
