#include "target/dwarf/line_index.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/xalloc.h"
#include "target/dwarf/info_constants.h"
#include "target/dwarf/info_cu.h"
#include "target/dwarf/line_header.h"
#include "target/dwarf/line_program.h"

/* One line program and the CU facts needed to name its files. */
struct line_unit {
    uint64_t line_offset;
    uint32_t comp_dir;        /* offset in the string pool; UINT32_MAX if none */
    uint8_t address_size;
};

/* One sequence: [lo, lo + size) and where its opcodes start.
 *
 * An address at or past a sequence's end has no line, whatever rows come
 * before it: gdb, binutils addr2line and llvm-addr2line agree on that
 * (elfutils lets a sequence whose last row sits at its end address answer
 * up to its unit's next sequence; memtrace does not). */
/* Row addresses never decrease: a search may stop at the first row past
 * the address, and checkpoints can be binary-searched. */
#define SEQ_MONOTONIC 0x40000000u
#define SEQ_SIZE_MASK 0x3fffffffu

/* Long sequences (a big function, or a whole CU's .text in one sequence)
 * get a checkpoint every CHECKPOINT_ROWS rows, so a lookup decodes at most
 * that many rows: about 0.15 bytes of index per row of line table. */
#define CHECKPOINT_ROWS 256

struct line_checkpoint {
    uint64_t address;         /* of the row decoding resumes after */
    uint32_t seq_offset;      /* the sequence it belongs to */
    uint32_t offset;          /* .debug_line offset right after that row */
    uint32_t file, line, column, discriminator;
    uint8_t op_index;
    bool is_stmt;
};

struct line_seq {
    uint64_t lo;
    uint32_t size_flags;      /* size | SEQ_MONOTONIC */
    uint32_t offset;          /* in .debug_line (refused beyond 4 GiB) */
};

#define HEADER_CACHE 4

struct header_slot {
    bool valid;
    uint32_t unit;
    struct line_header h;
};

struct line_index {
    struct dwarf_sections secs;   /* only line, line_str, str used after build */
    struct line_unit *units;
    size_t unit_count, unit_cap;
    struct line_seq *seqs;
    size_t seq_count, seq_cap;
    struct line_checkpoint *cps;  /* sorted by address */
    size_t cp_count, cp_cap;
    char *pool;
    size_t pool_used, pool_cap;
    struct header_slot cache[HEADER_CACHE];
    unsigned cache_next;
    bool uses_debug_str;          /* some v5 header names files via .debug_str */
};

#define NO_STRING UINT32_MAX

static uint32_t pool_add(struct line_index *idx, const char *s)
{
    if (!s)
        return NO_STRING;
    /* Units of one build share a comp_dir, usually consecutively: compare
     * with the last string added. */
    if (idx->pool_used > 0) {
        size_t last = idx->pool_used - 1;
        while (last > 0 && idx->pool[last - 1] != 0)
            last--;
        if (strcmp(idx->pool + last, s) == 0)
            return (uint32_t)last;
    }
    size_t n = strlen(s) + 1;
    if (idx->pool_used + n > UINT32_MAX - 1)
        return NO_STRING;
    if (idx->pool_used + n > idx->pool_cap) {
        idx->pool_cap = (idx->pool_used + n) * 2;
        idx->pool = xrealloc(idx->pool, idx->pool_cap);
    }
    memcpy(idx->pool + idx->pool_used, s, n);
    idx->pool_used += n;
    return (uint32_t)(idx->pool_used - n);
}

static void add_unit(struct line_index *idx, uint64_t line_offset, const char *comp_dir, unsigned address_size)
{
    if (idx->unit_count == idx->unit_cap) {
        idx->unit_cap = idx->unit_cap ? idx->unit_cap * 2 : 64;
        idx->units = xreallocarray(idx->units, idx->unit_cap, sizeof(*idx->units));
    }
    idx->units[idx->unit_count++] = (struct line_unit){
        .line_offset = line_offset,
        .comp_dir = pool_add(idx, comp_dir),
        .address_size = (uint8_t)address_size,
    };
}

