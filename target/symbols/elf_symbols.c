#include "target/symbols/elf_symbols.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shared/xalloc.h"
#include "target/elf/elf_section_map.h"
#include "shared/files/cursor.h"

/* Caps on what a (possibly hostile) file may make us allocate.  glibc's
 * debug .symtab has ~10^4 symbols. */
#define MAX_SYMBOLS (1u << 24)
#define MAX_TABLE_BYTES (256u * 1024 * 1024)
#define MAX_DYNAMIC_BYTES (1u * 1024 * 1024)
#define MAX_VERSIONS 0x7fffu
#define MAX_VERDEF_ENTRIES 4096u
#define MAX_HASH_CHAIN (1u << 24)
/* Resident bytes of a mapped table and of its strings: both are read
 * mostly forward. */
#define MAP_SYMS_BUDGET (16u * 1024)
#define MAP_STRS_BUDGET (32u * 1024)
/* Step of a name search through mapped strings. */
#define NAME_STEP 256

static size_t sym_entry_size(unsigned elf_class)
{
    return elf_class == 64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
}

void elf_symbols_free(struct elf_symbols *s)
{
    section_map_close(s->syms_map);
    section_map_close(s->strs_map);
    if (s->syms_map)
        s->syms = NULL; /* the map's, not ours */
    if (s->strs_map)
        s->strs = NULL;
    free(s->syms);
    free(s->strs);
    free(s->versym);
    free(s->version_names);
    memset(s, 0, sizeof(*s));
}

/* A name in mapped strings: resident piece by piece up to its NUL. */
static const char *mapped_name(const struct elf_symbols *s, uint64_t off)
{
    for (uint64_t pos = off; pos < s->strsize; pos += NAME_STEP) {
        size_t n = s->strsize - pos < NAME_STEP ? (size_t)(s->strsize - pos) : NAME_STEP;
        if (!section_map_ensure(s->strs_map, pos, n))
            return "";
        const char *nul = memchr(s->strs + pos, 0, n);
        if (nul)
            return section_map_ensure(s->strs_map, off, (uint64_t)(nul - s->strs) - off + 1) ? s->strs + off : "";
    }
    return "";
}

bool elf_symbols_get(const struct elf_symbols *s, size_t i, struct elf_symbol *sym)
{
    uint32_t name;
    if (!elf_symbols_get_unnamed(s, i, sym, &name))
        return false;
    sym->name = elf_symbols_name(s, name);
    return true;
}

const char *elf_symbols_name(const struct elf_symbols *s, uint32_t name)
{
    if (s->strs_map)
        return mapped_name(s, name);
    if (name < s->strsize && memchr(s->strs + name, 0, s->strsize - name))
        return s->strs + name;
    return "";
}

bool elf_symbols_get_unnamed(const struct elf_symbols *s, size_t i, struct elf_symbol *sym,
                             uint32_t *name_off)
{
    if (i >= s->count)
        return false;
    if (s->syms_map && !section_map_ensure(s->syms_map, (uint64_t)i * s->entsize, s->entsize))
        return false;
    struct cursor c;
    cursor_init(&c, s->syms + i * s->entsize, s->entsize, s->big_endian);
    uint32_t name;
    uint8_t info;
    if (s->elf_class == 64) {
        name = cursor_u32(&c);
        info = cursor_u8(&c);
        cursor_u8(&c); /* st_other */
        sym->shndx = cursor_u16(&c);
        sym->value = cursor_u64(&c);
        sym->size = cursor_u64(&c);
    } else {
        name = cursor_u32(&c);
        sym->value = cursor_u32(&c);
        sym->size = cursor_u32(&c);
        info = cursor_u8(&c);
        cursor_u8(&c);
        sym->shndx = cursor_u16(&c);
    }
    if (!cursor_ok(&c))
        return false;
    sym->bind = ELF64_ST_BIND(info);
    sym->type = ELF64_ST_TYPE(info);
    sym->name = NULL;
    *name_off = name;
    return true;
}

