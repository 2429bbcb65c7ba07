/* Replays gdb snapshots of an arm or aarch64 program (taken under qemu-user
 * by selftest/tests/arch_cross_capture.py) through memtrace's own code, as
 * built for that CPU: modules opened with memtrace's ELF reader, CFI tables
 * from target/dwarf, target/unwind from the stop's registers and stack
 * bytes, names and lines from target/symbols.  Every frame is compared with
 * gdb's: pc, function name, and source line where gdb knows one.
 *
 *   snapshot_replay [--exidx-ok] SNAPSHOT.txt...
 *
 * Runs on the target CPU (under qemu-user here).  Frames without CFI are
 * unwound with the modules' ARM EHABI tables, as capture.c does.
 * --pac-ref REF.txt SNAP.txt (aarch64): SNAP is of a program built with
 * -mbranch-protection, where gdb (13, on qemu 7.2's gdbstub, which does not
 * describe the PAC masks) shows signed return addresses and stops; its pcs
 * are compared without the signature (bits 48-63: qemu-user's 48-bit
 * address space), and names and lines, frame by frame, with gdb's bt of REF,
 * the same stop in the same program built without branch protection.
 * --exidx-ok: when memtrace stops early, it is accepted only if every frame
 * so far matched and the last one lies in a module with no
 * .eh_frame/.debug_frame row for it (from before exidx was read; the
 * tests no longer pass it).
 * Exit 0 when every snapshot matched, 1 otherwise. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/xalloc.h"
#include "target/dwarf/cfi.h"
#include "target/symbols/symbolize.h"
#include "target/tracer/modules.h"
#include "target/unwind/unwind.h"

#define MAX_FRAMES 128
#define MAX_MODULES 64
#define NAME_MAX_LEN 256

struct gdb_frame {
    uint64_t pc;
    char func[NAME_MAX_LEN];
    char file[NAME_MAX_LEN];
    unsigned line;
};

struct snapshot {
    unsigned addr_size;
    struct unwind_regs regs;
    uint64_t mem_addr;
    uint8_t *mem;
    size_t mem_len;
    struct gdb_frame frames[MAX_FRAMES];
    int nframes;
};

struct module_seen {
    char path[NAME_MAX_LEN];
    uint64_t start, end;
    uint64_t text_runtime;
    bool have_text;
};

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    uint8_t *p = xmalloc(cap);
    size_t got;
    while ((got = fread(p + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap)
            p = xrealloc(p, cap *= 2);
    }
    fclose(f);
    *len = n;
    return p;
}

static struct module_seen *seen_for(struct module_seen *seen, int *nseen, const char *path)
{
    for (int i = 0; i < *nseen; i++)
        if (strcmp(seen[i].path, path) == 0)
            return &seen[i];
    if (*nseen == MAX_MODULES || strlen(path) >= NAME_MAX_LEN)
        return NULL;
    struct module_seen *s = &seen[(*nseen)++];
    memset(s, 0, sizeof(*s));
    snprintf(s->path, sizeof(s->path), "%s", path);
    s->start = UINT64_MAX;
    return s;
}

/* Reads the snapshot and puts one module per file into mm, each spanning
 * its loaded sections, its bias from .text (runtime minus link address). */