static bool add_seq(struct line_index *idx, uint64_t lo, uint64_t hi, uint64_t offset, bool monotonic)
{
    if (hi <= lo || hi - lo > SEQ_SIZE_MASK || offset > UINT32_MAX)
        return false;
    /* Sequences of code the linker discarded are relocated to 0 (GNU ld)
     * or to -1/-2 (lld tombstones); they would shadow real code. */
    if (lo == 0 || lo >= UINT64_MAX - 1 || lo == UINT32_MAX || lo == UINT32_MAX - 1)
        return false;
    if (idx->seq_count == idx->seq_cap) {
        idx->seq_cap = idx->seq_cap ? idx->seq_cap * 2 : 256;
        idx->seqs = xreallocarray(idx->seqs, idx->seq_cap, sizeof(*idx->seqs));
    }
    uint32_t flags = monotonic ? SEQ_MONOTONIC : 0;
    idx->seqs[idx->seq_count++] = (struct line_seq){ .lo = lo, .size_flags = (uint32_t)(hi - lo) | flags,
                                                      .offset = (uint32_t)offset };
    return true;
}

/* Remembers where decoding stands after row (see CHECKPOINT_ROWS). */
static void add_checkpoint(struct line_index *idx, const struct line_program *p, const struct line_row *row)
{
    uint64_t offset = line_program_offset(p);
    if (offset > UINT32_MAX || row->sequence_offset > UINT32_MAX || row->file > UINT32_MAX ||
        row->column > UINT32_MAX || p->op_index > UINT8_MAX)
        return;
    if (idx->cp_count == idx->cp_cap) {
        idx->cp_cap = idx->cp_cap ? idx->cp_cap * 2 : 64;
        idx->cps = xreallocarray(idx->cps, idx->cp_cap, sizeof(*idx->cps));
    }
    idx->cps[idx->cp_count++] = (struct line_checkpoint){
        .address = row->address,
        .seq_offset = (uint32_t)row->sequence_offset,
        .offset = (uint32_t)offset,
        .file = (uint32_t)row->file,
        .line = row->line,
        .column = (uint32_t)row->column,
        .discriminator = row->discriminator,
        .op_index = (uint8_t)p->op_index,
        .is_stmt = row->is_stmt,
    };
}

static int cmp_checkpoint(const void *a, const void *b)
{
    const struct line_checkpoint *x = a, *y = b;
    if (x->address != y->address)
        return x->address < y->address ? -1 : 1;
    return (x->seq_offset > y->seq_offset) - (x->seq_offset < y->seq_offset);
}

static int cmp_unit(const void *a, const void *b)
{
    const struct line_unit *x = a, *y = b;
    if (x->line_offset != y->line_offset)
        return x->line_offset < y->line_offset ? -1 : 1;
    /* Among units sharing a table, the one that knows its comp_dir first. */
    return (x->comp_dir == NO_STRING) - (y->comp_dir == NO_STRING);
}

static int cmp_seq(const void *a, const void *b)
{
    const struct line_seq *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    uint32_t xs = x->size_flags & SEQ_SIZE_MASK, ys = y->size_flags & SEQ_SIZE_MASK;
    return (xs > ys) - (xs < ys);
}

void line_index_add_unit(struct line_index *idx, const struct dwarf_sections *secs, uint64_t offset)
{
    struct info_cu cu;
    if (info_cu_read(secs, offset, &cu) && cu.has_stmt_list && cu.unit_type != DW_UT_type &&
        cu.unit_type != DW_UT_split_type)
        add_unit(idx, cu.stmt_list, cu.comp_dir, cu.unit.address_size);
}

/* Without .debug_info (or none of its units readable) the programs are
 * still usable: a DWARF 5 program names its compilation directory as
 * directory 0; older ones go without. */
static void collect_units_from_line(struct line_index *idx, const struct dwarf_sections *secs)
{
    uint64_t off = 0;
    while (off < secs->line.size) {
        struct line_header h;
        bool ok = line_header_parse(secs, off, 8, &h);
        if (ok)
            add_unit(idx, off, h.unit.version >= 5 ? line_header_dir(secs, &h, 0, NULL) : NULL,
                     h.unit.address_size);
        if (h.end <= off)
            break;
        off = h.end;
    }
}

