#include "target/symbols/symtab.h"

#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "shared/xalloc.h"
#include "target/symbols/elf_symbols.h"

struct symtab_entry {
    uint64_t addr;
    uint64_t end;       /* one past the last byte this name covers */
    uint32_t name;      /* offset in the name arena */
};

struct symtab {
    struct symtab_entry *entries;
    size_t count;
    char *names;        /* one arena for all names */
    const char *origin;
};

/* While loading: everything needed to pick one name per address. */
struct candidate {
    uint64_t addr;
    uint64_t size;
    uint32_t name;
    uint32_t order;     /* position in the symbol table */
    uint16_t shndx;
    uint8_t rank;       /* global 3, weak 2, local 1, others 0 */
};

struct arena {
    char *data;
    size_t used, cap;
};

static uint32_t arena_add(struct arena *a, const char *s)
{
    size_t n = strlen(s) + 1;
    if (a->used + n > a->cap) {
        size_t cap = a->cap ? a->cap : 4096;
        while (a->used + n > cap)
            cap *= 2;
        a->data = xrealloc(a->data, cap);
        a->cap = cap;
    }
    memcpy(a->data + a->used, s, n);
    uint32_t off = (uint32_t)a->used;
    a->used += n;
    return off;
}

static uint8_t binding_rank(uint8_t bind)
{
    switch (bind) {
    case STB_GLOBAL: return 3;
    case STB_WEAK: return 2;
    case STB_LOCAL: return 1;
    default: return 0;
    }
}

static bool is_function(const struct elf_symbol *s)
{
    return (s->type == STT_FUNC || s->type == STT_GNU_IFUNC) && s->shndx != SHN_UNDEF &&
           s->value != 0 && s->name[0] != '\0';
}

/* A global label in code with no symbol type: assembly that marks no
 * function, e.g. the arm64 vDSO's __kernel_rt_sigreturn (NOTYPE, in
 * .text).  gdb and addr2line name code by such symbols too.  Local ones
 * are left out (ARM's $a/$t/$x/$d mapping symbols are local NOTYPE). */
static bool is_code_label(struct elf_file *f, const struct elf_symbol *s)
{
    if (s->type != STT_NOTYPE || s->bind == STB_LOCAL || s->value == 0 || s->name[0] == '\0' ||
        s->shndx == SHN_UNDEF || s->shndx >= SHN_LORESERVE)
        return false;
    const struct elf_section *sec = elf_file_section(f, s->shndx);
    return sec && (sec->flags & SHF_EXECINSTR);
}

/* Address order; at one address the preferred name first. */
static int compare_candidates(const void *pa, const void *pb)
{
    const struct candidate *a = pa, *b = pb;
    if (a->addr != b->addr)
        return a->addr < b->addr ? -1 : 1;
    if (a->rank != b->rank)
        return a->rank > b->rank ? -1 : 1;
    if ((a->size != 0) != (b->size != 0))
        return a->size != 0 ? -1 : 1;
    if (a->order != b->order)
        return a->order < b->order ? -1 : 1;
    return 0;
}

/* Where a sizeless symbol stops at the latest: the end of its section, or
 * of the segment it lies in. */
static uint64_t end_of(uint64_t start, uint64_t size)
{
    return size > UINT64_MAX - start ? UINT64_MAX : start + size;
}

static uint64_t container_end(struct elf_file *f, const struct candidate *c)
{
    const struct elf_section *sec = c->shndx < SHN_LORESERVE ? elf_file_section(f, c->shndx) : NULL;
    if (sec && c->addr >= sec->addr && c->addr - sec->addr < sec->size)
        return end_of(sec->addr, sec->size);
    for (size_t i = 0; i < elf_file_segment_count(f); i++) {
        const struct elf_segment *p = elf_file_segment(f, i);
        if (p->type == PT_LOAD && c->addr >= p->vaddr && c->addr - p->vaddr < p->memsz)
            return end_of(p->vaddr, p->memsz);
    }
    return end_of(c->addr, 1);
}

static bool has_table(struct elf_file *f, enum elf_symbols_kind kind, struct elf_symbols *out)
{
    /* .symtab (thousands of local symbols in a debug file) is read by
     * range; the dynamic tables are small and need their versions. */
    if (kind == ELF_SYMBOLS_SYMTAB)
        return f && elf_symbols_map(f, out) == 0;
    return f && elf_symbols_load(f, kind, out) == 0;
}

