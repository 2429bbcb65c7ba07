/* ARM EHABI tables against binutils: for every entry `readelf -u` prints
 * (.ARM.exidx and .ARM.extab of armhf objects), exidx_find at the
 * function's start must give the same opcode bytes (or CANTUNWIND), and
 * exidx_execute must move the registers as readelf's reading of those
 * opcodes says ("vsp = vsp + N", "pop {r4, r14}", "vsp = r7", "finish"),
 * on a stack whose every word holds its own address.
 *
 *   test_exidx_readelf [ELF...]   default: the armhf cross libc, ld.so and
 *                                 libstdc++ (libc6-armhf-cross)
 *
 * Sections are read with libelf, not memtrace's ELF reader.  Entries with a
 * generic personality routine (readelf prints no opcodes for them) and VFP
 * pops (readelf does not say which layout) are compared by bytes only when
 * readelf shows them. */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "target/unwind/exidx.h"

static const char *defaults[] = {
    "/usr/arm-linux-gnueabihf/lib/libc.so.6",
    "/usr/arm-linux-gnueabihf/lib/ld-linux-armhf.so.3",
    "/usr/arm-linux-gnueabihf/lib/libstdc++.so.6",
};

static int identity_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
    (void)ctx;
    if (len != 4 || addr > 0xfffffffcu)
        return -1;
    uint32_t v = (uint32_t)addr;
    uint8_t *b = buf;
    for (int i = 0; i < 4; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    return 0;
}

struct entry {
    unsigned long addr;
    bool cantunwind, personality, vfp, unknown;
    uint8_t ops[EXIDX_OPS_MAX];
    size_t n;
    char text[64][80];   /* readelf's reading of each opcode line */
    unsigned ntext;
};

/* Registers after readelf's reading of the opcodes, from the start state
 * of check(): -1 when a description is not understood. */
static int expect(const struct entry *e, struct exidx_regs *r)
{
    uint32_t vsp = r->r[13];
    bool pc_popped = false;
    for (unsigned i = 0; i < e->ntext; i++) {
        const char *t = e->text[i];
        unsigned v;
        if (strcmp(t, "finish") == 0)
            break;
        if (sscanf(t, "vsp = vsp + %u", &v) == 1) {
            vsp += v;
        } else if (sscanf(t, "vsp = vsp - %u", &v) == 1) {
            vsp -= v;
        } else if (sscanf(t, "vsp = r%u", &v) == 1 && v < 16) {
            vsp = r->r[v];
        } else if (strncmp(t, "pop {r", 6) == 0) {
            uint32_t mask = 0;
            for (const char *p = t + 5; (p = strchr(p, 'r')); p++)
                mask |= 1u << (unsigned)atoi(p + 1);
            uint32_t sp_val = 0;
            for (unsigned k = 0; k < 16; k++) {
                if (!(mask & (1u << k)))
                    continue;
                r->r[k] = vsp;
                if (k == 13)
                    sp_val = vsp;
                vsp += 4;
            }
            if (mask & (1u << 13))
                vsp = sp_val;
            if (mask & (1u << 15))
                pc_popped = true;
        } else {
            return -1;
        }
    }
    if (!pc_popped)
        r->r[15] = r->r[14];
    r->r[13] = vsp;
    return 0;
}

static int check(const char *file, const struct entry *e, struct exidx_table *t, int *compared,
                 int *executed)
{
    uint8_t ops[EXIDX_OPS_MAX];
    size_t n = 0;
    uint64_t fn = 0;
    enum exidx_find_result r = exidx_find(t, e->addr, ops, &n, &fn);
    if (e->cantunwind) {
        if (r != EXIDX_CANTUNWIND || fn != e->addr) {
            printf("FAIL %s 0x%lx: readelf says cantunwind, memtrace %d at 0x%llx\n", file,
                   e->addr, r, (unsigned long long)fn);
            return 1;
        }
        (*compared)++;
        return 0;
    }
    if (e->personality)
        return 0;   /* nothing printed to compare with */
    if (r != EXIDX_FOUND || fn != e->addr || n != e->n || memcmp(ops, e->ops, n) != 0) {
        printf("FAIL %s 0x%lx: readelf %zu opcode bytes, memtrace %zu (result %d):", file,
               e->addr, e->n, n, r);
        for (size_t i = 0; i < n; i++)
            printf(" %02x", ops[i]);
        printf("\n");
        return 1;
    }
    (*compared)++;
    if (e->vfp || e->unknown)
        return 0;
    struct exidx_regs start;
    for (unsigned k = 0; k < 16; k++)
        start.r[k] = 0x10000u * (k + 1);
    start.r[13] = 0x800000u;
    start.valid = 0xffff;
    struct exidx_regs want = start, got = start;
    if (expect(e, &want) < 0)
        return 0;
    bool full;
    if (exidx_execute(ops, n, &got, identity_read, NULL, false, &full) != 0 ||
        memcmp(want.r, got.r, sizeof(want.r)) != 0) {
        printf("FAIL %s 0x%lx: registers after the opcodes differ from readelf's reading\n",
               file, e->addr);
        for (unsigned k = 0; k < 16; k++)
            if (want.r[k] != got.r[k])
                printf("     r%u: readelf 0x%x, memtrace 0x%x\n", k, want.r[k], got.r[k]);
        return 1;
    }
    (*executed)++;
    return 0;
}

