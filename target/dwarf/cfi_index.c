/* Finding the FDE for a pc: .eh_frame_hdr's sorted table when it is sound,
 * otherwise an index of FDE ranges built once from the section itself. */
#include "target/dwarf/cfi_internal.h"

#include <stdlib.h>

static bool hdr_entry(const struct cfi_hdr *h, const struct cfi_env *env, size_t i,
                      uint64_t *start, uint64_t *fde)
{
    struct cursor c;
    cursor_init(&c, h->data, h->size, env->big_endian);
    /* In .eh_frame_hdr, datarel means relative to the header's start. */
    struct cfi_ptr_base base = {
        .section_vaddr = h->vaddr, .text = env->text_vaddr, .data = h->vaddr,
        .addr_size = env->addr_size,
    };
    if (!cursor_seek(&c, h->table_off + i * 2 * h->field_size))
        return false;
    return cfi_read_pointer(&c, h->table_enc, &base, start) &&
           cfi_read_pointer(&c, h->table_enc, &base, fde);
}

void cfi_hdr_init(struct cfi_hdr *h, const struct cfi_env *env, const struct cfi_sources *src)
{
    h->usable = false;
    if (!src->eh_frame_hdr || src->eh_frame_hdr_size < 4 || !src->eh_frame)
        return;
    h->data = src->eh_frame_hdr;
    h->size = src->eh_frame_hdr_size;
    h->vaddr = src->eh_frame_hdr_vaddr;

    struct cursor c;
    cursor_init(&c, h->data, h->size, env->big_endian);
    uint8_t version = cursor_u8(&c);
    uint8_t ptr_enc = cursor_u8(&c);
    uint8_t count_enc = cursor_u8(&c);
    uint8_t table_enc = cursor_u8(&c);
    if (version != 1 || count_enc == DW_EH_PE_omit || table_enc == DW_EH_PE_omit)
        return;
    if ((ptr_enc | count_enc | table_enc) & DW_EH_PE_indirect)
        return;
    struct cfi_ptr_base base = {
        .section_vaddr = h->vaddr, .text = env->text_vaddr, .data = h->vaddr,
        .addr_size = env->addr_size,
    };
    uint64_t eh_frame_ptr, count;
    if (!cfi_read_pointer(&c, ptr_enc, &base, &eh_frame_ptr) ||
        !cfi_read_pointer(&c, count_enc, &base, &count))
        return;
    if (eh_frame_ptr != src->eh_frame_vaddr)
        return;   /* the caller's .eh_frame is not the one this table indexes */
    /* Binary search needs fixed-size entries; aligned would pad each one. */
    h->field_size = cfi_pointer_size(table_enc, env->addr_size);
    if (h->field_size == 0 || (table_enc & 0x70) == DW_EH_PE_aligned)
        return;
    h->table_enc = table_enc;
    h->table_off = c.pos;
    size_t left = cursor_left(&c);
    if (count > left / (2 * h->field_size))
        return;
    h->count = (size_t)count;

    uint64_t prev = 0;
    for (size_t i = 0; i < h->count; i++) {
        uint64_t start, fde;
        if (!hdr_entry(h, env, i, &start, &fde))
            return;
        if (i > 0 && start < prev)
            return;
        if (fde < src->eh_frame_vaddr || fde - src->eh_frame_vaddr >= src->eh_frame_size)
            return;
        prev = start;
    }
    h->usable = true;
}

bool cfi_hdr_find(const struct cfi_hdr *h, const struct cfi_env *env, uint64_t pc,
                  uint64_t *fde_vaddr)
{
    size_t lo = 0, hi = h->count;   /* answer: the last entry with start <= pc */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint64_t start, fde;
        if (!hdr_entry(h, env, mid, &start, &fde))
            return false;
        if (start <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return false;
    uint64_t start;
    return hdr_entry(h, env, lo - 1, &start, fde_vaddr);
}

static bool index_push(struct cfi_index *ix, const struct cfi_fde_ref *r)
{
    if (ix->count == ix->cap) {
        size_t cap = ix->cap ? ix->cap * 2 : 64;
        struct cfi_fde_ref *n = realloc(ix->refs, cap * sizeof(*n));
        if (!n)
            return false;
        ix->refs = n;
        ix->cap = cap;
    }
    ix->refs[ix->count++] = *r;
    return true;
}

int cfi_index_add(struct cfi_index *ix, const struct cfi_env *env, const struct cfi_section *s,
                  uint8_t section)
{
    size_t off = 0;
    while (off < s->size) {
        size_t next = 0, cie_off = 0;
        enum cfi_entry_kind kind = cfi_entry_at(env, s, off, &next, &cie_off);
        if (kind == CFI_ENTRY_END || kind == CFI_ENTRY_BAD)
            break;   /* a broken length leaves no way to find the next entry */
        if (kind == CFI_ENTRY_FDE) {
            struct cfi_cie cie;
            struct cfi_fde fde;
            if (cfi_parse_fde(env, s, off, &cie, &fde) == 0 && fde.pc_end > fde.pc_begin) {
                struct cfi_fde_ref r = {
                    .start = fde.pc_begin, .end = fde.pc_end, .off = off, .section = section,
                };
                if (!index_push(ix, &r))
                    return -1;
            }
        }
        if (next <= off)
            break;
        off = next;
    }
    return 0;
}

static int ref_cmp(const void *a, const void *b)
{
    const struct cfi_fde_ref *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

void cfi_index_sort(struct cfi_index *ix)
{
    if (ix->count > 1)
        qsort(ix->refs, ix->count, sizeof(*ix->refs), ref_cmp);
}

const struct cfi_fde_ref *cfi_index_find(const struct cfi_index *ix, uint64_t pc)
{
    size_t lo = 0, hi = ix->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ix->refs[mid].start <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const struct cfi_fde_ref *r = &ix->refs[lo - 1];
    return pc < r->end ? r : NULL;
}

void cfi_index_free(struct cfi_index *ix)
{
    free(ix->refs);
    ix->refs = NULL;
    ix->count = ix->cap = 0;
}
