/* The line-table reader against elfutils: for each ELF file (arguments, or
 * by default this test binary and libc's build-id debug file) sample
 * addresses from the line programs themselves (row starts, one before,
 * one after) and at random in .text, resolve them with line_index and with
 * `eu-addr2line -e FILE`, and require the same file:line wherever
 * eu-addr2line knows one.  Sections are loaded with libelf, independently of
 * memtrace's own ELF reader.  Exit 77 when eu-addr2line is missing. */
#include <gelf.h>
#include <libelf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "target/dwarf/info_inline.h"
#include "target/dwarf/line_header.h"
#include "target/dwarf/line_index.h"
#include "target/dwarf/line_program.h"

struct loaded {
    int fd;
    Elf *elf;
    struct dwarf_sections secs;
    uint64_t text_lo, text_hi;
};

static struct dwarf_span *span_for(struct dwarf_sections *s, const char *name)
{
    static const struct { const char *name; size_t off; } map[] = {
        { ".debug_info", offsetof(struct dwarf_sections, info) },
        { ".debug_abbrev", offsetof(struct dwarf_sections, abbrev) },
        { ".debug_line", offsetof(struct dwarf_sections, line) },
        { ".debug_line_str", offsetof(struct dwarf_sections, line_str) },
        { ".debug_str", offsetof(struct dwarf_sections, str) },
        { ".debug_str_offsets", offsetof(struct dwarf_sections, str_offsets) },
        { ".debug_addr", offsetof(struct dwarf_sections, addr) },
        { ".debug_ranges", offsetof(struct dwarf_sections, ranges) },
        { ".debug_rnglists", offsetof(struct dwarf_sections, rnglists) },
    };
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (strcmp(map[i].name, name) == 0)
            return (struct dwarf_span *)((char *)s + map[i].off);
    return NULL;
}

static bool load(const char *path, struct loaded *l)
{
    memset(l, 0, sizeof(*l));
    l->fd = open(path, O_RDONLY);
    if (l->fd < 0)
        return false;
    l->elf = elf_begin(l->fd, ELF_C_READ, NULL);
    size_t shstrndx;
    if (!l->elf || elf_getshdrstrndx(l->elf, &shstrndx) != 0)
        return false;
    l->secs.big_endian = elf_getident(l->elf, NULL)[EI_DATA] == ELFDATA2MSB;
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(l->elf, scn))) {
        GElf_Shdr sh;
        gelf_getshdr(scn, &sh);
        const char *name = elf_strptr(l->elf, shstrndx, sh.sh_name);
        if (!name)
            continue;
        if (strcmp(name, ".text") == 0) {
            l->text_lo = sh.sh_addr;
            l->text_hi = sh.sh_addr + sh.sh_size;
        }
        struct dwarf_span *span = span_for(&l->secs, name);
        if (!span || sh.sh_type == SHT_NOBITS)
            continue;
        if (sh.sh_flags & SHF_COMPRESSED)
            elf_compress(scn, 0, 0);
        Elf_Data *d = elf_getdata(scn, NULL);
        if (d) {
            span->data = d->d_buf;
            span->size = d->d_size;
        }
    }
    return l->secs.line.data != NULL;
}

/* Addresses to try: rows of every line program, and random .text ones. */
struct samples {
    uint64_t *addr;
    size_t n, cap;
};

static void add_sample(struct samples *s, uint64_t a)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 1024;
        s->addr = realloc(s->addr, s->cap * sizeof(*s->addr));
    }
    s->addr[s->n++] = a;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void sample(const struct loaded *l, size_t want, struct samples *out)
{
    struct samples rows = { 0 };
    uint64_t off = 0;
    while (off < l->secs.line.size) {
        struct line_header h;
        bool ok = line_header_parse(&l->secs, off, 8, &h);
        if (ok) {
            struct line_program p;
            struct line_row row;
            line_program_start(&p, &l->secs, &h, h.program_offset);
            while (line_program_next(&p, &row))
                if (row.address != 0)
                    add_sample(&rows, row.address);
        }
        if (h.end <= off)
            break;
        off = h.end;
    }
    for (size_t i = 0; i < want && rows.n; i++) {
        uint64_t a = rows.addr[rng() % rows.n];
        add_sample(out, a + (uint64_t)(int64_t)((int)(rng() % 3) - 1));
    }
    if (l->text_hi > l->text_lo)
        for (size_t i = 0; i < want / 4; i++)
            add_sample(out, l->text_lo + rng() % (l->text_hi - l->text_lo));
    free(rows.addr);
}

/* An address past the end of every line sequence has no line for gdb,
 * binutils and llvm-addr2line (elfutils stretches some sequences). */