static int load(const char *path, struct snapshot *s, struct module_map *mm)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return -1;
    }
    char dir[1024];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        slash[1] = '\0';
    else
        snprintf(dir, sizeof(dir), "./");

    static struct module_seen seen[MAX_MODULES];
    int nseen = 0, version = 0;
    char line[4096], word[NAME_MAX_LEN], rest[NAME_MAX_LEN];
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = '\0';
        unsigned long long a, b;
        int i, off;
        unsigned u;
        if (sscanf(line, "memtrace-unwind-snapshot %d", &version) == 1) {
        } else if (sscanf(line, "addr_size %u", &s->addr_size) == 1) {
        } else if (sscanf(line, "reg %d %llx", &i, &a) == 2) {
            if (i >= 0 && i < ARCH_DWARF_NREGS) {
                s->regs.r[i] = a;
                s->regs.valid |= 1ull << i;
            }
        } else if (sscanf(line, "memory %llx %llx %255s", &a, &b, word) == 3) {
            char file[2048];
            snprintf(file, sizeof(file), "%s%s", dir, word);
            s->mem_addr = a;
            s->mem = slurp(file, &s->mem_len);
            if (s->mem_len > b)
                s->mem_len = (size_t)b;   /* the bytes the snapshot vouches for */
        } else if (sscanf(line, "section %llx %llx %255s %n", &a, &b, word, &off) == 3) {
            struct module_seen *m = seen_for(seen, &nseen, line + off);
            if (!m || a >= b)
                continue;
            if (a < m->start)
                m->start = a;
            if (b > m->end)
                m->end = b;
            if (strcmp(word, ".text") == 0) {
                m->text_runtime = a;
                m->have_text = true;
            }
        } else if (sscanf(line, "frame %d %llx", &i, &a) == 2 && i == s->nframes &&
                   s->nframes < MAX_FRAMES) {
            s->frames[s->nframes++].pc = a;
        } else if (sscanf(line, "func %d %255s", &i, word) == 2 && i == s->nframes - 1) {
            snprintf(s->frames[i].func, NAME_MAX_LEN, "%s", word);
        } else if (sscanf(line, "line %d %u %255s", &i, &u, rest) == 3 && i == s->nframes - 1) {
            s->frames[i].line = u;
            snprintf(s->frames[i].file, NAME_MAX_LEN, "%s", rest);
        }
    }
    fclose(f);
    if (version != 1 || s->addr_size != ARCH_PTR_SIZE || !s->mem) {
        fprintf(stderr, "%s: not a version 1 %d-bit snapshot with stack bytes\n", path,
                8 * ARCH_PTR_SIZE);
        return -1;
    }

    for (int i = 0; i < nseen; i++) {
        if (!seen[i].have_text)
            continue;
        struct object *o = object_new(&(struct object_origin){ .pid = mm->pid, .path = seen[i].path,
            .start = seen[i].start, .end = seen[i].end, .locator = mm->locator });
        struct elf_file *ef = object_mapped_elf(o);
        const struct elf_section *text = ef ? elf_file_find_section(ef, ".text") : NULL;
        if (!text) {
            fprintf(stderr, "%s: cannot read %s\n", path, seen[i].path);
            object_free(o);
            continue;
        }
        module_map_add(mm, o, seen[i].start, seen[i].end, seen[i].text_runtime - text->addr);
    }
    return 0;
}

static int read_mem(void *ctx, uint64_t addr, void *buf, size_t len)
{
    const struct snapshot *s = ctx;
    if (addr < s->mem_addr || addr - s->mem_addr > s->mem_len ||
        len > s->mem_len - (addr - s->mem_addr))
        return -1;
    memcpy(buf, s->mem + (addr - s->mem_addr), len);
    return 0;
}

static struct cfi_table *find_cfi(void *ctx, uint64_t pc, uint64_t *bias)
{
    struct module_map *mm = ctx;
    struct module *m = module_find(mm, pc);
    if (!m)
        return NULL;
    *bias = m->bias;
    return object_cfi(m->obj);
}

static struct exidx_table *find_exidx(void *ctx, uint64_t pc, uint64_t *bias)
{
    struct module_map *mm = ctx;
    struct module *m = module_find(mm, pc);
    if (!m)
        return NULL;
    *bias = m->bias;
    return object_exidx(m->obj);
}

static size_t func_code(void *ctx, uint64_t pc, uint64_t *start, uint8_t *code, size_t max)
{
    return module_func_code(ctx, pc, start, code, max);
}