void elf_symbols_version(const struct elf_symbols *s, size_t i, unsigned *index, bool *hidden,
                         const char **name)
{
    *index = 1;
    *hidden = false;
    *name = NULL;
    if (!s->versym || i >= s->count)
        return;
    struct cursor c;
    cursor_init(&c, s->versym + 2 * i, 2, s->big_endian);
    uint16_t v = cursor_u16(&c);
    *index = v & 0x7fff;
    *hidden = (v & 0x8000) != 0;
    if (*index < s->version_count)
        *name = s->version_names[*index];
}

/* Where verdef records are read from: a section (file offsets) or the
 * DT_VERDEF address (virtual addresses); records chain by relative offsets. */
struct verdef_reader {
    struct elf_file *f;
    bool by_vaddr;
    uint64_t base;
    uint64_t limit; /* bytes readable from base (sections only) */
};

static int verdef_read(const struct verdef_reader *r, uint64_t off, void *buf, size_t len)
{
    if (r->by_vaddr)
        return elf_file_read_vaddr(r->f, r->base + off, buf, len);
    if (off > r->limit || len > r->limit - off)
        return -ERANGE;
    return elf_file_read(r->f, r->base + off, buf, len);
}

/* Fills version_names from the verdef chain (vd_ndx -> first aux name). */
static void load_verdefs(struct elf_symbols *s, const struct verdef_reader *r, uint64_t entries)
{
    if (entries > MAX_VERDEF_ENTRIES)
        entries = MAX_VERDEF_ENTRIES;
    const char **names = NULL;
    size_t names_count = 0;
    uint64_t off = 0;
    for (uint64_t n = 0; n < entries; n++) {
        uint8_t hdr[20], aux[8];
        if (verdef_read(r, off, hdr, sizeof(hdr)) < 0)
            break;
        struct cursor c;
        cursor_init(&c, hdr, sizeof(hdr), s->big_endian);
        uint16_t version = cursor_u16(&c);
        cursor_u16(&c); /* vd_flags */
        uint16_t ndx = cursor_u16(&c);
        cursor_u16(&c); /* vd_cnt */
        cursor_u32(&c); /* vd_hash */
        uint32_t aux_off = cursor_u32(&c);
        uint32_t next = cursor_u32(&c);
        if (version != 1 || aux_off < sizeof(hdr) || off > UINT64_MAX - aux_off)
            break;
        if (verdef_read(r, off + aux_off, aux, sizeof(aux)) < 0)
            break;
        cursor_init(&c, aux, sizeof(aux), s->big_endian);
        uint32_t name = cursor_u32(&c);
        ndx &= 0x7fff;
        if (name < s->strsize && memchr(s->strs + name, 0, s->strsize - name)) {
            if (ndx >= names_count) {
                size_t grow = (size_t)ndx + 1;
                names = xreallocarray(names, grow, sizeof(*names));
                memset(names + names_count, 0, (grow - names_count) * sizeof(*names));
                names_count = grow;
            }
            names[ndx] = s->strs + name;
        }
        if (next == 0)
            break;
        off += next;
    }
    s->version_names = names;
    s->version_count = names_count;
}

static int load_blob_checked(struct elf_file *f, const struct elf_section *sec, uint8_t **data, size_t *size)
{
    if (sec->size > MAX_TABLE_BYTES)
        return -EFBIG;
    struct elf_blob b;
    int rc = elf_file_load_section(f, sec, &b);
    if (rc < 0)
        return rc;
    *data = b.data;
    *size = b.size;
    return 0;
}