/* By name offset, then table position: the order the names are read in. */
static int compare_name_offsets(const void *pa, const void *pb)
{
    const struct candidate *a = pa, *b = pb;
    if (a->name != b->name)
        return a->name < b->name ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

/* In-place heapsort: qsort's merge sort would borrow a copy of the whole
 * array, the largest allocation of loading a symbol table.  The orders are
 * total (ties broken by table position), so the result is qsort's. */
static void sift_down(struct candidate *a, size_t root, size_t n, int (*cmp)(const void *, const void *))
{
    for (;;) {
        size_t child = 2 * root + 1;
        if (child >= n)
            return;
        if (child + 1 < n && cmp(&a[child], &a[child + 1]) < 0)
            child++;
        if (cmp(&a[root], &a[child]) >= 0)
            return;
        struct candidate t = a[root];
        a[root] = a[child];
        a[child] = t;
        root = child;
    }
}

static void sort_candidates(struct candidate *a, size_t n, int (*cmp)(const void *, const void *))
{
    for (size_t i = n / 2; i > 0; i--)
        sift_down(a, i - 1, n, cmp);
    for (size_t end = n; end > 1; end--) {
        struct candidate t = a[0];
        a[0] = a[end - 1];
        a[end - 1] = t;
        sift_down(a, 0, end - 1, cmp);
    }
}

/* Is symbol i a function or a code label?  Its name is not read (see
 * build_entries): only whether it has one is left to check. */
static bool wanted(struct elf_file *f, const struct elf_symbols *syms, size_t i, struct elf_symbol *s,
                   uint32_t *name_off)
{
    if (!elf_symbols_get_unnamed(syms, i, s, name_off))
        return false;
    s->name = "?";  /* an empty name is left out when the names are read */
    return is_function(s) || is_code_label(f, s);
}

static void build_entries(struct symtab *t, struct elf_file *f, const struct elf_symbols *syms)
{
    /* A first pass sizes the candidates exactly. */
    size_t want = 0;
    for (size_t i = 0; i < syms->count; i++) {
        struct elf_symbol s;
        uint32_t off;
        want += wanted(f, syms, i, &s, &off);
    }
    struct candidate *cand = xreallocarray(NULL, want ? want : 1, sizeof(*cand));
    size_t n = 0;
    bool arm = elf_file_machine(f) == EM_ARM;
    for (size_t i = 0; i < syms->count && n < want; i++) {
        struct elf_symbol s;
        uint32_t off;
        if (!wanted(f, syms, i, &s, &off))
            continue;
        struct candidate *c = &cand[n++];
        c->addr = arm ? s.value & ~(uint64_t)1 : s.value; /* Thumb bit */
        c->size = s.size;
        c->name = off;  /* the string table's offset until the names are read */
        c->order = (uint32_t)i;
        c->shndx = s.shndx;
        c->rank = binding_rank(s.bind);
    }
    /* The names, read in the order of their offsets: a mapped string table
     * (a debug file's .symtab) is then made resident front to back, each
     * piece once.  In the table's order the reads jump about the strings,
     * and libc6-dbg's 130 KiB of them were given back and read again
     * ~3,300 times per load (madvise + pread each), for every traced
     * process.  Two passes: the arena's size, then the arena, sized
     * exactly; symbols sharing a string share its copy. */
    sort_candidates(cand, n, compare_name_offsets);
    size_t name_bytes = 0;
    for (size_t k = 0; k < n; k++)
        if (!k || cand[k].name != cand[k - 1].name)
            name_bytes += strlen(elf_symbols_name(syms, cand[k].name)) + 1;
    struct arena names = {0};
    names.cap = name_bytes < UINT32_MAX - 4096 ? name_bytes + 1 : 4096;
    names.data = xmalloc(names.cap);
    size_t kept = 0;
    uint32_t prev_off = 0, prev_name = 0;
    bool prev_ok = false;
    for (size_t k = 0; k < n; k++) {
        struct candidate c = cand[k];
        if (!k || c.name != prev_off) {
            const char *name = elf_symbols_name(syms, c.name);
            prev_off = c.name;
            prev_ok = name[0] != '\0' && names.used <= UINT32_MAX - 4096 - strlen(name);
            if (prev_ok) /* else empty, or names beyond 4 GiB: a hostile file */
                prev_name = arena_add(&names, name);
        }
        if (!prev_ok)
            continue;
        c.name = prev_name;
        cand[kept++] = c;
    }
    n = kept;
    sort_candidates(cand, n, compare_candidates);

    /* The entries are written over the candidates already read (an entry
     * is smaller: entry k ends before candidate k + 1 begins, but may
     * cover the previous candidate, whose address is kept aside), then the
     * array is shrunk: no second array at the peak of loading. */
    _Static_assert(sizeof(struct symtab_entry) <= sizeof(struct candidate), "entries fit over candidates");
    char *slots = (char *)cand;
    size_t out = 0;
    uint64_t prev_addr = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t addr = cand[i].addr;
        bool alias = i > 0 && addr == prev_addr;
        prev_addr = addr;
        if (alias)
            continue; /* an alias: the first one sorted is preferred */
        uint64_t end;
        if (cand[i].size != 0 && cand[i].size <= UINT64_MAX - cand[i].addr) {
            end = cand[i].addr + cand[i].size;
        } else {
            /* A label: up to the next symbol, never past its section
             * (the .init label _init must not swallow .plt). */
            size_t j = i + 1;
            while (j < n && cand[j].addr == cand[i].addr)
                j++;
            end = container_end(f, &cand[i]);
            if (j < n && cand[j].addr < end)
                end = cand[j].addr;
        }
        if (end <= cand[i].addr)
            continue; /* only at the very top of the address space */
        struct symtab_entry e = {.addr = cand[i].addr, .end = end, .name = cand[i].name};
        memcpy(slots + out * sizeof(e), &e, sizeof(e));
        out++;
    }
    t->entries = xrealloc(cand, out ? out * sizeof(*t->entries) : sizeof(*t->entries));
    t->count = out;
    t->names = names.data;
}

