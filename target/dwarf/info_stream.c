#include "target/dwarf/info_stream.h"

#include <stdlib.h>

#include "shared/xalloc.h"
#include "target/elf/elf_section_map.h"
#include "shared/files/cursor.h"

/* Resident bytes beyond the unit being walked: units are read in order,
 * so little more than the current one is ever needed. */
#define INFO_BUDGET (16u * 1024)

struct info_stream {
    struct section_map *map;
    bool big_endian;
    bool failed;
    bool done;
    uint64_t pos;             /* section offset of the next unit */
};

struct info_stream *info_stream_open(struct elf_file *f)
{
    const struct elf_section *sec = elf_file_find_section(f, ".debug_info");
    struct section_map *map = sec ? section_map_open(f, sec, INFO_BUDGET, NULL) : NULL;
    if (!map)
        return NULL;
    struct info_stream *s = xcalloc(1, sizeof(*s));
    s->map = map;
    s->big_endian = elf_file_big_endian(f);
    return s;
}

void info_stream_close(struct info_stream *s)
{
    if (!s)
        return;
    section_map_close(s->map);
    free(s);
}

bool info_stream_failed(const struct info_stream *s) { return s->failed; }

void info_stream_seek(struct info_stream *s, uint64_t offset)
{
    s->pos = offset;
    s->done = false;
    s->failed = false;
}

void info_stream_park(struct info_stream *s) { section_map_park(s->map); }

size_t info_stream_memory(const struct info_stream *s) { return sizeof(*s) + section_map_memory(s->map); }

bool info_stream_next(struct info_stream *s, const uint8_t **data, size_t *size, uint64_t *offset)
{
    if (s->done || s->failed)
        return false;
    uint64_t total = section_map_size(s->map);
    if (s->pos >= total) {
        s->done = true;
        return false;
    }
    const uint8_t *base = section_map_data(s->map);
    uint64_t left = total - s->pos;
    if (left < 4 || !section_map_ensure(s->map, s->pos, left < 12 ? left : 12)) {
        s->failed = true;
        return false;
    }
    struct cursor c;
    cursor_init(&c, base + s->pos, left < 12 ? (size_t)left : 12, s->big_endian);
    bool is64 = false;
    uint64_t length = cursor_u32(&c);
    if (length == 0xffffffffu) {
        is64 = true;
        length = cursor_u64(&c);
    }
    size_t head = is64 ? 12 : 4;
    if (!cursor_ok(&c) || length > left - head || head + length > INFO_STREAM_MAX_UNIT ||
        !section_map_ensure(s->map, s->pos, head + length)) {
        s->failed = true;
        return false;
    }
    *data = base + s->pos;
    *size = head + (size_t)length;
    *offset = s->pos;
    s->pos += *size;
    return true;
}