static void dedupe_units(struct line_index *idx)
{
    if (idx->unit_count < 2)
        return;
    qsort(idx->units, idx->unit_count, sizeof(*idx->units), cmp_unit);
    size_t out = 0;
    for (size_t i = 0; i < idx->unit_count; i++) {
        if (out > 0 && idx->units[out - 1].line_offset == idx->units[i].line_offset)
            continue;
        idx->units[out++] = idx->units[i];
    }
    idx->unit_count = out;
}

static void index_program(struct line_index *idx, const struct line_header *h)
{
    struct line_program p;
    struct line_row row;
    line_program_start(&p, &idx->secs, h, h->program_offset);
    bool open = false, monotonic = true;
    uint64_t lo = 0, seq_offset = 0, last = 0, rows = 0;
    size_t seq_first_cp = idx->cp_count;
    while (line_program_next(&p, &row)) {
        if (!open) {
            open = true;
            monotonic = true;
            rows = 0;
            lo = row.address;
            seq_offset = row.sequence_offset;
            seq_first_cp = idx->cp_count;
        } else {
            if (row.address < last)
                monotonic = false;
            if (row.address < lo)
                lo = row.address;
        }
        if (row.end_sequence) {
            bool kept = add_seq(idx, lo, row.address, seq_offset, monotonic);
            /* Checkpoints only serve monotonic sequences we keep. */
            if (!kept || !monotonic)
                idx->cp_count = seq_first_cp;
            open = false;
        } else if (++rows % CHECKPOINT_ROWS == 0 && monotonic) {
            add_checkpoint(idx, &p, &row);
        }
        last = row.address;
    }
    if (open)
        idx->cp_count = seq_first_cp; /* a sequence the data cut short */
}

static bool format_uses_debug_str(const struct line_entry_format *f)
{
    for (unsigned i = 0; i < f->count; i++)
        if (f->form[i] == DW_FORM_strp || f->form[i] == DW_FORM_strx || f->form[i] == DW_FORM_GNU_str_index ||
            (f->form[i] >= DW_FORM_strx1 && f->form[i] <= DW_FORM_strx4))
            return true;
    return false;
}

/* The arrays grew by doubling; the index lives as long as its object. */
static void shrink_to_fit(struct line_index *idx)
{
    if (idx->seq_count) {
        idx->seqs = xreallocarray(idx->seqs, idx->seq_count, sizeof(*idx->seqs));
        idx->seq_cap = idx->seq_count;
    }
    if (idx->cp_count) {
        idx->cps = xreallocarray(idx->cps, idx->cp_count, sizeof(*idx->cps));
        idx->cp_cap = idx->cp_count;
    }
    if (idx->unit_count) {
        idx->units = xreallocarray(idx->units, idx->unit_count, sizeof(*idx->units));
        idx->unit_cap = idx->unit_count;
    }
    if (idx->pool_used) {
        idx->pool = xrealloc(idx->pool, idx->pool_used);
        idx->pool_cap = idx->pool_used;
    }
}

struct line_index *line_index_new(const struct dwarf_sections *secs)
{
    struct line_index *idx = xcalloc(1, sizeof(*idx));
    idx->secs = *secs;
    /* Units come through line_index_add_unit with their own sections. */
    memset(&idx->secs.info, 0, sizeof(idx->secs.info));
    memset(&idx->secs.abbrev, 0, sizeof(idx->secs.abbrev));
    memset(&idx->secs.str_offsets, 0, sizeof(idx->secs.str_offsets));
    memset(&idx->secs.addr, 0, sizeof(idx->secs.addr));
    memset(&idx->secs.ranges, 0, sizeof(idx->secs.ranges));
    memset(&idx->secs.rnglists, 0, sizeof(idx->secs.rnglists));
    return idx;
}

void line_index_finish(struct line_index *idx)
{
    if (idx->unit_count == 0)
        collect_units_from_line(idx, &idx->secs);
    dedupe_units(idx);
    for (size_t i = 0; i < idx->unit_count; i++) {
        struct line_header h;
        if (line_header_parse(&idx->secs, idx->units[i].line_offset, idx->units[i].address_size, &h)) {
            index_program(idx, &h);
            if (format_uses_debug_str(&h.dir_format) || format_uses_debug_str(&h.file_format))
                idx->uses_debug_str = true;
        }
    }
    if (idx->seq_count > 1)
        qsort(idx->seqs, idx->seq_count, sizeof(*idx->seqs), cmp_seq);
    if (idx->cp_count > 1)
        qsort(idx->cps, idx->cp_count, sizeof(*idx->cps), cmp_checkpoint);
    shrink_to_fit(idx);
}

