/* CFI rows against binutils: for every row readelf --debug-dump=frames-interp
 * prints (each FDE of .eh_frame and .debug_frame), cfi_find_row at the row's
 * first and last address must give the same CFA and register rules.
 *
 *   test_cfi_readelf [ELF...]     default: this program, libc, libstdc++, ld.so
 *
 * Sections are extracted with libelf (the oracle side does not use
 * memtrace's own ELF reader).  32-bit and big-endian files work too: the
 * register names come from the file's machine, not the host. */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "target/dwarf/cfi.h"

struct loaded {
    int fd;
    Elf *elf;
    unsigned machine;
    struct cfi_table *eh;      /* .eh_frame_hdr + .eh_frame */
    struct cfi_table *debug;   /* .debug_frame alone */
};

static int load(const char *path, struct loaded *l)
{
    memset(l, 0, sizeof(*l));
    l->fd = open(path, O_RDONLY);
    if (l->fd < 0)
        return -1;
    l->elf = elf_begin(l->fd, ELF_C_READ, NULL);
    GElf_Ehdr eh;
    if (!l->elf || !gelf_getehdr(l->elf, &eh))
        return -1;
    l->machine = eh.e_machine;
    struct cfi_sources src;
    memset(&src, 0, sizeof(src));
    src.big_endian = eh.e_ident[EI_DATA] == ELFDATA2MSB;
    src.addr_size = eh.e_ident[EI_CLASS] == ELFCLASS64 ? 8 : 4;
    size_t shstrndx;
    elf_getshdrstrndx(l->elf, &shstrndx);
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(l->elf, scn));) {
        GElf_Shdr sh;
        gelf_getshdr(scn, &sh);
        const char *name = elf_strptr(l->elf, shstrndx, sh.sh_name);
        if (!name || sh.sh_type == SHT_NOBITS)
            continue;
        if (!strcmp(name, ".text"))
            src.text_vaddr = sh.sh_addr;
        if (!strcmp(name, ".got.plt") || (!strcmp(name, ".got") && !src.data_vaddr))
            src.data_vaddr = sh.sh_addr;
        if (strcmp(name, ".eh_frame_hdr") && strcmp(name, ".eh_frame") &&
            strcmp(name, ".debug_frame"))
            continue;
        if (sh.sh_flags & SHF_COMPRESSED)
            elf_compress(scn, 0, 0);
        Elf_Data *d = elf_getdata(scn, NULL);
        if (!d || !d->d_buf)
            continue;
        if (!strcmp(name, ".eh_frame_hdr")) {
            src.eh_frame_hdr = d->d_buf;
            src.eh_frame_hdr_size = d->d_size;
            src.eh_frame_hdr_vaddr = sh.sh_addr;
        } else if (!strcmp(name, ".eh_frame")) {
            src.eh_frame = d->d_buf;
            src.eh_frame_size = d->d_size;
            src.eh_frame_vaddr = sh.sh_addr;
        } else {
            src.debug_frame = d->d_buf;
            src.debug_frame_size = d->d_size;
        }
    }
    struct cfi_sources eh_only = src, debug_only = src;
    eh_only.debug_frame = NULL;
    eh_only.debug_frame_size = 0;
    debug_only.eh_frame = debug_only.eh_frame_hdr = NULL;
    debug_only.eh_frame_size = debug_only.eh_frame_hdr_size = 0;
    l->eh = cfi_table_new(&eh_only);
    l->debug = cfi_table_new(&debug_only);
    return l->eh && l->debug ? 0 : -1;
}

/* readelf's register names (binutils dwarf.c), by ELF machine. */
static int regno(unsigned machine, const char *name)
{
    static const char *const x86_64[] = { "rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp",
        "rsp", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip" };
    static const char *const i386_names[] = { "eax", "ecx", "edx", "ebx", "esp", "ebp", "esi",
        "edi", "eip" };
    const char *const *names = NULL;
    int n = 0;
    char buf[16];
    if (machine == EM_X86_64) {
        names = x86_64;
        n = 17;
    } else if (machine == EM_386) {
        names = i386_names;
        n = 9;
    } else if (machine == EM_AARCH64 || machine == EM_ARM) {
        if (machine == EM_AARCH64 && !strcmp(name, "sp"))
            return 31;
        if (machine == EM_ARM && !strcmp(name, "sp"))
            return 13;
        if (machine == EM_ARM && !strcmp(name, "lr"))
            return 14;
        if (machine == EM_ARM && !strcmp(name, "fp"))
            return 11;
        for (int i = 0; i < 31; i++) {
            snprintf(buf, sizeof(buf), "%c%d", machine == EM_ARM ? 'r' : 'x', i);
            if (!strcmp(name, buf))
                return i;
        }
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], name))
            return i;
    /* readelf's fallback for machines without a name table. */
    int r;
    char tail;
    if (!names && sscanf(name, "r%d%c", &r, &tail) == 1)
        return r;
    return -1;
}