struct symtab *symtab_load(struct elf_file *obj, struct elf_file *debug)
{
    struct symtab *t = xcalloc(1, sizeof(*t));
    struct elf_symbols syms;
    struct elf_file *from = obj;
    if (has_table(debug, ELF_SYMBOLS_SYMTAB, &syms)) {
        t->origin = "debug .symtab";
        from = debug;
    } else if (has_table(obj, ELF_SYMBOLS_SYMTAB, &syms)) {
        t->origin = ".symtab";
    } else if (has_table(obj, ELF_SYMBOLS_DYNSYM, &syms)) {
        t->origin = ".dynsym";
    } else if (has_table(obj, ELF_SYMBOLS_DYNAMIC, &syms)) {
        t->origin = "PT_DYNAMIC";
    } else {
        t->origin = "none";
        return t;
    }
    build_entries(t, from, &syms);
    elf_symbols_free(&syms);
    return t;
}

void symtab_free(struct symtab *t)
{
    if (!t)
        return;
    free(t->entries);
    free(t->names);
    free(t);
}

size_t symtab_count(const struct symtab *t) { return t->count; }
const char *symtab_origin(const struct symtab *t) { return t->origin; }

const char *symtab_entry(const struct symtab *t, size_t i, uint64_t *vaddr, uint64_t *size)
{
    if (i >= t->count)
        return NULL;
    if (vaddr)
        *vaddr = t->entries[i].addr;
    if (size)
        *size = t->entries[i].end - t->entries[i].addr;
    return t->names + t->entries[i].name;
}

/* How many lower entries may enclose a later, smaller one (a local symbol
 * inside a function, e.g. a cold part); deeper nesting does not happen in
 * compiled code. */
#define MAX_ENCLOSING_LOOKBACK 4

const char *symtab_lookup(const struct symtab *t, uint64_t vaddr, uint64_t *offset)
{
    /* The last entry starting at or below vaddr. */
    size_t lo = 0, hi = t->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->entries[mid].addr <= vaddr)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t k = 0; k < MAX_ENCLOSING_LOOKBACK && lo > k; k++) {
        const struct symtab_entry *e = &t->entries[lo - 1 - k];
        if (vaddr < e->end) {
            if (offset)
                *offset = vaddr - e->addr;
            return t->names + e->name;
        }
    }
    return NULL;
}