static bool has_cfi_row(struct module_map *mm, uint64_t pc)
{
    uint64_t bias;
    struct cfi_table *t = find_cfi(mm, pc, &bias);
    return t && cfi_lookup(t, pc - bias) != NULL;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* memtrace's name and line for frame i, compared with gdb's.  Outer frames
 * are looked up at pc-1 (inside the call), as gdb and the reports do. */
static bool same_symbol(struct module_map *mm, const struct gdb_frame *g, int i, uint64_t pc,
                        char *why, size_t whylen)
{
    struct module *m = module_find(mm, pc);
    struct symbolizer *sym = m ? object_symbolizer(m->obj) : NULL;
    struct sym_info info;
    memset(&info, 0, sizeof(info));
    int found = sym ? symbolizer_lookup(sym, (i == 0 ? pc : pc - 1) - m->bias, &info) : 0;
    const char *fn = (found & SYM_FOUND_FUNCTION) && info.function ? info.function : "??";
    /* gdb names a pc it has no symbol for "??" (a libc-internal function
     * without .symtab): nothing to compare. */
    if (strcmp(g->func, "??") != 0 && strcmp(fn, g->func) != 0) {
        snprintf(why, whylen, "function %s, gdb %s", fn, g->func);
        return false;
    }
    if (g->line && (!(found & SYM_FOUND_LINE) || info.line != g->line ||
                    strcmp(base_name(info.file), base_name(g->file)) != 0)) {
        snprintf(why, whylen, "line %s:%u, gdb %s:%u", base_name(info.file), info.line,
                 base_name(g->file), g->line);
        return false;
    }
    snprintf(why, whylen, "%s%s%s", fn, g->line ? " " : "", g->line ? base_name(g->file) : "");
    return true;
}

/* --pac-ref: gdb's names and lines from the reference, its pcs (without
 * the signature) from the snapshot as far as gdb got; 0 is "not known". */
static bool merge_reference(struct snapshot *s, const char *ref_path, struct file_locator *loc)
{
    struct snapshot *r = xcalloc(1, sizeof(*r));
    struct module_map rm;
    module_map_init(&rm, -1, loc);
    bool ok = load(ref_path, r, &rm) == 0 && r->nframes > 0;
    if (ok) {
        for (int i = 0; i < r->nframes; i++) {
            uint64_t pc = i < s->nframes ? s->frames[i].pc & ((1ull << 48) - 1) : 0;
            s->frames[i] = r->frames[i];
            s->frames[i].pc = pc;
        }
        s->nframes = r->nframes;
    }
    module_map_destroy(&rm);
    free(r->mem);
    free(r);
    return ok;
}

static bool replay(const char *path, bool exidx_ok, const char *ref_path, int *frames_ok,
                   int *lines_ok)
{
    struct snapshot *s = xcalloc(1, sizeof(*s));
    struct file_locator loc;
    file_locator_init(&loc);
    file_locator_add(&loc, file_provider_sysroot("/"));
    struct module_map mm;
    module_map_init(&mm, -1, &loc);
    bool ok = load(path, s, &mm) == 0 && (!ref_path || merge_reference(s, ref_path, &loc));
    if (ok) {
        struct unwind_memory mem = {read_mem, s};
        struct unwind_lookup lookup = {find_cfi, &mm, find_exidx, func_code};
        uint64_t pcs[MAX_FRAMES];
        /* As capture_stack does: every snapshot is at a function's entry. */
        int n = unwind_stack_at_entry(&s->regs, &mem, &lookup, pcs, MAX_FRAMES);
        char why[600];
        printf("%s: memtrace %d frames, gdb %d\n", path, n, s->nframes);
        for (int i = 0; i < n || i < s->nframes; i++) {
            uint64_t pc = i < n ? pcs[i] & ~UNWIND_PC_EXACT : 0;
            const struct gdb_frame *g = i < s->nframes ? &s->frames[i] : NULL;
            const char *verdict = "ok";
            why[0] = '\0';
            if (!g) {
                verdict = "EXTRA";
                ok = false;
            } else if (i >= n) {
                bool tolerated = exidx_ok && i == n && n > 0 && !has_cfi_row(&mm, pcs[n - 1]);
                verdict = tolerated ? "stop (no CFI, only .ARM.exidx)" : "MISSING";
                if (!tolerated)
                    ok = false;
                if (tolerated) {
                    printf("  #%-2d %-10s gdb 0x%" PRIx64 " %s\n", i, verdict, g->pc, g->func);
                    break;
                }
            } else if (g->pc && pc != g->pc) {
                verdict = "PC DIFFERS";
                ok = false;
            } else if (!same_symbol(&mm, g, i, pc, why, sizeof(why))) {
                verdict = "SYMBOL DIFFERS";
                ok = false;
            } else {
                (*frames_ok)++;
                if (g->line)
                    (*lines_ok)++;
            }
            printf("  #%-2d %-10s memtrace 0x%" PRIx64 " gdb 0x%" PRIx64 " %s %s\n", i, verdict, pc,
                   g ? g->pc : 0, g ? g->func : "-", why);
        }
    }
    module_map_destroy(&mm);
    file_locator_destroy(&loc);
    free(s->mem);
    free(s);
    return ok;
}

int main(int argc, char **argv)
{
    bool exidx_ok = false;
    const char *ref = NULL;
    int first = 1;
    if (argc > 1 && strcmp(argv[1], "--exidx-ok") == 0) {
        exidx_ok = true;
        first = 2;
    } else if (argc > 3 && strcmp(argv[1], "--pac-ref") == 0) {
        ref = argv[2];
        first = 3;
    }
    if (first >= argc || (ref && argc != 4)) {
        fprintf(stderr, "usage: snapshot_replay [--exidx-ok] SNAPSHOT.txt...\n"
                        "       snapshot_replay --pac-ref REF.txt SNAPSHOT.txt\n");
        return 2;
    }
    int bad = 0, frames_ok = 0, lines_ok = 0;
    for (int a = first; a < argc; a++)
        if (!replay(argv[a], exidx_ok, ref, &frames_ok, &lines_ok))
            bad++;
    printf("%s: %d snapshots, %d frames matched gdb (%d with file:line), %d snapshots differ\n",
           ARCH_NAME, argc - first, frames_ok, lines_ok, bad);
    return bad ? 1 : 0;
}