/* One register's rule as readelf prints it. */
static void rule_text(unsigned machine, const struct cfi_rule *r, char *out, size_t n)
{
    switch (r->kind) {
    case CFI_RULE_UNSPECIFIED:
    case CFI_RULE_UNDEFINED: snprintf(out, n, "u"); break;
    case CFI_RULE_SAME_VALUE: snprintf(out, n, "s"); break;
    case CFI_RULE_OFFSET: snprintf(out, n, "c%+d", (int)r->u.offset); break;
    case CFI_RULE_VAL_OFFSET: snprintf(out, n, "v%+d", (int)r->u.offset); break;
    case CFI_RULE_EXPRESSION: snprintf(out, n, "exp"); break;
    case CFI_RULE_VAL_EXPRESSION: snprintf(out, n, "vexp"); break;
    case CFI_RULE_REGISTER: {
        /* readelf names the register; compare by number. */
        snprintf(out, n, "#%u", r->u.reg);
        break;
    }
    default: snprintf(out, n, "?");
    }
    (void)machine;
}

struct fde_rows {
    bool active;
    bool debug;
    uint64_t end;
    char cols[64][8];
    int ncols;
    /* The pending row: checked at its first address now, and at its last
     * address when the next row (or the FDE end) is known. */
    bool pending;
    uint64_t loc;
    char line[4096];
};

static int checked, failed;

static int check_row(struct loaded *l, struct fde_rows *f, uint64_t pc, const char *line)
{
    char copy[4096];
    snprintf(copy, sizeof(copy), "%s", line);
    char *save = NULL;
    strtok_r(copy, " \t", &save);   /* LOC */
    const char *cfa_text = strtok_r(NULL, " \t", &save);
    if (!cfa_text)
        return 0;
    struct cfi_row row;
    struct cfi_table *t = f->debug ? l->debug : l->eh;
    checked++;
    if (cfi_find_row(t, pc, &row) != 0) {
        printf("  0x%llx: no row, readelf: %s\n", (unsigned long long)pc, line);
        return -1;
    }
    char mine[64];
    if (row.cfa_kind == CFI_CFA_EXPRESSION) {
        snprintf(mine, sizeof(mine), "exp");
    } else {
        char want_reg[32];
        int off;
        if (sscanf(cfa_text, "%31[a-z0-9]%d", want_reg, &off) == 2 &&
            regno(l->machine, want_reg) == (int)row.cfa_reg && off == (int)row.cfa_offset)
            snprintf(mine, sizeof(mine), "%s", cfa_text);
        else
            snprintf(mine, sizeof(mine), "r%u%+d", row.cfa_reg, (int)row.cfa_offset);
    }
    int bad = strcmp(mine, cfa_text) != 0;
    if (bad)
        printf("  0x%llx: CFA %s, readelf %s\n", (unsigned long long)pc, mine, cfa_text);
    for (int c = 0; c < f->ncols; c++) {
        const char *want = strtok_r(NULL, " \t", &save);
        if (!want)
            break;
        /* A register rule prints as "r9 (r9)": the DWARF number, then the name. */
        unsigned want_reg = 0;
        bool is_reg = sscanf(want, "r%u", &want_reg) == 1 && save && *save == '(';
        if (is_reg)
            strtok_r(NULL, " \t", &save);
        int r = !strcmp(f->cols[c], "ra") ? (int)row.ra_column : regno(l->machine, f->cols[c]);
        if (r < 0 || r >= CFI_NREGS)
            continue;
        char got[32];
        rule_text(l->machine, &row.regs[r], got, sizeof(got));
        if (got[0] == '#' && is_reg && want_reg == row.regs[r].u.reg)
            continue;
        /* Saved in a register this build does not track (x86_64's r9 read
         * by the i386 build): the table says undefined, by design. */
        if (is_reg && want_reg >= CFI_NREGS && !strcmp(got, "u"))
            continue;
        if (strcmp(got, want) != 0) {
            printf("  0x%llx: %s is %s, readelf %s\n", (unsigned long long)pc, f->cols[c],
                   got, want);
            bad = 1;
        }
    }
    if (bad) {
        printf("    readelf row: %s\n", line);
        failed++;
    }
    return bad ? -1 : 0;
}