struct line_index *line_index_build(const struct dwarf_sections *secs)
{
    struct line_index *idx = line_index_new(secs);
    uint64_t off = 0;
    while (off < secs->info.size) {
        struct info_cu cu;
        info_cu_read(secs, off, &cu);
        line_index_add_unit(idx, secs, off);
        if (cu.next_offset <= off)
            break;
        off = cu.next_offset;
    }
    line_index_finish(idx);
    return idx;
}

bool line_section_self_contained(const struct dwarf_sections *secs, bool *needs_str)
{
    *needs_str = false;
    uint64_t off = 0;
    bool any = false;
    while (off < secs->line.size) {
        struct line_header h;
        if (!line_header_parse(secs, off, 8, &h) || h.unit.version < 5)
            return false;
        any = true;
        if (format_uses_debug_str(&h.dir_format) || format_uses_debug_str(&h.file_format))
            *needs_str = true;
        off = h.end;
    }
    return any;
}

bool line_index_release_debug_str(struct line_index *idx)
{
    if (idx->uses_debug_str)
        return false;
    memset(&idx->secs.str, 0, sizeof(idx->secs.str));
    return true;
}

void line_index_free(struct line_index *idx)
{
    if (!idx)
        return;
    free(idx->units);
    free(idx->seqs);
    free(idx->cps);
    free(idx->pool);
    free(idx);
}

size_t line_index_sequence_count(const struct line_index *idx) { return idx->seq_count; }
size_t line_index_unit_count(const struct line_index *idx) { return idx->unit_count; }

size_t line_index_memory(const struct line_index *idx)
{
    return sizeof(*idx) + idx->unit_cap * sizeof(*idx->units) + idx->seq_cap * sizeof(*idx->seqs) +
           idx->cp_cap * sizeof(*idx->cps) + idx->pool_cap;
}

/* The unit whose program contains .debug_line offset off. */
static bool unit_of_offset(const struct line_index *idx, uint64_t off, uint32_t *unit)
{
    size_t l = 0, u = idx->unit_count;
    while (l < u) {
        size_t m = l + (u - l) / 2;
        if (idx->units[m].line_offset <= off)
            l = m + 1;
        else
            u = m;
    }
    if (l == 0)
        return false;
    *unit = (uint32_t)(l - 1);
    return true;
}

static const struct line_header *cached_header(struct line_index *idx, uint32_t unit)
{
    for (unsigned i = 0; i < HEADER_CACHE; i++)
        if (idx->cache[i].valid && idx->cache[i].unit == unit) {
            /* A mapped .debug_line may have given the unit back since. */
            const struct line_header *h = &idx->cache[i].h;
            return dwarf_span_ensure(&idx->secs.line, h->offset, h->end - h->offset) ? h : NULL;
        }
    struct header_slot *slot = &idx->cache[idx->cache_next];
    idx->cache_next = (idx->cache_next + 1) % HEADER_CACHE;
    slot->valid = line_header_parse(&idx->secs, idx->units[unit].line_offset,
                                    idx->units[unit].address_size, &slot->h);
    slot->unit = unit;
    return slot->valid ? &slot->h : NULL;
}

static const char *unit_comp_dir(const struct line_index *idx, uint32_t unit)
{
    uint32_t s = idx->units[unit].comp_dir;
    return s == NO_STRING ? NULL : idx->pool + s;
}

static void name_file(struct line_index *idx, const struct line_header *h, uint32_t unit,
                      uint64_t file, struct line_location *out)
{
    const char *comp_dir = unit_comp_dir(idx, unit);
    out->file[0] = 0;
    if (line_header_file_path(&idx->secs, h, file, comp_dir, out->file, sizeof(out->file)))
        return;
    /* DWARF 2-4 files past the table come from DW_LNE_define_file. */
    uint64_t entry;
    if (h->unit.version < 5 && file > h->file_count &&
        line_program_find_defined_file(&idx->secs, h, file - h->file_count, &entry)) {
        struct cursor c;
        cursor_init(&c, idx->secs.line.data, idx->secs.line.size, idx->secs.big_endian);
        cursor_seek(&c, (size_t)entry);
        line_header_defined_file_path(&idx->secs, h, &c, comp_dir, out->file, sizeof(out->file));
    }
}

