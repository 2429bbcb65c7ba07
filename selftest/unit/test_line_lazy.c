/* Lines and function names one unit at a time (dwarf/unit_index.h)
 * against the whole walk, on libc's real debug info: line_object_open_mode
 * lazily and not, on the same file, must give the same file:line, the
 * same inlined-call chains (with their call files) and, for call sites, a
 * candidate set holding whatever the whole index answers, over many
 * addresses of libc's code.  The lazy object must answer those inside
 * functions without walking all of .debug_info or .debug_line.  Then
 * eu-addr2line -f judges the innermost names of the lazy object (the
 * outside oracle).  Exit 77 without libc6-dbg or eu-addr2line. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "selftest/unit/test.h"
#include "shared/elf/elf_file.h"
#include "shared/files/byte_source.h"
#include "target/dwarf/info_aranges.h"
#include "target/dwarf/line_object.h"
#include "target/dwarf/unit_index.h"
#include "target/symbols/symtab.h"

/* The libc compared: this machine's, or MT_LAZY_LIBC (another CPU's, from
 * a board's root: selftest/tests/lazy_board_libcs.sh) with its debug
 * files under MT_LAZY_DEBUG_ROOT. */
static const char *libc_path(void)
{
    const char *p = getenv("MT_LAZY_LIBC");
    return p && *p ? p : "/lib/x86_64-linux-gnu/libc.so.6";
}

/* libc's build-id debug file, found through the note of libc itself. */
static char *libc_debug_file(void)
{
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null | awk '/Build ID/{print $3}'", libc_path());
    FILE *p = popen(cmd, "r");
    char id[128] = "";
    if (!p)
        return NULL;
    if (!fgets(id, sizeof(id), p))
        id[0] = 0;
    pclose(p);
    id[strcspn(id, "\n")] = 0;
    if (strlen(id) < 4)
        return NULL;
    char path[1024];
    const char *root = getenv("MT_LAZY_DEBUG_ROOT");
    snprintf(path, sizeof(path), "%s/usr/lib/debug/.build-id/%.2s/%s.debug", root ? root : "", id, id + 2);
    return access(path, R_OK) == 0 ? strdup(path) : NULL;
}

static struct elf_file *open_elf(const char *path)
{
    char err[256];
    struct byte_source *src = byte_source_open_file(path, err, sizeof(err));
    return src ? elf_file_open(src, err, sizeof(err)) : NULL;
}

static uint64_t rng_state = 0x2545f4914f6cdd1dull;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

struct pair {
    struct elf_file *lazy_elf, *whole_elf;
    struct line_object *lazy, *whole;
};

static size_t reopened, fallbacks;

/* A fresh lazy object when the last one nears its unit limit (past it the
 * object walks everything, and the comparison would be of the whole index
 * with itself) or had to walk everything. */
static void keep_lazy(struct pair *p)
{
    size_t units;
    if (p->lazy && line_object_lazy(p->lazy, &units) && units < UNIT_INDEX_MAX - 4)
        return;
    line_object_close(p->lazy);
    p->lazy = line_object_open_mode(p->lazy_elf, true, true);
    reopened++;
}

static bool same_location(struct line_object *a, struct line_object *b, uint64_t addr)
{
    struct line_location x, y;
    memset(&x, 0, sizeof(x));
    memset(&y, 0, sizeof(y));
    bool fx = line_object_lookup(a, addr, &x), fy = line_object_lookup(b, addr, &y);
    return fx == fy && (!fx || (strcmp(x.file, y.file) == 0 && x.line == y.line && x.column == y.column &&
                                x.discriminator == y.discriminator));
}

static bool same_chain(struct line_object *a, struct line_object *b, uint64_t addr, uint64_t lowest)
{
    struct inline_frame x[32], y[32];
    size_t nx = line_object_inline_chain(a, addr, lowest, x, 32);
    size_t ny = line_object_inline_chain(b, addr, lowest, y, 32);
    if (nx != ny)
        return false;
    for (size_t i = 0; i < nx; i++) {
        if (strcmp(x[i].name, y[i].name) != 0 || x[i].inlined != y[i].inlined || x[i].call_line != y[i].call_line ||
            x[i].call_file != y[i].call_file || x[i].line_offset != y[i].line_offset)
            return false;
        /* The call's file, as symbolize.c names it. */
        char fx[LINE_PATH_MAX] = "", fy[LINE_PATH_MAX] = "";
        if (x[i].line_offset != UINT32_MAX &&
            (line_object_file_name(a, x[i].line_offset, x[i].call_file, fx, sizeof(fx)) !=
                 line_object_file_name(b, y[i].line_offset, y[i].call_file, fy, sizeof(fy)) ||
             strcmp(fx, fy) != 0))
            return false;
    }
    return true;
}