static bool version_matches(const struct elf_symbols *syms, size_t i, const char *version, bool want_default)
{
    unsigned index;
    bool hidden;
    const char *vname;
    elf_symbols_version(syms, i, &index, &hidden, &vname);
    if (!version)
        return !hidden; /* the default version, or an unversioned symbol */
    if (want_default && hidden)
        return false;
    return vname && strcmp(vname, version) == 0;
}

static int find_in(const struct elf_symbols *syms, const char *name, size_t name_len,
                   const char *version, bool want_default, bool exported, uint64_t *vaddr)
{
    int best_rank = -1;
    for (size_t i = 0; i < syms->count; i++) {
        struct elf_symbol s;
        if (!elf_symbols_get(syms, i, &s) || !is_function(&s))
            continue;
        if (exported && s.bind == STB_LOCAL)
            continue;
        if (strncmp(s.name, name, name_len) != 0 || s.name[name_len] != '\0')
            continue;
        if (!version_matches(syms, i, version, want_default))
            continue;
        if ((int)binding_rank(s.bind) > best_rank) {
            best_rank = binding_rank(s.bind);
            *vaddr = s.value;
        }
    }
    return best_rank >= 0 ? 0 : -ENOENT;
}

int symtab_find_export(struct elf_file *obj, const char *name, uint64_t *vaddr)
{
    struct elf_symbols syms;
    if (!has_table(obj, ELF_SYMBOLS_DYNSYM, &syms) && !has_table(obj, ELF_SYMBOLS_DYNAMIC, &syms))
        return -ENOENT;
    /* "name@@VER" (default version) or "name@VER" (any version VER). */
    const char *at = strchr(name, '@');
    size_t name_len = at ? (size_t)(at - name) : strlen(name);
    const char *version = NULL;
    bool want_default = false;
    if (at) {
        want_default = at[1] == '@';
        version = at + (want_default ? 2 : 1);
    }
    int rc = -ENOENT;
    uint64_t addr;
    if (find_in(&syms, name, name_len, version, want_default, true, &addr) == 0) {
        rc = 0;
        *vaddr = addr;
    }
    elf_symbols_free(&syms);
    return rc;
}

int symtab_each_function(struct elf_file *obj, int from_symtab,
                         void (*found)(void *ctx, const char *name, uint64_t vaddr), void *ctx)
{
    struct elf_symbols syms;
    if (from_symtab ? !has_table(obj, ELF_SYMBOLS_SYMTAB, &syms)
                    : !has_table(obj, ELF_SYMBOLS_DYNSYM, &syms) &&
                          !has_table(obj, ELF_SYMBOLS_DYNAMIC, &syms))
        return -ENOENT;
    for (size_t i = 0; i < syms.count; i++) {
        struct elf_symbol s;
        if (!elf_symbols_get(&syms, i, &s) || !is_function(&s))
            continue;
        if (!from_symtab && (s.bind == STB_LOCAL || !version_matches(&syms, i, NULL, false)))
            continue;
        if (from_symtab == SYMTAB_GLOBALS && s.bind == STB_LOCAL)
            continue;
        found(ctx, s.name, s.value);
    }
    elf_symbols_free(&syms);
    return 0;
}

size_t symtab_function_starts(struct elf_file *obj, const char *name, uint64_t *out, size_t max)
{
    struct elf_symbols syms;
    if (!has_table(obj, ELF_SYMBOLS_SYMTAB, &syms))
        return 0;
    bool arm = elf_file_machine(obj) == EM_ARM;
    size_t len = strlen(name), n = 0;
    for (size_t i = 0; i < syms.count; i++) {
        struct elf_symbol s;
        if (!elf_symbols_get(&syms, i, &s) || !is_function(&s) || !s.value)
            continue;
        if (strncmp(s.name, name, len) != 0 || (s.name[len] != '\0' && s.name[len] != '.'))
            continue;
        if (n < max)
            out[n] = arm ? s.value & ~(uint64_t)1 : s.value; /* Thumb bit */
        n++;
    }
    elf_symbols_free(&syms);
    return n;
}

int symtab_find_local(struct elf_file *obj, const char *name, uint64_t *vaddr)
{
    struct elf_symbols syms;
    if (!has_table(obj, ELF_SYMBOLS_SYMTAB, &syms))
        return -ENOENT;
    int rc = find_in(&syms, name, strlen(name), NULL, false, false, vaddr);
    elf_symbols_free(&syms);
    return rc;
}
