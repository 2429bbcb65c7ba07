/* ELF headers and tables, read by range and checked field by field: the file
 * may come from anywhere (a board, a sysroot, a fuzzer). */
#include "shared/elf/elf_file.h"

#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/xalloc.h"
#include "shared/files/cursor.h"
#include "shared/elf/elf_compress.h"

/* Caps on what the headers may ask us to allocate.  Real files stay far
 * below: glibc has ~80 sections and ~15 segments. */
#define MAX_SEGMENTS 65535u
#define MAX_SECTIONS (1u << 20)
#define MAX_SHSTRTAB_BYTES (16u * 1024 * 1024)
#define MAX_NOTE_BYTES (1u * 1024 * 1024)
#define MAX_BUILD_ID ELF_BUILD_ID_MAX
#define MAX_INTERP 4096u
#define MAX_DEBUGLINK_BYTES 4096u

struct elf_file {
    struct byte_source *src;
    unsigned elf_class;
    bool big_endian;
    unsigned machine, type;
    uint64_t entry;

    struct elf_segment *segments;
    size_t segment_count;
    struct elf_section *sections;
    size_t section_count;
    char *shstrtab; /* names of sections point into it */

    uint8_t build_id[MAX_BUILD_ID];
    size_t build_id_len;
    char *debuglink;
    uint32_t debuglink_crc;
    char *altlink;
    uint8_t altlink_id[MAX_BUILD_ID];
    size_t altlink_id_len;
    char *interp;
};

static void set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap); // NOLINT(clang-analyzer-valist.Uninitialized): started above; clang 14 misses it
    va_end(ap);
}

static bool range_in_file(const struct elf_file *f, uint64_t off, uint64_t len)
{
    return off <= f->src->size && len <= f->src->size - off;
}