static void flush_pending(struct loaded *l, struct fde_rows *f, uint64_t next_loc)
{
    if (f->pending && next_loc > f->loc + 1)
        check_row(l, f, next_loc - 1, f->line);
    f->pending = false;
}

static int compare_file(const char *path)
{
    struct loaded l;
    if (load(path, &l) != 0) {
        printf("%s: cannot load\n", path);
        failed++;
        cfi_table_free(l.eh);
        cfi_table_free(l.debug);
        if (l.elf)
            elf_end(l.elf);
        if (l.fd >= 0)
            close(l.fd);
        return -1;
    }
    char cmd[1200];
    snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames-interp '%s' 2>/dev/null", path);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    int before_checked = checked, before_failed = failed;
    struct fde_rows f;
    memset(&f, 0, sizeof(f));
    bool in_debug = false;
    char line[4096];
    while (fgets(line, sizeof(line), p)) {
        line[strcspn(line, "\n")] = '\0';
        unsigned long long a, b;
        if (strstr(line, "Contents of the .debug_frame section")) {
            flush_pending(&l, &f, f.end);
            f.active = false;
            in_debug = true;
        } else if (strstr(line, "Contents of the .eh_frame section")) {
            flush_pending(&l, &f, f.end);
            f.active = false;
            in_debug = false;
        } else if (strstr(line, " FDE ") && strstr(line, "pc=")) {
            flush_pending(&l, &f, f.end);
            if (sscanf(strstr(line, "pc=") + 3, "%llx..%llx", &a, &b) == 2) {
                f.active = true;
                f.debug = in_debug;
                f.end = b;
                f.ncols = 0;
            }
        } else if (strstr(line, " CIE") || strstr(line, "ZERO terminator")) {
            flush_pending(&l, &f, f.end);
            f.active = false;
        } else if (f.active && strncmp(line, "   LOC", 6) == 0) {
            char *save = NULL;
            char *tok = strtok_r(line, " ", &save);   /* LOC */
            tok = strtok_r(NULL, " ", &save);         /* CFA */
            f.ncols = 0;
            while ((tok = strtok_r(NULL, " ", &save)) && f.ncols < 64)
                snprintf(f.cols[f.ncols++], sizeof(f.cols[0]), "%s", tok);
        } else if (f.active && sscanf(line, "%llx ", &a) == 1 && line[0] != ' ') {
            /* readelf prints rows that start at or past the FDE's end (the
             * .plt FDE does): no pc of this FDE has them. */
            if (a >= f.end)
                a = f.end;
            flush_pending(&l, &f, a);
            if (a == f.end)
                continue;
            check_row(&l, &f, a, line);
            f.pending = true;
            f.loc = a;
            snprintf(f.line, sizeof(f.line), "%s", line);
        }
        if (failed - before_failed > 20)
            break;
    }
    flush_pending(&l, &f, f.end);
    pclose(p);
    struct cfi_stats st;
    cfi_table_stats(l.eh, &st);
    printf("%s: %d rows checked, %d differ (eh_frame_hdr %s)\n", path, checked - before_checked,
           failed - before_failed, st.used_eh_frame_hdr ? "used" : "absent or unusable");
    cfi_table_free(l.eh);
    cfi_table_free(l.debug);
    elf_end(l.elf);
    close(l.fd);
    return 0;
}

int main(int argc, char **argv)
{
    elf_version(EV_CURRENT);
    if (system("readelf --version >/dev/null 2>&1") != 0) {
        printf("missing tool: readelf (Debian package binutils, installed by tools/install-deps.sh)\n");
        return 77;
    }
    const char *defaults[] = {
        "/proc/self/exe", "/lib/x86_64-linux-gnu/libc.so.6",
        "/lib/x86_64-linux-gnu/libstdc++.so.6", "/lib64/ld-linux-x86-64.so.2",
        "/lib/aarch64-linux-gnu/libc.so.6", "/lib/i386-linux-gnu/libc.so.6",
    };
    char self[4096];
    int files = 0;
    if (argc > 1) {
        for (int i = 1; i < argc; i++) {
            compare_file(argv[i]);
            files++;
        }
    } else {
        for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++) {
            const char *path = defaults[i];
            if (i == 0) {
                ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
                if (n <= 0)
                    continue;
                self[n] = '\0';
                path = self;
            }
            if (access(path, R_OK) != 0)
                continue;
            compare_file(path);
            files++;
        }
    }
    printf("%d files, %d rows checked, %d differ\n", files, checked, failed);
    return failed == 0 && checked > 0 ? 0 : 1;
}