static void load_section_versions(struct elf_file *f, size_t symtab_index, uint32_t strtab_link,
                                  struct elf_symbols *s)
{
    for (size_t i = 0; i < elf_file_section_count(f); i++) {
        const struct elf_section *sec = elf_file_section(f, i);
        if (sec->type == SHT_GNU_versym && sec->link == symtab_index && !s->versym) {
            uint8_t *data;
            size_t size;
            if (load_blob_checked(f, sec, &data, &size) == 0) {
                if (size / 2 >= s->count)
                    s->versym = data;
                else
                    free(data);
            }
        } else if (sec->type == SHT_GNU_verdef && sec->link == strtab_link && !s->version_names &&
                   !(sec->flags & SHF_COMPRESSED)) {
            struct verdef_reader r = {.f = f, .base = sec->offset, .limit = sec->size};
            load_verdefs(s, &r, sec->info);
        }
    }
}

static int load_from_section(struct elf_file *f, uint32_t type, struct elf_symbols *s)
{
    const struct elf_section *sec = elf_file_find_section_type(f, type);
    if (!sec)
        return -ENOENT;
    size_t want = sym_entry_size(s->elf_class);
    if (sec->entsize != 0 && sec->entsize != want)
        return -EINVAL;
    const struct elf_section *str = elf_file_section(f, sec->link);
    if (!str || str->type != SHT_STRTAB)
        return -EINVAL;
    size_t size;
    int rc = load_blob_checked(f, sec, &s->syms, &size);
    if (rc < 0)
        return rc;
    s->entsize = want;
    s->count = size / want;
    if (s->count > MAX_SYMBOLS)
        return -EFBIG;
    uint8_t *strs;
    rc = load_blob_checked(f, str, &strs, &s->strsize);
    if (rc < 0)
        return rc;
    s->strs = (char *)strs;
    if (type == SHT_DYNSYM)
        load_section_versions(f, elf_file_section_index(f, sec), sec->link, s);
    return 0;
}

struct dynamic_info {
    uint64_t symtab, strtab, strsz, syment, hash, gnu_hash, versym, verdef, verdefnum;
    bool has_symtab, has_strtab, has_strsz, has_hash, has_gnu_hash, has_versym, has_verdef;
};

static int read_dynamic(struct elf_file *f, struct dynamic_info *d)
{
    const struct elf_segment *dyn = NULL;
    for (size_t i = 0; i < elf_file_segment_count(f); i++)
        if (elf_file_segment(f, i)->type == PT_DYNAMIC)
            dyn = elf_file_segment(f, i);
    if (!dyn)
        return -ENOENT;
    if (dyn->filesz > MAX_DYNAMIC_BYTES)
        return -EFBIG;
    size_t size = (size_t)dyn->filesz;
    uint8_t *buf = xmalloc(size ? size : 1);
    int rc = elf_file_read(f, dyn->offset, buf, size);
    if (rc < 0) {
        free(buf);
        return rc;
    }
    unsigned w = elf_file_class(f) == 64 ? 8 : 4;
    struct cursor c;
    cursor_init(&c, buf, size, elf_file_big_endian(f));
    memset(d, 0, sizeof(*d));
    while (cursor_left(&c) >= 2 * w) {
        uint64_t tag = cursor_uint(&c, w);
        uint64_t val = cursor_uint(&c, w);
        if (tag == DT_NULL)
            break;
        switch (tag) {
        case DT_SYMTAB: d->symtab = val; d->has_symtab = true; break;
        case DT_STRTAB: d->strtab = val; d->has_strtab = true; break;
        case DT_STRSZ: d->strsz = val; d->has_strsz = true; break;
        case DT_SYMENT: d->syment = val; break;
        case DT_HASH: d->hash = val; d->has_hash = true; break;
        case DT_GNU_HASH: d->gnu_hash = val; d->has_gnu_hash = true; break;
        case DT_VERSYM: d->versym = val; d->has_versym = true; break;
        case DT_VERDEF: d->verdef = val; d->has_verdef = true; break;
        case DT_VERDEFNUM: d->verdefnum = val; break;
        default: break;
        }
    }
    free(buf);
    return 0;
}