/* The whole index's answer is NULL or one of the lazy candidates. */
static bool candidates_cover(struct line_object *lazy, struct line_object *whole, uint64_t ret, size_t *decided)
{
    const char *cand[8];
    size_t n = line_object_call_candidates(lazy, ret, cand, 8);
    const char *target = line_object_call_target(whole, ret, NULL);
    if (n == SIZE_MAX)
        return true; /* the caller asks the whole index then */
    (*decided)++;
    if (!target)
        return true;
    for (size_t i = 0; i < n; i++)
        if (strcmp(cand[i], target) == 0)
            return true;
    return false;
}

/* The debug file's own .debug_aranges, read here apart from the lazy
 * object: where it gives an address to one unit, that unit must answer. */
static struct aranges file_aranges;

static void load_file_aranges(struct elf_file *f)
{
    const struct elf_section *s = elf_file_find_section(f, ".debug_aranges");
    struct elf_blob b;
    CHECK(s && elf_file_load_section(f, s, &b) == 0, " no .debug_aranges");
    if (!s)
        return;
    struct dwarf_span span = { .data = b.data, .size = b.size };
    CHECK(aranges_parse(&span, elf_file_big_endian(f), &file_aranges), " .debug_aranges unreadable");
    elf_blob_free(&b);
}

/* Each such address walks every unit (seconds under ASan): MT_LAZY_FALLBACKS
 * of them, 8 unless told. */
static size_t fallbacks_max(void)
{
    const char *v = getenv("MT_LAZY_FALLBACKS");
    return v ? (size_t)atol(v) : 8;
}

/* Inside a function (the whole index has a chain there) that the
 * aranges give to one unit, the units must answer alone.  Elsewhere
 * (padding between units, i386's pc thunks that every unit claims,
 * armhf's assembly string functions that no aranges name) the lazy
 * object walks everything, as it must to be sure; a few such addresses
 * are tried, each on a fresh object. */
static void compare(struct pair *p, uint64_t addr, size_t *checked, size_t *decided)
{
    keep_lazy(p);
    CHECK(candidates_cover(p->lazy, p->whole, addr, decided), " call candidates miss the target at 0x%" PRIx64,
          addr);
    struct inline_frame fr[32];
    uint64_t cu;
    bool inside = line_object_inline_chain(p->whole, addr, 0, fr, 32) > 0 &&
                  aranges_find(&file_aranges, addr, &cu);
    if (!inside && fallbacks >= fallbacks_max())
        return;
    CHECK(same_location(p->lazy, p->whole, addr), " file:line differs at 0x%" PRIx64, addr);
    uint64_t lowest = addr - rng() % 256;
    CHECK(same_chain(p->lazy, p->whole, addr, 0), " inline chain differs at 0x%" PRIx64, addr);
    CHECK(same_chain(p->lazy, p->whole, addr, lowest), " inline chain differs at 0x%" PRIx64 " above 0x%" PRIx64,
          addr, lowest);
    if (!inside)
        fallbacks++;
    else
        CHECK(line_object_lazy(p->lazy, NULL), " 0x%" PRIx64 " (in a function) needed the whole walk", addr);
    (*checked)++;
}

/* eu-addr2line -f's function name for each address, against the lazy
 * object's innermost frame wherever DWARF names one. */