static bool binutils_says_no_line(const char *path, uint64_t a)
{
    char cmd[4200];
    if ((size_t)snprintf(cmd, sizeof(cmd), "addr2line -e '%s' 0x%" PRIx64, path, a) >= sizeof(cmd))
        return false;
    FILE *f = popen(cmd, "r");
    char line[2048] = "";
    bool none = f && fgets(line, sizeof(line), f);
    if (none) {
        /* "??:0", or "FILE:?" (the unit's file, no line). */
        line[strcspn(line, "\n")] = 0;
        size_t n = strlen(line);
        none = strncmp(line, "??:", 3) == 0 || (n >= 2 && strcmp(line + n - 2, ":?") == 0);
    }
    if (f)
        pclose(f);
    return none;
}

/* eu-addr2line prints file:line:column, binutils file:line (discriminator
 * N); compare file:line only. */
static void strip_column(char *s)
{
    s[strcspn(s, "\n")] = 0;
    char *disc = strstr(s, " (discriminator ");
    if (disc)
        *disc = 0;
    char *last = strrchr(s, ':');
    if (!last || last == s)
        return;
    char *prev = last - 1;
    while (prev > s && *prev != ':')
        prev--;
    if (*prev != ':')
        return;
    if (strspn(last + 1, "0123456789") == strlen(last + 1) && strspn(prev + 1, "0123456789") == (size_t)(last - prev - 1))
        *last = 0;
}

/* eu-addr2line 0.188 cannot read clang 14's DWARF 5 units (addrx/rnglistx
 * in the CU DIE); binutils addr2line can, so it judges those files. */
static const char *oracle_tool = "eu-addr2line";

static int check_file(const char *path, size_t want)
{
    struct loaded l;
    if (!load(path, &l)) {
        printf("%s: cannot load .debug_line with libelf\n", path);
        return 1;
    }
    /* As line_object does: DWARF 5 line tables are indexed without
     * .debug_info; then the index through the CUs must agree with it. */
    struct line_index *idx_cu = line_index_build(&l.secs);
    struct line_index *idx = idx_cu;
    bool needs_str;
    if (line_section_self_contained(&l.secs, &needs_str)) {
        struct dwarf_sections lean = l.secs;
        memset(&lean.info, 0, sizeof(lean.info));
        memset(&lean.abbrev, 0, sizeof(lean.abbrev));
        idx = line_index_build(&lean);
    }
    size_t cu_disagree = 0;
    /* Function names where DWARF has one (innermost inlined function or
     * subprogram); elsewhere the symbol table answers, not tested here. */
    struct inline_index *functions = inline_index_build(&l.secs);
    size_t fn_agree = 0, fn_bad = 0;
    struct samples s = { 0 };
    sample(&l, want, &s);

    size_t agree = 0, mismatch = 0, eu_unknown = 0, both_unknown = 0, past_end = 0;
    const size_t batch = 300;
    for (size_t base = 0; base < s.n; base += batch) {
        size_t n = s.n - base < batch ? s.n - base : batch;
        size_t cmdlen = strlen(path) + 64 + n * 20;
        char *cmd = malloc(cmdlen);
        size_t used = (size_t)snprintf(cmd, cmdlen, "%s -f -e '%s'", oracle_tool, path);
        for (size_t i = 0; i < n; i++)
            used += (size_t)snprintf(cmd + used, cmdlen - used, " 0x%" PRIx64, s.addr[base + i]);
        FILE *f = popen(cmd, "r");
        char oracle[2048];
        for (size_t i = 0; i < n; i++) {
            char oracle_fn[2048];
            if (!f || !fgets(oracle_fn, sizeof(oracle_fn), f) || !fgets(oracle, sizeof(oracle), f)) {
                printf("%s: eu-addr2line gave too few lines\n", path);
                return 1;
            }
            oracle_fn[strcspn(oracle_fn, "\n")] = 0;
            char *inlined_at = strstr(oracle_fn, " inlined at ");
            if (inlined_at)
                *inlined_at = 0;
            strip_column(oracle);
            uint64_t a = s.addr[base + i];
            const char *fn = inline_index_lookup(functions, a, 0);
            if (fn && strcmp(oracle_tool, "eu-addr2line") == 0) {
                if (strcmp(fn, oracle_fn) == 0) {
                    fn_agree++;
                } else if (fn_bad++ < 5) {
                    printf("  FUNCTION 0x%" PRIx64 ": %s says %s, ours %s\n", a, oracle_tool, oracle_fn, fn);
                }
            }
            struct line_location loc;
            char ours[LINE_PATH_MAX + 32] = "??:0";
            if (line_index_lookup(idx, a, &loc))
                snprintf(ours, sizeof(ours), "%s:%u", loc.file[0] ? loc.file : "??", loc.line);
            if (idx != idx_cu) {
                char via_cu[LINE_PATH_MAX + 32] = "??:0";
                if (line_index_lookup(idx_cu, a, &loc))
                    snprintf(via_cu, sizeof(via_cu), "%s:%u", loc.file[0] ? loc.file : "??", loc.line);
                if (strcmp(via_cu, ours) != 0 && cu_disagree++ < 5)
                    printf("  0x%" PRIx64 ": without .debug_info %s, through the CUs %s\n", a, ours, via_cu);
            }
            size_t olen = strlen(oracle);
            bool oracle_knows = strncmp(oracle, "??:", 3) != 0 &&
                                !(olen >= 2 && (strcmp(oracle + olen - 2, ":0") == 0 || strcmp(oracle + olen - 2, ":?") == 0));
            if (!oracle_knows) {
                eu_unknown++;
                if (strcmp(ours, "??:0") == 0)
                    both_unknown++;
                else if (eu_unknown - both_unknown <= 3)
                    printf("  (0x%" PRIx64 ": %s says %s, ours %s)\n", a, oracle_tool, oracle, ours);
                continue;
            }
            if (strcmp(oracle, ours) == 0) {
                agree++;
            } else if (strcmp(ours, "??:0") == 0 && binutils_says_no_line(path, a)) {
                past_end++; /* elfutils stretches some sequences; gdb and binutils do not */
            } else {
                if (mismatch < 10)
                    printf("  MISMATCH 0x%" PRIx64 ": eu-addr2line %s, ours %s\n", a, oracle, ours);
                mismatch++;
            }
        }
        if (f)
            pclose(f);
        free(cmd);
    }
    printf("%s [%s]: %zu sequences, %zu units, index %zu bytes; %zu addresses: %zu agree, %zu mismatch, "
           "%zu unknown to the oracle (%zu unknown to us too), %zu past a sequence end as binutils\n",
           path, oracle_tool, line_index_sequence_count(idx), line_index_unit_count(idx), line_index_memory(idx), s.n,
           agree, mismatch, eu_unknown, both_unknown, past_end);
    if (idx != idx_cu)
        printf("  DWARF 5 index without .debug_info: %zu differences from the CU-based one\n", cu_disagree);
    printf("  function names from DWARF: %zu agree, %zu differ (%zu ranges indexed)\n", fn_agree, fn_bad,
           inline_index_range_count(functions));
    inline_index_free(functions);
    if (idx != idx_cu)
        line_index_free(idx_cu);
    line_index_free(idx);
    free(s.addr);
    elf_end(l.elf);
    close(l.fd);
    return mismatch || cu_disagree || fn_bad || agree == 0 ? 1 : 0;
}