static int read_u32_vaddr(struct elf_file *f, uint64_t vaddr, uint32_t *out)
{
    uint8_t b[4];
    int rc = elf_file_read_vaddr(f, vaddr, b, 4);
    if (rc < 0)
        return rc;
    struct cursor c;
    cursor_init(&c, b, 4, elf_file_big_endian(f));
    *out = cursor_u32(&c);
    return 0;
}

/* DT_GNU_HASH does not store the symbol count: it is one past the highest
 * index reachable from a bucket, found by walking that bucket's chain to the
 * entry with the low bit set. */
static int count_from_gnu_hash(struct elf_file *f, uint64_t addr, size_t *count)
{
    uint8_t hdr[16];
    int rc = elf_file_read_vaddr(f, addr, hdr, sizeof(hdr));
    if (rc < 0)
        return rc;
    struct cursor c;
    cursor_init(&c, hdr, sizeof(hdr), elf_file_big_endian(f));
    uint32_t nbuckets = cursor_u32(&c);
    uint32_t symoffset = cursor_u32(&c);
    uint32_t bloom_size = cursor_u32(&c);
    if (nbuckets == 0 || nbuckets > MAX_SYMBOLS || bloom_size > MAX_SYMBOLS ||
        (uint64_t)nbuckets * 4 > elf_file_size(f))
        return -EINVAL;
    uint64_t buckets_addr = addr + 16 + (uint64_t)bloom_size * (elf_file_class(f) / 8);
    size_t bytes = (size_t)nbuckets * 4;
    uint8_t *buckets = xmalloc(bytes);
    rc = elf_file_read_vaddr(f, buckets_addr, buckets, bytes);
    if (rc < 0) {
        free(buckets);
        return rc;
    }
    cursor_init(&c, buckets, bytes, elf_file_big_endian(f));
    uint32_t max_index = 0;
    for (uint32_t i = 0; i < nbuckets; i++) {
        uint32_t b = cursor_u32(&c);
        if (b > max_index)
            max_index = b;
    }
    free(buckets);
    if (max_index < symoffset) {
        *count = symoffset;
        return 0;
    }
    /* The chain lies in the file, so it cannot be longer than the file;
     * it is read in blocks, one entry at a time only near a segment end. */
    uint64_t chain_addr = buckets_addr + bytes;
    uint64_t max_steps = elf_file_size(f) / 4;
    uint8_t block[1024];
    size_t block_entries = 0, block_pos = 0;
    for (uint64_t step = 0; step <= max_steps && step <= MAX_HASH_CHAIN; step++) {
        uint64_t i = (uint64_t)max_index + step;
        if (i >= MAX_SYMBOLS)
            return -EINVAL;
        if (block_pos == block_entries) {
            uint64_t at = chain_addr + (i - symoffset) * 4;
            block_entries = sizeof(block) / 4;
            if (elf_file_read_vaddr(f, at, block, sizeof(block)) < 0) {
                block_entries = 1;
                rc = elf_file_read_vaddr(f, at, block, 4);
                if (rc < 0)
                    return rc;
            }
            block_pos = 0;
        }
        cursor_init(&c, block + 4 * block_pos, 4, elf_file_big_endian(f));
        block_pos++;
        if (cursor_u32(&c) & 1) {
            *count = (size_t)i + 1;
            return 0;
        }
    }
    return -EINVAL;
}

static int dynamic_symbol_count(struct elf_file *f, const struct dynamic_info *d, size_t *count)
{
    if (d->has_gnu_hash && count_from_gnu_hash(f, d->gnu_hash, count) == 0)
        return 0;
    if (d->has_hash) {
        uint32_t nchain;
        if (read_u32_vaddr(f, d->hash + 4, &nchain) == 0) {
            *count = nchain;
            return 0;
        }
    }
    /* Last resort: linkers put .dynstr right after .dynsym. */
    if (d->strtab > d->symtab) {
        *count = (size_t)((d->strtab - d->symtab) / sym_entry_size(elf_file_class(f)));
        return 0;
    }
    return -ENOENT;
}