static void check_oracle(const char *path, struct pair *p, const uint64_t *addr, size_t n)
{
    if (system("eu-addr2line --version >/dev/null 2>&1") != 0) {
        printf("eu-addr2line missing: oracle not asked\n");
        return;
    }
    size_t len = strlen(path) + 64 + n * 20, used;
    char *cmd = malloc(len);
    used = (size_t)snprintf(cmd, len, "eu-addr2line -f -e '%s'", path);
    for (size_t i = 0; i < n; i++)
        used += (size_t)snprintf(cmd + used, len - used, " 0x%" PRIx64, addr[i]);
    FILE *f = popen(cmd, "r");
    size_t agree = 0, named = 0;
    for (size_t i = 0; f && i < n; i++) {
        char fn[2048], loc[2048];
        if (!fgets(fn, sizeof(fn), f) || !fgets(loc, sizeof(loc), f))
            break;
        fn[strcspn(fn, "\n")] = 0;
        char *inlined_at = strstr(fn, " inlined at ");
        if (inlined_at)
            *inlined_at = 0;
        /* A fresh object near the unit limit; one that had to walk
         * everything (an address no aranges name: more of those on i386
         * and armhf) is kept, not walked again for the next one. */
        size_t units;
        if (line_object_lazy(p->lazy, &units) && units >= UNIT_INDEX_MAX - 4)
            keep_lazy(p);
        struct inline_frame fr[32];
        if (line_object_inline_chain(p->lazy, addr[i], 0, fr, 32) == 0)
            continue;
        named++;
        if (strcmp(fr[0].name, fn) == 0)
            agree++;
        else
            CHECK(false, " 0x%" PRIx64 ": eu-addr2line says %s, the lazy index %s", addr[i], fn, fr[0].name);
    }
    if (f)
        pclose(f);
    free(cmd);
    printf("eu-addr2line -f: %zu of %zu named addresses agree\n", agree, named);
    CHECK(named > 0 && agree == named);
}

/* Units prefetched for addresses given in no order of the section answer
 * as the whole walk does, and a lookup after the prefetch indexes no unit
 * more.  A prefetch past UNIT_INDEX_MAX units indexes none. */
/* The jumps a function makes, from the units of the functions of its name
 * (symbolize.c's way), against the whole index's, for function names of
 * the debug file's .symtab spread over it (MT_LAZY_TAIL that make jumps,
 * a third as many that make none): the same jumps wherever the units
 * answer. */
struct names {
    char **v;
    size_t n, cap;
};

static void add_name(void *ctx, const char *name, uint64_t vaddr)
{
    struct names *ns = ctx;
    (void)vaddr;
    if (ns->n == ns->cap) {
        ns->cap = ns->cap ? ns->cap * 2 : 1024;
        ns->v = realloc(ns->v, ns->cap * sizeof(*ns->v));
    }
    ns->v[ns->n++] = strdup(name);
}

static bool same_jumps(const struct inline_tail_call *a, size_t na, const struct inline_tail_call *b, size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++) {
        bool found = false;
        for (size_t j = 0; j < nb && !found; j++)
            found = a[i].return_pc == b[j].return_pc &&
                    ((!a[i].target && !b[j].target) || (a[i].target && b[j].target && strcmp(a[i].target, b[j].target) == 0));
        if (!found)
            return false;
    }
    return true;
}

static void check_tail_calls(struct pair *p)
{
    struct names ns = { 0 };
    symtab_each_function(p->lazy_elf, SYMTAB_ALL, add_name, &ns);
    size_t want = getenv("MT_LAZY_TAIL") ? (size_t)atol(getenv("MT_LAZY_TAIL")) : 200;
    if (want < 3)
        want = 3;
    size_t with_jumps = 0, without = 0, decided = 0, jumped = 0;
    size_t stride = ns.n / (want * 8) + 1;
    for (size_t i = 0; i < ns.n; i++) {
        struct inline_tail_call w[16], l[16];
        size_t nw = line_object_tail_calls(p->whole, ns.v[i], w, 16);
        /* most make no jump: a few of those are enough */
        if (nw ? with_jumps >= want || i % stride : without >= want / 3 || i % (8 * stride))
            continue;
        with_jumps += nw > 0;
        without += nw == 0;
        keep_lazy(p);
        uint64_t starts[8];
        size_t nstarts = symtab_function_starts(p->lazy_elf, ns.v[i], starts, 8);
        size_t nl = nstarts <= 8 ? line_object_tail_calls_at(p->lazy, ns.v[i], starts, nstarts, l, 16) : SIZE_MAX;
        if (nl == SIZE_MAX)
            continue;
        decided++;
        jumped += nl > 0;
        CHECK(same_jumps(w, nw, l, nl), " %s: the units give %zu jumps, the whole index %zu", ns.v[i], nl, nw);
    }
    printf("tail calls: %zu functions that jump, %zu names decided from their units, %zu of them jumping\n",
           with_jumps, decided, jumped);
    CHECK(jumped > with_jumps / 2, " the units decided too few functions that jump (%zu of %zu)", jumped, with_jumps);
    for (size_t i = 0; i < ns.n; i++)
        free(ns.v[i]);
    free(ns.v);
}