static int test_file(const char *path, int *entries)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    GElf_Ehdr eh;
    if (!elf || !gelf_getehdr(elf, &eh) || eh.e_machine != EM_ARM) {
        printf("FAIL %s: not an ARM ELF file\n", path);
        return 1;
    }
    struct exidx_sources src;
    memset(&src, 0, sizeof(src));
    src.big_endian = eh.e_ident[EI_DATA] == ELFDATA2MSB;
    size_t shstrndx;
    elf_getshdrstrndx(elf, &shstrndx);
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
        GElf_Shdr sh;
        gelf_getshdr(scn, &sh);
        const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
        Elf_Data *d = name ? elf_getdata(scn, NULL) : NULL;
        if (!d)
            continue;
        if (!strcmp(name, ".ARM.exidx")) {
            src.exidx = d->d_buf;
            src.exidx_size = d->d_size;
            src.exidx_vaddr = sh.sh_addr;
        } else if (!strcmp(name, ".ARM.extab")) {
            src.extab = d->d_buf;
            src.extab_size = d->d_size;
            src.extab_vaddr = sh.sh_addr;
        }
    }
    struct exidx_table *t = exidx_table_new(&src);
    if (!t) {
        printf("FAIL %s: no .ARM.exidx table\n", path);
        return 1;
    }
    char cmd[4200];
    snprintf(cmd, sizeof(cmd), "readelf -u '%s'", path);
    FILE *p = popen(cmd, "r");
    if (!p)
        return 1;
    static struct entry e;
    bool have = false;
    int bad = 0, compared = 0, executed = 0;
    char line[512];
    while (fgets(line, sizeof(line), p)) {
        line[strcspn(line, "\n")] = '\0';
        unsigned long addr;
        if (sscanf(line, "0x%lx:", &addr) == 1) {
            if (have)
                bad += check(path, &e, t, &compared, &executed);
            memset(&e, 0, sizeof(e));
            e.addr = addr;
            e.cantunwind = strstr(line, "[cantunwind]") != NULL;
            have = true;
            continue;
        }
        if (!have)
            continue;
        if (strstr(line, "Personality routine")) {
            e.personality = true;
            continue;
        }
        const char *s = line;
        while (*s == ' ')
            s++;
        if (strncmp(s, "0x", 2) != 0)
            continue;
        unsigned byte;
        int used;
        while (sscanf(s, "0x%2x%n", &byte, &used) == 1 && e.n < sizeof(e.ops)) {
            e.ops[e.n++] = (uint8_t)byte;
            s += used;
            while (*s == ' ')
                s++;
        }
        if (e.ntext < 64) {
            size_t k = strlen(s) < sizeof(e.text[0]) - 1 ? strlen(s) : sizeof(e.text[0]) - 1;
            memcpy(e.text[e.ntext], s, k);
            e.text[e.ntext++][k] = '\0';
        }
        if (strstr(s, "{D") || strstr(s, "{d"))
            e.vfp = true;
    }
    if (have)
        bad += check(path, &e, t, &compared, &executed);
    pclose(p);
    printf("%s: %d entries equal readelf's, %d executed as readelf reads them, %d differ\n",
           path, compared, executed, bad);
    *entries += compared;
    exidx_table_free(t);
    elf_end(elf);
    close(fd);
    return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
    elf_version(EV_CURRENT);
    int bad = 0, files = 0, entries = 0;
    if (argc > 1) {
        for (int i = 1; i < argc; i++) {
            int rc = test_file(argv[i], &entries);
            if (rc < 0) {
                printf("FAIL cannot open %s\n", argv[i]);
                bad++;
            } else {
                bad += rc;
                files++;
            }
        }
    } else {
        for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++) {
            int rc = test_file(defaults[i], &entries);
            if (rc >= 0) {
                bad += rc;
                files++;
            }
        }
        if (!files) {
            printf("no armhf libraries (libc6-armhf-cross) to read\n");
            return 77;
        }
    }
    printf("%d files, %d entries compared, %d files differ\n", files, entries, bad);
    return bad || entries == 0 ? 1 : 0;
}