/* Reads len bytes at off into a fresh buffer (len already capped). */
static uint8_t *read_alloc(struct elf_file *f, uint64_t off, size_t len, int *rc)
{
    uint8_t *buf = xmalloc(len ? len : 1);
    *rc = byte_source_read(f->src, off, buf, len);
    if (*rc < 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

static void cursor_for(const struct elf_file *f, struct cursor *c, const void *data, size_t size)
{
    cursor_init(c, data, size, f->big_endian);
}

/* An address-sized field: 4 bytes in ELF32, 8 in ELF64. */
static uint64_t word(const struct elf_file *f, struct cursor *c)
{
    return f->elf_class == 64 ? cursor_u64(c) : cursor_u32(c);
}

struct file_header {
    uint64_t phoff, shoff;
    unsigned phentsize, phnum, shentsize, shnum, shstrndx;
};

static int parse_ident(struct elf_file *f, const uint8_t *ident, char *err, size_t errlen)
{
    if (memcmp(ident, ELFMAG, SELFMAG) != 0) {
        set_err(err, errlen, "not an ELF file");
        return -1;
    }
    if (ident[EI_CLASS] == ELFCLASS32)
        f->elf_class = 32;
    else if (ident[EI_CLASS] == ELFCLASS64)
        f->elf_class = 64;
    else {
        set_err(err, errlen, "unknown ELF class %u", ident[EI_CLASS]);
        return -1;
    }
    if (ident[EI_DATA] == ELFDATA2LSB)
        f->big_endian = false;
    else if (ident[EI_DATA] == ELFDATA2MSB)
        f->big_endian = true;
    else {
        set_err(err, errlen, "unknown ELF byte order %u", ident[EI_DATA]);
        return -1;
    }
    if (ident[EI_VERSION] != EV_CURRENT) {
        set_err(err, errlen, "unknown ELF version %u", ident[EI_VERSION]);
        return -1;
    }
    return 0;
}

static int read_file_header(struct elf_file *f, struct file_header *h, char *err, size_t errlen)
{
    uint8_t buf[sizeof(Elf64_Ehdr)];
    size_t want = sizeof(Elf32_Ehdr);
    if (f->src->size < EI_NIDENT || byte_source_read(f->src, 0, buf, EI_NIDENT) < 0) {
        set_err(err, errlen, "too short for an ELF header");
        return -1;
    }
    if (parse_ident(f, buf, err, errlen) < 0)
        return -1;
    if (f->elf_class == 64)
        want = sizeof(Elf64_Ehdr);
    if (byte_source_read(f->src, 0, buf, want) < 0) {
        set_err(err, errlen, "truncated ELF header");
        return -1;
    }
    struct cursor c;
    cursor_for(f, &c, buf, want);
    cursor_skip(&c, EI_NIDENT);
    f->type = cursor_u16(&c);
    f->machine = cursor_u16(&c);
    uint32_t version = cursor_u32(&c);
    f->entry = word(f, &c);
    h->phoff = word(f, &c);
    h->shoff = word(f, &c);
    cursor_u32(&c); /* e_flags */
    unsigned ehsize = cursor_u16(&c);
    h->phentsize = cursor_u16(&c);
    h->phnum = cursor_u16(&c);
    h->shentsize = cursor_u16(&c);
    h->shnum = cursor_u16(&c);
    h->shstrndx = cursor_u16(&c);
    if (!cursor_ok(&c) || version != EV_CURRENT || ehsize < want) {
        set_err(err, errlen, "bad ELF header");
        return -1;
    }
    return 0;
}

static size_t segment_entry_size(const struct elf_file *f)
{
    return f->elf_class == 64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
}

static size_t section_entry_size(const struct elf_file *f)
{
    return f->elf_class == 64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
}

static void decode_section(const struct elf_file *f, struct cursor *c, struct elf_section *s,
                           uint32_t *name_off)
{
    *name_off = cursor_u32(c);
    s->type = cursor_u32(c);
    s->flags = word(f, c);
    s->addr = word(f, c);
    s->offset = word(f, c);
    s->size = word(f, c);
    s->link = cursor_u32(c);
    s->info = cursor_u32(c);
    word(f, c); /* sh_addralign */
    s->entsize = word(f, c);
}

static void decode_segment(const struct elf_file *f, struct cursor *c, struct elf_segment *p)
{
    p->type = cursor_u32(c);
    if (f->elf_class == 64) {
        p->flags = cursor_u32(c);
        p->offset = cursor_u64(c);
        p->vaddr = cursor_u64(c);
        cursor_u64(c); /* p_paddr */
        p->filesz = cursor_u64(c);
        p->memsz = cursor_u64(c);
        p->align = cursor_u64(c);
    } else {
        p->offset = cursor_u32(c);
        p->vaddr = cursor_u32(c);
        cursor_u32(c); /* p_paddr */
        p->filesz = cursor_u32(c);
        p->memsz = cursor_u32(c);
        p->flags = cursor_u32(c);
        p->align = cursor_u32(c);
    }
}

/* Section 0 holds the real counts when they do not fit the ELF header
 * (e_shnum == 0, e_shstrndx == SHN_XINDEX, e_phnum == PN_XNUM). */
static int resolve_extended_counts(struct elf_file *f, struct file_header *h, char *err, size_t errlen)
{
    if (h->shoff == 0) {
        h->shnum = 0;
        if (h->phnum == PN_XNUM) {
            set_err(err, errlen, "e_phnum is PN_XNUM but there are no section headers");
            return -1;
        }
        return 0;
    }
    if (h->shentsize != section_entry_size(f)) {
        set_err(err, errlen, "bad e_shentsize %u", h->shentsize);
        return -1;
    }
    bool needs_zero = h->shnum == 0 || h->shstrndx == SHN_XINDEX || h->phnum == PN_XNUM;
    if (!needs_zero)
        return 0;
    uint8_t buf[sizeof(Elf64_Shdr)];
    if (byte_source_read(f->src, h->shoff, buf, h->shentsize) < 0) {
        set_err(err, errlen, "section header 0 is outside the file");
        return -1;
    }
    struct cursor c;
    struct elf_section s0;
    uint32_t name_off;
    cursor_for(f, &c, buf, h->shentsize);
    decode_section(f, &c, &s0, &name_off);
    if (h->shnum == 0) {
        if (s0.size > MAX_SECTIONS) {
            set_err(err, errlen, "too many sections (%llu)", (unsigned long long)s0.size);
            return -1;
        }
        h->shnum = (unsigned)s0.size;
    }
    if (h->shstrndx == SHN_XINDEX)
        h->shstrndx = s0.link;
    if (h->phnum == PN_XNUM)
        h->phnum = s0.info;
    return 0;
}

/* The program or section header table: count entries of entsize bytes at
 * off, bounded and inside the file.  NULL with the reason in err. */
static uint8_t *read_header_table(struct elf_file *f, uint64_t off, unsigned count, unsigned max,
                                  unsigned entsize, const char *entries, const char *table,
                                  char *err, size_t errlen)
{
    if (count > max) {
        set_err(err, errlen, "too many %s (%u)", entries, count);
        return NULL;
    }
    size_t bytes = (size_t)count * entsize;
    if (!range_in_file(f, off, bytes)) {
        set_err(err, errlen, "%s are outside the file", table);
        return NULL;
    }
    int rc;
    uint8_t *raw = read_alloc(f, off, bytes, &rc);
    if (!raw)
        set_err(err, errlen, "reading %s: %s", table, strerror(-rc));
    return raw;
}

static int load_segments(struct elf_file *f, const struct file_header *h, char *err, size_t errlen)
{
    if (h->phnum == 0 || h->phoff == 0)
        return 0;
    if (h->phentsize != segment_entry_size(f)) {
        set_err(err, errlen, "bad e_phentsize %u", h->phentsize);
        return -1;
    }
    size_t bytes = (size_t)h->phnum * h->phentsize;
    uint8_t *raw = read_header_table(f, h->phoff, h->phnum, MAX_SEGMENTS, h->phentsize,
                                     "segments", "program headers", err, errlen);
    if (!raw)
        return -1;
    f->segments = xcalloc(h->phnum, sizeof(*f->segments));
    f->segment_count = h->phnum;
    struct cursor c;
    cursor_for(f, &c, raw, bytes);
    for (size_t i = 0; i < f->segment_count; i++)
        decode_segment(f, &c, &f->segments[i]);
    free(raw);
    return 0;
}

static int load_sections(struct elf_file *f, const struct file_header *h, char *err, size_t errlen)
{
    if (h->shnum == 0)
        return 0;
    size_t bytes = (size_t)h->shnum * h->shentsize;
    uint8_t *raw = read_header_table(f, h->shoff, h->shnum, MAX_SECTIONS, h->shentsize,
                                     "sections", "section headers", err, errlen);
    if (!raw)
        return -1;
    if (h->shstrndx >= h->shnum && h->shstrndx != SHN_UNDEF) {
        set_err(err, errlen, "bad e_shstrndx %u", h->shstrndx);
        free(raw);
        return -1;
    }
    f->sections = xcalloc(h->shnum, sizeof(*f->sections));
    f->section_count = h->shnum;
    uint32_t *name_offs = xcalloc(h->shnum, sizeof(*name_offs));
    struct cursor c;
    cursor_for(f, &c, raw, bytes);
    for (size_t i = 0; i < f->section_count; i++)
        decode_section(f, &c, &f->sections[i], &name_offs[i]);
    free(raw);

    size_t strsize = 0;
    if (h->shstrndx != SHN_UNDEF) {
        const struct elf_section *ss = &f->sections[h->shstrndx];
        if (ss->type == SHT_NOBITS || ss->size > MAX_SHSTRTAB_BYTES ||
            !range_in_file(f, ss->offset, ss->size)) {
            free(name_offs);
            set_err(err, errlen, "bad section name table");
            return -1;
        }
        strsize = (size_t)ss->size;
        int rc;
        f->shstrtab = (char *)read_alloc(f, ss->offset, strsize, &rc);
        if (!f->shstrtab) {
            free(name_offs);
            set_err(err, errlen, "reading section names: %s", strerror(-rc));
            return -1;
        }
    }
    /* A name must end inside the table; anything else gets "". */
    static const char empty[] = "";
    for (size_t i = 0; i < f->section_count; i++) {
        uint32_t off = name_offs[i];
        f->sections[i].name = empty;
        if (f->shstrtab && off < strsize && memchr(f->shstrtab + off, 0, strsize - off))
            f->sections[i].name = f->shstrtab + off;
    }
    free(name_offs);
    return 0;
}

/* Walks a block of notes looking for NT_GNU_BUILD_ID.  align is 4 or 8
 * (the owner's alignment of name and descriptor). */
static bool find_build_id_note(struct elf_file *f, const uint8_t *data, size_t size, size_t align)
{
    struct cursor c;
    cursor_for(f, &c, data, size);
    while (cursor_left(&c) >= 12) {
        uint32_t namesz = cursor_u32(&c);
        uint32_t descsz = cursor_u32(&c);
        uint32_t type = cursor_u32(&c);
        size_t name_pos = c.pos;
        uint64_t name_pad = ((uint64_t)namesz + align - 1) & ~(uint64_t)(align - 1);
        if (!cursor_skip(&c, name_pad))
            return false;
        size_t desc_pos = c.pos;
        uint64_t desc_pad = ((uint64_t)descsz + align - 1) & ~(uint64_t)(align - 1);
        if (descsz > cursor_left(&c))
            return false;
        if (type == NT_GNU_BUILD_ID && namesz == 4 && memcmp(data + name_pos, "GNU", 4) == 0 &&
            descsz > 0) {
            size_t n = descsz < MAX_BUILD_ID ? descsz : MAX_BUILD_ID;
            memcpy(f->build_id, data + desc_pos, n);
            f->build_id_len = n;
            return true;
        }
        if (!cursor_skip(&c, desc_pad < cursor_left(&c) ? desc_pad : cursor_left(&c)))
            return false;
    }
    return false;
}

static bool build_id_from_range(struct elf_file *f, uint64_t off, uint64_t size, uint64_t align)
{
    if (size == 0 || size > MAX_NOTE_BYTES || !range_in_file(f, off, size))
        return false;
    int rc;
    uint8_t *buf = read_alloc(f, off, (size_t)size, &rc);
    if (!buf)
        return false;
    bool found = find_build_id_note(f, buf, (size_t)size, align == 8 ? 8 : 4);
    free(buf);
    return found;
}

static void load_build_id(struct elf_file *f)
{
    for (size_t i = 0; i < f->segment_count; i++) {
        const struct elf_segment *p = &f->segments[i];
        if (p->type == PT_NOTE && build_id_from_range(f, p->offset, p->filesz, p->align))
            return;
    }
    const struct elf_section *s = elf_file_find_section(f, ".note.gnu.build-id");
    if (s && s->type == SHT_NOTE && !(s->flags & SHF_COMPRESSED) &&
        build_id_from_range(f, s->offset, s->size, 4))
        return;
    /* Debug files made by objcopy --only-keep-debug keep the note sections
     * but may have them under another name; any SHT_NOTE will do. */
    for (size_t i = 0; i < f->section_count; i++) {
        s = &f->sections[i];
        if (s->type == SHT_NOTE && !(s->flags & SHF_COMPRESSED) &&
            build_id_from_range(f, s->offset, s->size, 4))
            return;
    }
}

/* The bytes of the small uncompressed section name, of min to
 * MAX_DEBUGLINK_BYTES bytes inside the file (size in *size), or NULL. */
static uint8_t *read_link_section(struct elf_file *f, const char *name, uint64_t min, size_t *size)
{
    const struct elf_section *s = elf_file_find_section(f, name);
    if (!s || (s->flags & SHF_COMPRESSED) || s->size < min || s->size > MAX_DEBUGLINK_BYTES ||
        !range_in_file(f, s->offset, s->size))
        return NULL;
    int rc;
    *size = (size_t)s->size;
    return read_alloc(f, s->offset, *size, &rc);
}

static void load_debuglink(struct elf_file *f)
{
    size_t size;
    uint8_t *buf = read_link_section(f, ".gnu_debuglink", 8, &size);
    if (!buf)
        return;
    struct cursor c;
    cursor_for(f, &c, buf, size);
    const char *name = cursor_cstr(&c);
    size_t crc_pos = (c.pos + 3) & ~(size_t)3;
    if (name && name[0] && cursor_seek(&c, crc_pos)) {
        uint32_t crc = cursor_u32(&c);
        if (cursor_ok(&c)) {
            f->debuglink = xstrdup(name);
            f->debuglink_crc = crc;
        }
    }
    free(buf);
}

static void load_debugaltlink(struct elf_file *f)
{
    size_t size;
    uint8_t *buf = read_link_section(f, ".gnu_debugaltlink", 2, &size);
    if (!buf)
        return;
    const uint8_t *nul = memchr(buf, 0, size);
    size_t id_len = nul ? size - (size_t)(nul + 1 - buf) : 0;
    if (nul && nul != buf && id_len > 0 && id_len <= MAX_BUILD_ID) {
        f->altlink = xstrdup((const char *)buf);
        memcpy(f->altlink_id, nul + 1, id_len);
        f->altlink_id_len = id_len;
    }
    free(buf);
}

static void load_interp(struct elf_file *f)
{
    for (size_t i = 0; i < f->segment_count; i++) {
        const struct elf_segment *p = &f->segments[i];
        if (p->type != PT_INTERP)
            continue;
        if (p->filesz < 2 || p->filesz > MAX_INTERP || !range_in_file(f, p->offset, p->filesz))
            return;
        int rc;
        char *buf = (char *)read_alloc(f, p->offset, (size_t)p->filesz, &rc);
        if (!buf)
            return;
        /* The path must end with its NUL inside the segment. */
        if (memchr(buf, 0, (size_t)p->filesz) && buf[0])
            f->interp = buf;
        else
            free(buf);
        return;
    }
}

struct elf_file *elf_file_open(struct byte_source *src, char *err, size_t errlen)
{
    if (!src) {
        set_err(err, errlen, "no file");
        return NULL;
    }
    struct elf_file *f = xcalloc(1, sizeof(*f));
    f->src = src;
    struct file_header h;
    if (read_file_header(f, &h, err, errlen) < 0 ||
        resolve_extended_counts(f, &h, err, errlen) < 0 ||
        load_segments(f, &h, err, errlen) < 0 ||
        load_sections(f, &h, err, errlen) < 0) {
        elf_file_close(f);
        return NULL;
    }
    load_build_id(f);
    load_debuglink(f);
    load_debugaltlink(f);
    load_interp(f);
    return f;
}

void elf_file_close(struct elf_file *f)
{
    if (!f)
        return;
    byte_source_close(f->src);
    free(f->segments);
    free(f->sections);
    free(f->shstrtab);
    free(f->debuglink);
    free(f->altlink);
    free(f->interp);
    free(f);
}

const char *elf_file_name(const struct elf_file *f) { return f->src->name; }
unsigned elf_file_class(const struct elf_file *f) { return f->elf_class; }
bool elf_file_big_endian(const struct elf_file *f) { return f->big_endian; }
unsigned elf_file_machine(const struct elf_file *f) { return f->machine; }
unsigned elf_file_type(const struct elf_file *f) { return f->type; }
uint64_t elf_file_entry(const struct elf_file *f) { return f->entry; }
uint64_t elf_file_size(const struct elf_file *f) { return f->src->size; }

size_t elf_file_segment_count(const struct elf_file *f) { return f->segment_count; }

const struct elf_segment *elf_file_segment(const struct elf_file *f, size_t i)
{
    return i < f->segment_count ? &f->segments[i] : NULL;
}

size_t elf_file_section_count(const struct elf_file *f) { return f->section_count; }

const struct elf_section *elf_file_section(const struct elf_file *f, size_t i)
{
    return i < f->section_count ? &f->sections[i] : NULL;
}

size_t elf_file_section_index(const struct elf_file *f, const struct elf_section *s)
{
    if (!s || s < f->sections || s >= f->sections + f->section_count)
        return 0;
    return (size_t)(s - f->sections);
}

static const struct elf_section *find_exact(const struct elf_file *f, const char *name)
{
    for (size_t i = 0; i < f->section_count; i++) {
        const struct elf_section *s = &f->sections[i];
        if (s->type != SHT_NOBITS && s->type != SHT_NULL && strcmp(s->name, name) == 0)
            return s;
    }
    return NULL;
}

const struct elf_section *elf_file_find_section(const struct elf_file *f, const char *name)
{
    const struct elf_section *s = find_exact(f, name);
    if (s || strncmp(name, ".debug_", 7) != 0)
        return s;
    char zname[256];
    if ((size_t)snprintf(zname, sizeof(zname), ".zdebug_%s", name + 7) >= sizeof(zname))
        return NULL;
    return find_exact(f, zname);
}

const struct elf_section *elf_file_find_section_type(const struct elf_file *f, uint32_t type)
{
    for (size_t i = 0; i < f->section_count; i++)
        if (f->sections[i].type == type)
            return &f->sections[i];
    return NULL;
}

static int load_shf_compressed(struct elf_file *f, const struct elf_section *s, struct elf_blob *out)
{
    size_t hdr_size = f->elf_class == 64 ? sizeof(Elf64_Chdr) : sizeof(Elf32_Chdr);
    uint8_t buf[sizeof(Elf64_Chdr)];
    if (s->size < hdr_size)
        return -EINVAL;
    int rc = byte_source_read(f->src, s->offset, buf, hdr_size);
    if (rc < 0)
        return rc;
    struct cursor c;
    cursor_for(f, &c, buf, hdr_size);
    uint32_t type = cursor_u32(&c);
    if (f->elf_class == 64)
        cursor_u32(&c); /* ch_reserved */
    uint64_t size = word(f, &c);
    if (type != ELFCOMPRESS_ZLIB)
        return -ENOTSUP;
    if (size > ELF_SECTION_MAX_BYTES)
        return -EFBIG;
    rc = elf_inflate_range(f->src, s->offset + hdr_size, s->size - hdr_size, (size_t)size, &out->data);
    if (rc == 0)
        out->size = (size_t)size;
    return rc;
}

/* .zdebug_*: "ZLIB", the uncompressed size as 8 big-endian bytes, zlib data. */
static int load_zdebug(struct elf_file *f, const struct elf_section *s, struct elf_blob *out)
{
    uint8_t buf[12];
    if (s->size < sizeof(buf))
        return -EINVAL;
    int rc = byte_source_read(f->src, s->offset, buf, sizeof(buf));
    if (rc < 0)
        return rc;
    if (memcmp(buf, "ZLIB", 4) != 0)
        return -EINVAL;
    struct cursor c;
    cursor_init(&c, buf + 4, 8, true);
    uint64_t size = cursor_u64(&c);
    if (size > ELF_SECTION_MAX_BYTES)
        return -EFBIG;
    rc = elf_inflate_range(f->src, s->offset + 12, s->size - 12, (size_t)size, &out->data);
    if (rc == 0)
        out->size = (size_t)size;
    return rc;
}

int elf_file_load_section(struct elf_file *f, const struct elf_section *s, struct elf_blob *out)
{
    out->data = NULL;
    out->size = 0;
    if (!s || s->type == SHT_NOBITS || s->type == SHT_NULL)
        return -ENOENT;
    if (!range_in_file(f, s->offset, s->size))
        return -ERANGE;
    if (s->flags & SHF_COMPRESSED)
        return load_shf_compressed(f, s, out);
    if (strncmp(s->name, ".zdebug", 7) == 0)
        return load_zdebug(f, s, out);
    if (s->size > ELF_SECTION_MAX_BYTES)
        return -EFBIG;
    int rc;
    out->data = read_alloc(f, s->offset, (size_t)s->size, &rc);
    if (!out->data)
        return rc;
    out->size = (size_t)s->size;
    return 0;
}

void elf_blob_free(struct elf_blob *b)
{
    if (!b)
        return;
    free(b->data);
    b->data = NULL;
    b->size = 0;
}

int elf_file_read(struct elf_file *f, uint64_t off, void *buf, size_t len)
{
    return byte_source_read(f->src, off, buf, len);
}

/* Piece by piece, so a range may cross from one PT_LOAD into the next;
 * bytes past p_filesz (but inside p_memsz) read as zero, like .bss. */
int elf_file_read_vaddr(struct elf_file *f, uint64_t vaddr, void *buf, size_t len)
{
    uint8_t *out = buf;
    while (len > 0) {
        const struct elf_segment *seg = NULL;
        for (size_t i = 0; i < f->segment_count; i++) {
            const struct elf_segment *p = &f->segments[i];
            if (p->type == PT_LOAD && vaddr >= p->vaddr && vaddr - p->vaddr < p->memsz) {
                seg = p;
                break;
            }
        }
        if (!seg)
            return -EFAULT;
        uint64_t rel = vaddr - seg->vaddr;
        uint64_t avail = seg->memsz - rel;
        size_t n = avail < len ? (size_t)avail : len;
        if (rel < seg->filesz) {
            uint64_t file_avail = seg->filesz - rel;
            if (n > file_avail)
                n = (size_t)file_avail;
            if (seg->offset > UINT64_MAX - rel)
                return -EFAULT;
            int rc = byte_source_read(f->src, seg->offset + rel, out, n);
            if (rc < 0)
                return rc;
        } else {
            memset(out, 0, n);
        }
        out += n;
        vaddr += n;
        len -= n;
        if (len > 0 && vaddr == 0)
            return -EFAULT; /* wrapped around the address space */
    }
    return 0;
}

size_t elf_file_build_id(const struct elf_file *f, uint8_t *id, size_t max)
{
    if (id && max)
        memcpy(id, f->build_id, f->build_id_len < max ? f->build_id_len : max);
    return f->build_id_len;
}

bool elf_file_debuglink(const struct elf_file *f, const char **name, uint32_t *crc)
{
    if (!f->debuglink)
        return false;
    if (name)
        *name = f->debuglink;
    if (crc)
        *crc = f->debuglink_crc;
    return true;
}

size_t elf_file_debugaltlink(const struct elf_file *f, const char **path, uint8_t *id, size_t max)
{
    if (!f->altlink)
        return 0;
    if (path)
        *path = f->altlink;
    if (id && max)
        memcpy(id, f->altlink_id, f->altlink_id_len < max ? f->altlink_id_len : max);
    return f->altlink_id_len;
}

const char *elf_file_interp(const struct elf_file *f) { return f->interp; }