static void check_prefetch(struct pair *p, uint64_t text, uint64_t size)
{
    enum { N = 40 };
    uint64_t addr[N];
    for (size_t i = 0; i < N; i++)
        addr[i] = text + rng() % size;
    line_object_close(p->lazy);
    p->lazy = line_object_open_mode(p->lazy_elf, true, true);
    line_object_prefetch(p->lazy, addr, N);
    size_t before, after;
    CHECK(line_object_lazy(p->lazy, &before) && before > 1, " the prefetch indexed %zu units", before);
    for (size_t i = 0; i < N; i++) {
        CHECK(same_location(p->lazy, p->whole, addr[i]), " file:line differs at 0x%" PRIx64 " (prefetched)",
              addr[i]);
        CHECK(same_chain(p->lazy, p->whole, addr[i], 0), " inline chain differs at 0x%" PRIx64 " (prefetched)",
              addr[i]);
    }
    line_object_lazy(p->lazy, &after);
    CHECK(after == before, " lookups after the prefetch indexed %zu units more", after - before);

    size_t many = 4096;
    uint64_t *wide = calloc(many, sizeof(*wide));
    for (size_t i = 0; wide && i < many; i++)
        wide[i] = text + rng() % size;
    line_object_close(p->lazy);
    p->lazy = line_object_open_mode(p->lazy_elf, true, true);
    line_object_prefetch(p->lazy, wide, wide ? many : 0);
    CHECK(line_object_lazy(p->lazy, &after) && after == 0, " a prefetch past the cap indexed %zu units", after);
    free(wide);
    printf("prefetch: %zu addresses, %zu units, the same answers\n", (size_t)N, before);
}

int main(void)
{
    char *path = libc_debug_file();
    if (!path) {
        printf("libc6-dbg debug file not found: skipped\n");
        return 77;
    }
    struct pair p = { open_elf(path), open_elf(path), NULL, NULL };
    CHECK(p.lazy_elf && p.whole_elf);
    if (!p.lazy_elf || !p.whole_elf)
        return test_end("test_line_lazy");
    load_file_aranges(p.whole_elf);
    p.whole = line_object_open_mode(p.whole_elf, true, false);
    keep_lazy(&p);
    CHECK(p.whole && p.lazy);
    /* (i386's libc: units overlap at the pc thunks, and only there) */
    CHECK(line_object_lazy(p.lazy, NULL), " libc (DWARF 5, .debug_aranges) must be indexed unit by unit");
    /* The debug file's .text is NOBITS: libc itself tells where it lies. */
    struct elf_file *libc = open_elf(libc_path());
    const struct elf_section *text = libc ? elf_file_find_section(libc, ".text") : NULL;
    CHECK(text && text->size, " no .text in libc");
    if (!p.whole || !p.lazy || !text)
        return test_end("test_line_lazy");

    size_t checked = 0, decided = 0;
    /* Every call site's return address (and the call before it), where
     * the candidates matter; then addresses anywhere in the code. */
    size_t ncalls = line_object_call_pcs(p.whole, NULL, 0);
    uint64_t *calls = calloc(ncalls ? ncalls : 1, sizeof(*calls));
    line_object_call_pcs(p.whole, calls, ncalls);
    size_t want = getenv("MT_LAZY_SAMPLES") ? (size_t)atol(getenv("MT_LAZY_SAMPLES")) : 1200;
    for (size_t i = 0; i < ncalls && i < want; i++) {
        uint64_t ret = calls[ncalls <= want ? i : rng() % ncalls];
        compare(&p, ret, &checked, &decided);
        compare(&p, ret - 1, &checked, &decided);
    }
    uint64_t oracle[300];
    for (size_t i = 0; i < want; i++) {
        uint64_t a = text->addr + rng() % text->size;
        if (i < sizeof(oracle) / sizeof(oracle[0]))
            oracle[i] = a;
        compare(&p, a, &checked, &decided);
    }
    printf("%s: %zu addresses compared (%zu calls in libc, %zu answered from units alone), %zu lazy objects, "
           "%zu outside functions\n", path, checked, ncalls, decided, reopened, fallbacks);
    CHECK(decided > checked / 4, " the units decided too few call sites (%zu of %zu)", decided, checked);
    check_prefetch(&p, text->addr, text->size);
    check_tail_calls(&p);
    check_oracle(path, &p, oracle, sizeof(oracle) / sizeof(oracle[0]));
    free(calls);
    aranges_free(&file_aranges);
    elf_file_close(libc);
    line_object_close(p.lazy);
    line_object_close(p.whole);
    elf_file_close(p.lazy_elf);
    elf_file_close(p.whole_elf);
    free(path);
    return test_end("test_line_lazy");
}