static int load_from_dynamic(struct elf_file *f, struct elf_symbols *s)
{
    struct dynamic_info d;
    int rc = read_dynamic(f, &d);
    if (rc < 0)
        return rc;
    if (!d.has_symtab || !d.has_strtab || !d.has_strsz)
        return -ENOENT;
    size_t want = sym_entry_size(s->elf_class);
    if (d.syment != 0 && d.syment != want)
        return -EINVAL;
    size_t count;
    rc = dynamic_symbol_count(f, &d, &count);
    if (rc < 0)
        return rc;
    /* Tables read from the file cannot be bigger than the file: checked
     * before allocating, so a hostile count costs nothing. */
    uint64_t file_size = elf_file_size(f);
    if (count > MAX_SYMBOLS || count * want > MAX_TABLE_BYTES || d.strsz > MAX_TABLE_BYTES ||
        count * want > file_size || d.strsz > file_size)
        return -EFBIG;
    s->entsize = want;
    s->syms = xmalloc(count * want + 1);
    rc = elf_file_read_vaddr(f, d.symtab, s->syms, count * want);
    if (rc < 0)
        return rc;
    s->count = count;
    s->strsize = (size_t)d.strsz;
    s->strs = xmalloc(s->strsize + 1);
    rc = elf_file_read_vaddr(f, d.strtab, s->strs, s->strsize);
    if (rc < 0)
        return rc;
    if (d.has_versym && count * 2 <= file_size) {
        uint8_t *v = xmalloc(count * 2 + 1);
        if (elf_file_read_vaddr(f, d.versym, v, count * 2) == 0)
            s->versym = v;
        else
            free(v);
    }
    if (d.has_verdef) {
        struct verdef_reader r = {.f = f, .by_vaddr = true, .base = d.verdef};
        load_verdefs(s, &r, d.verdefnum);
    }
    return 0;
}

int elf_symbols_map(struct elf_file *f, struct elf_symbols *out)
{
    memset(out, 0, sizeof(*out));
    out->big_endian = elf_file_big_endian(f);
    out->elf_class = elf_file_class(f);
    const struct elf_section *sec = elf_file_find_section_type(f, SHT_SYMTAB);
    if (!sec)
        return -ENOENT;
    size_t want = sym_entry_size(out->elf_class);
    const struct elf_section *str = elf_file_section(f, sec->link);
    int rc = -EINVAL;
    if ((sec->entsize != 0 && sec->entsize != want) || !str || str->type != SHT_STRTAB)
        goto fail;
    out->syms_map = section_map_open(f, sec, MAP_SYMS_BUDGET, &rc);
    if (!out->syms_map)
        goto fail;
    out->strs_map = section_map_open(f, str, MAP_STRS_BUDGET, &rc);
    if (!out->strs_map)
        goto fail;
    out->entsize = want;
    out->count = section_map_size(out->syms_map) / want;
    rc = -EFBIG;
    if (out->count > MAX_SYMBOLS)
        goto fail;
    out->syms = (uint8_t *)section_map_data(out->syms_map);
    out->strs = (char *)section_map_data(out->strs_map);
    out->strsize = section_map_size(out->strs_map);
    return 0;
fail:
    elf_symbols_free(out);
    return rc;
}

int elf_symbols_load(struct elf_file *f, enum elf_symbols_kind kind, struct elf_symbols *out)
{
    memset(out, 0, sizeof(*out));
    out->big_endian = elf_file_big_endian(f);
    out->elf_class = elf_file_class(f);
    int rc;
    switch (kind) {
    case ELF_SYMBOLS_SYMTAB: rc = load_from_section(f, SHT_SYMTAB, out); break;
    case ELF_SYMBOLS_DYNSYM: rc = load_from_section(f, SHT_DYNSYM, out); break;
    case ELF_SYMBOLS_DYNAMIC: rc = load_from_dynamic(f, out); break;
    default: rc = -EINVAL; break;
    }
    if (rc < 0)
        elf_symbols_free(out);
    return rc;
}