static char *libc_debug_file(void)
{
    const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
    int fd = open(libc, O_RDONLY);
    if (fd < 0)
        return NULL;
    Elf *e = elf_begin(fd, ELF_C_READ, NULL);
    char *result = NULL;
    size_t shstrndx;
    Elf_Scn *scn = NULL;
    if (e && elf_getshdrstrndx(e, &shstrndx) == 0) {
        while ((scn = elf_nextscn(e, scn))) {
            GElf_Shdr sh;
            gelf_getshdr(scn, &sh);
            if (sh.sh_type != SHT_NOTE)
                continue;
            Elf_Data *d = elf_getdata(scn, NULL);
            GElf_Nhdr nh;
            size_t off = 0, name_off, desc_off;
            while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
                if (nh.n_type != NT_GNU_BUILD_ID || nh.n_descsz < 2)
                    continue;
                const uint8_t *id = (const uint8_t *)d->d_buf + desc_off;
                char path[256];
                int n = snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%02x/", id[0]);
                for (size_t i = 1; i < nh.n_descsz; i++)
                    n += snprintf(path + n, sizeof(path) - (size_t)n, "%02x", id[i]);
                snprintf(path + n, sizeof(path) - (size_t)n, ".debug");
                if (access(path, R_OK) == 0)
                    result = strdup(path);
            }
        }
    }
    if (e)
        elf_end(e);
    close(fd);
    return result;
}

int main(int argc, char **argv)
{
    elf_version(EV_CURRENT);
    if (system("eu-addr2line --version >/dev/null 2>&1") != 0) {
        printf("missing tool: eu-addr2line (Debian package elfutils, installed by tools/install-deps.sh)\n");
        return 77;
    }
    size_t want = getenv("MT_LINE_SAMPLES") ? (size_t)atol(getenv("MT_LINE_SAMPLES")) : 2000;
    int failed = 0;
    if (argc > 1) {
        for (int i = 1; i < argc; i++) {
            if (strncmp(argv[i], "--oracle=", 9) == 0)
                oracle_tool = argv[i] + 9;
            else
                failed |= check_file(argv[i], want);
        }
    } else {
        /* eu-addr2line must see this file, not its own /proc/self/exe. */
        char *self = realpath("/proc/self/exe", NULL);
        failed |= check_file(self ? self : "/proc/self/exe", want);
        free(self);
        char *libc = libc_debug_file();
        if (libc)
            failed |= check_file(libc, want);
        else
            printf("libc6-dbg debug file not found: libc not checked\n");
        free(libc);
    }
    printf(failed ? "FAILED\n" : "all agree\n");
    return failed;
}