/* The last checkpoint of sequence s at or below address, or NULL. */
static const struct line_checkpoint *find_checkpoint(const struct line_index *idx, const struct line_seq *s,
                                                     uint64_t address)
{
    size_t l = 0, u = idx->cp_count;
    while (l < u) {
        size_t m = l + (u - l) / 2;
        if (idx->cps[m].address <= address)
            l = m + 1;
        else
            u = m;
    }
    /* Equal addresses of other (overlapping) sequences may sit between. */
    for (size_t i = l, steps = 0; i > 0 && steps < 8; i--, steps++) {
        const struct line_checkpoint *cp = &idx->cps[i - 1];
        if (cp->address < s->lo)
            return NULL;
        if (cp->seq_offset == s->offset)
            return cp;
    }
    return NULL;
}

/* Searches one sequence for the row covering address. */
static bool lookup_in_seq(struct line_index *idx, const struct line_seq *s, uint64_t address,
                          struct line_location *out)
{
    uint32_t unit;
    if (!unit_of_offset(idx, s->offset, &unit))
        return false;
    const struct line_header *h = cached_header(idx, unit);
    if (!h)
        return false;
    struct line_program p;
    struct line_row row, best = { 0 };
    bool found = false;
    bool monotonic = s->size_flags & SEQ_MONOTONIC;
    const struct line_checkpoint *cp = monotonic ? find_checkpoint(idx, s, address) : NULL;
    if (cp) {
        best = (struct line_row){
            .address = cp->address, .file = cp->file, .line = cp->line, .column = cp->column,
            .discriminator = cp->discriminator, .is_stmt = cp->is_stmt, .sequence_offset = s->offset,
        };
        found = true;
        line_program_resume(&p, &idx->secs, h, &best, cp->op_index, cp->offset);
    } else {
        line_program_start(&p, &idx->secs, h, s->offset);
    }
    while (line_program_next(&p, &row)) {
        if (monotonic && row.address > address && !row.end_sequence)
            break;
        if (row.end_sequence) {
            if (address >= row.address)
                found = false; /* past the end: no line */
            break;
        }
        if (row.address <= address && (!found || row.address >= best.address)) {
            best = row;
            found = true;
        }
    }
    if (!found)
        return false;
    name_file(idx, h, unit, best.file, out);
    out->line = best.line;
    out->column = best.column;
    out->discriminator = best.discriminator;
    return true;
}

/* Overlapping sequences are rare (broken or tombstoned debug info); a
 * short look back past the nearest one is enough to find a covering one. */
#define OVERLAP_LOOKBACK 32

bool line_index_lookup(struct line_index *idx, uint64_t address, struct line_location *out)
{
    size_t l = 0, u = idx->seq_count;
    while (l < u) {
        size_t m = l + (u - l) / 2;
        if (idx->seqs[m].lo <= address)
            l = m + 1;
        else
            u = m;
    }
    for (size_t i = l, steps = 0; i > 0 && steps < OVERLAP_LOOKBACK; i--, steps++) {
        const struct line_seq *s = &idx->seqs[i - 1];
        if (address - s->lo < (s->size_flags & SEQ_SIZE_MASK) && lookup_in_seq(idx, s, address, out))
            return true;
    }
    return false;
}

bool line_index_has_unit(const struct line_index *idx, uint64_t line_offset)
{
    uint32_t unit;
    return unit_of_offset(idx, line_offset, &unit) && idx->units[unit].line_offset == line_offset;
}

bool line_index_file_name(struct line_index *idx, uint64_t line_offset, uint64_t file, char *buf, size_t len)
{
    uint32_t unit;
    if (!len || !unit_of_offset(idx, line_offset, &unit) || idx->units[unit].line_offset != line_offset)
        return false;
    const struct line_header *h = cached_header(idx, unit);
    if (!h)
        return false;
    struct line_location loc;
    name_file(idx, h, unit, file, &loc);
    if (!loc.file[0])
        return false;
    snprintf(buf, len, "%s", loc.file);
    return true;
}
