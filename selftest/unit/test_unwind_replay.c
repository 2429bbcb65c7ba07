/* Offline unwinding of gdb snapshots: loads every mapped module's CFI with
 * libelf (the oracle side must not depend on memtrace's own ELF reader),
 * unwinds from the snapshot's registers and stack bytes with
 * target/unwind, and compares every frame with gdb's.
 *
 *   test_unwind_replay SNAPSHOT.txt...
 *
 * The snapshot format is described in selftest/tests/unwind_capture.py,
 * which writes it; selftest/tests/unwind_gdb.sh drives both.  Without
 * arguments there is nothing to replay and the test is skipped. */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "target/dwarf/cfi.h"
#include "target/unwind/unwind.h"

#define MAX_ITEMS 512
#define MAX_FRAMES 256

struct memblock {
    uint64_t addr;
    size_t len;
    uint8_t *bytes;
};

struct mapping {
    uint64_t start, end, offset;
    int module;
};

struct module {
    char path[512];
    int fd;
    Elf *elf;
    struct cfi_table *table;
};

struct snapshot {
    unsigned addr_size;
    bool big_endian;
    struct unwind_regs regs;
    struct memblock mem[8];
    int nmem;
    struct mapping maps[MAX_ITEMS];
    int nmaps;
    uint64_t frames[MAX_FRAMES];
    int nframes;
    /* Per snapshot: a library loads elsewhere in another program. */
    bool bias_known[MAX_ITEMS];
    uint64_t bias[MAX_ITEMS];
};

/* Modules stay loaded across snapshots: the same libraries recur. */
static struct module modules[MAX_ITEMS];
static int nmodules;

static int module_for_path(const char *path)
{
    for (int i = 0; i < nmodules; i++)
        if (strcmp(modules[i].path, path) == 0)
            return i;
    if (nmodules == MAX_ITEMS)
        return -1;
    struct module *m = &modules[nmodules];
    memset(m, 0, sizeof(*m));
    snprintf(m->path, sizeof(m->path), "%s", path);
    m->fd = open(path, O_RDONLY);
    if (m->fd >= 0)
        m->elf = elf_begin(m->fd, ELF_C_READ, NULL);
    if (m->elf && elf_kind(m->elf) != ELF_K_ELF) {
        elf_end(m->elf);
        m->elf = NULL;
    }
    if (m->elf) {
        struct cfi_sources src;
        memset(&src, 0, sizeof(src));
        GElf_Ehdr eh;
        gelf_getehdr(m->elf, &eh);
        src.big_endian = eh.e_ident[EI_DATA] == ELFDATA2MSB;
        src.addr_size = eh.e_ident[EI_CLASS] == ELFCLASS64 ? 8 : 4;
        size_t shstrndx;
        elf_getshdrstrndx(m->elf, &shstrndx);
        for (Elf_Scn *scn = NULL; (scn = elf_nextscn(m->elf, scn));) {
            GElf_Shdr sh;
            gelf_getshdr(scn, &sh);
            const char *name = elf_strptr(m->elf, shstrndx, sh.sh_name);
            if (!name || sh.sh_type == SHT_NOBITS)
                continue;
            bool want = !strcmp(name, ".eh_frame_hdr") || !strcmp(name, ".eh_frame") ||
                        !strcmp(name, ".debug_frame") || !strcmp(name, ".text") ||
                        !strcmp(name, ".got");
            if (!want)
                continue;
            if (sh.sh_flags & SHF_COMPRESSED)
                elf_compress(scn, 0, 0);
            Elf_Data *d = elf_getdata(scn, NULL);
            if (!strcmp(name, ".text")) {
                src.text_vaddr = sh.sh_addr;
            } else if (!strcmp(name, ".got")) {
                src.data_vaddr = sh.sh_addr;
            } else if (d && d->d_buf) {
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
        }
        m->table = cfi_table_new(&src);
    }
    return nmodules++;
}

/* The load bias from one mapping: the PT_LOAD that starts inside it. */
static void learn_bias(struct snapshot *s, const struct mapping *map)
{
    const struct module *m = &modules[map->module];
    if (s->bias_known[map->module] || !m->elf)
        return;
    size_t n;
    if (elf_getphdrnum(m->elf, &n) != 0)
        return;
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(m->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
            continue;
        if (ph.p_offset >= map->offset && ph.p_offset < map->offset + (map->end - map->start)) {
            s->bias[map->module] = map->start + (ph.p_offset - map->offset) - ph.p_vaddr;
            s->bias_known[map->module] = true;
            return;
        }
    }
}

static struct cfi_table *find_table(void *ctx, uint64_t pc, uint64_t *bias)
{
    const struct snapshot *s = ctx;
    for (int i = 0; i < s->nmaps; i++) {
        const struct mapping *map = &s->maps[i];
        if (pc < map->start || pc >= map->end || map->module < 0)
            continue;
        const struct module *m = &modules[map->module];
        if (!m->table || !s->bias_known[map->module])
            return NULL;
        *bias = s->bias[map->module];
        return m->table;
    }
    return NULL;
}

static int read_mem(void *ctx, uint64_t addr, void *buf, size_t len)
{
    const struct snapshot *s = ctx;
    for (int i = 0; i < s->nmem; i++) {
        const struct memblock *b = &s->mem[i];
        if (addr >= b->addr && addr - b->addr <= b->len && len <= b->len - (addr - b->addr)) {
            memcpy(buf, b->bytes + (addr - b->addr), len);
            return 0;
        }
    }
    return -1;
}

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc(n > 0 ? (size_t)n : 1);
    if (p && n > 0 && fread(p, 1, (size_t)n, f) != (size_t)n) {
        free(p);
        p = NULL;
    }
    fclose(f);
    *len = n > 0 ? (size_t)n : 0;
    return p;
}

static int load_snapshot(const char *path, struct snapshot *s)
{
    memset(s, 0, sizeof(*s));
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
        strcpy(dir, "./");

    char line[2048];
    int version = 0;
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = '\0';
        unsigned long long a, b, c;
        char word[1024];
        int i;
        if (sscanf(line, "memtrace-unwind-snapshot %d", &version) == 1) {
        } else if (sscanf(line, "addr_size %u", &s->addr_size) == 1) {
        } else if (sscanf(line, "endian %63s", word) == 1) {
            s->big_endian = strcmp(word, "big") == 0;
        } else if (sscanf(line, "reg %d %llx", &i, &a) == 2) {
            if (i >= 0 && i < ARCH_DWARF_NREGS) {
                s->regs.r[i] = a;
                s->regs.valid |= 1ull << i;
            }
        } else if (sscanf(line, "memory %llx %llx %1023s", &a, &b, word) == 3 && s->nmem < 8) {
            char file[2100];
            snprintf(file, sizeof(file), "%s%s", dir, word);
            struct memblock *m = &s->mem[s->nmem];
            m->addr = a;
            m->bytes = slurp(file, &m->len);
            if (m->bytes)
                s->nmem++;
        } else if (sscanf(line, "map %llx %llx %llx %n", &a, &b, &c, &i) == 3 &&
                   s->nmaps < MAX_ITEMS) {
            struct mapping *m = &s->maps[s->nmaps++];
            m->start = a;
            m->end = b;
            m->offset = c;
            m->module = module_for_path(line + i);
            if (m->module >= 0)
                learn_bias(s, m);
        } else if (sscanf(line, "frame %d %llx", &i, &a) == 2 && s->nframes < MAX_FRAMES) {
            s->frames[s->nframes++] = a;
        }
    }
    fclose(f);
    if (version != 1) {
        fprintf(stderr, "%s: not a version 1 snapshot\n", path);
        return -1;
    }
    if (s->addr_size != ARCH_PTR_SIZE) {
        fprintf(stderr, "%s: snapshot of a %u-byte-pointer CPU, built for %d\n", path,
                s->addr_size, ARCH_PTR_SIZE);
        return -1;
    }
    return 0;
}

static void free_snapshot(struct snapshot *s)
{
    for (int i = 0; i < s->nmem; i++)
        free(s->mem[i].bytes);
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("nothing to replay: selftest/tests/unwind_gdb.sh runs this with gdb snapshots\n");
        return 77;
    }
    elf_version(EV_CURRENT);
    int bad = 0, snaps = 0, frames_ok = 0;
    uint64_t total_frames = 0;
    double total_ns = 0;
    for (int a = 1; a < argc; a++) {
        struct snapshot *s = calloc(1, sizeof(*s));
        if (!s || load_snapshot(argv[a], s) != 0) {
            bad++;
            free(s);
            continue;
        }
        snaps++;
        struct unwind_memory mem = { read_mem, s };
        struct unwind_lookup lookup = { find_table, s, NULL, NULL };
        uint64_t pcs[MAX_FRAMES];
        int n = unwind_stack(&s->regs, &mem, &lookup, pcs, MAX_FRAMES);

        bool same = n == s->nframes;
        for (int i = 0; i < n && i < s->nframes; i++) {
            if ((pcs[i] & ~UNWIND_PC_EXACT) == s->frames[i])
                frames_ok++;
            else
                same = false;
        }
        if (!same) {
            bad++;
            printf("MISMATCH %s: memtrace %d frames, gdb %d\n", argv[a], n, s->nframes);
            for (int i = 0; i < n || i < s->nframes; i++) {
                printf("  #%-3d memtrace ", i);
                if (i < n)
                    printf("0x%016llx%s", (unsigned long long)(pcs[i] & ~UNWIND_PC_EXACT),
                           pcs[i] & UNWIND_PC_EXACT ? "*" : " ");
                else
                    printf("%-19s", "-");
                if (i < s->nframes)
                    printf("  gdb 0x%016llx", (unsigned long long)s->frames[i]);
                printf("\n");
            }
        }
        /* Warm-cache cost: what the tracer pays at a repeated call site. */
        const int reps = 2000;
        double t0 = now_ns();
        for (int r = 0; r < reps; r++)
            n = unwind_stack(&s->regs, &mem, &lookup, pcs, MAX_FRAMES);
        total_ns += now_ns() - t0;
        total_frames += (uint64_t)n * reps;
        free_snapshot(s);
        free(s);
    }
    printf("%d snapshots, %d frames matched gdb, %d snapshots differ\n", snaps, frames_ok, bad);
    if (total_frames)
        printf("warm cache: %.1f ns/frame\n", total_ns / (double)total_frames);
    for (int i = 0; i < nmodules; i++) {
        cfi_table_free(modules[i].table);
        if (modules[i].elf)
            elf_end(modules[i].elf);
        if (modules[i].fd >= 0)
            close(modules[i].fd);
    }
    return bad == 0 && snaps > 0 ? 0 : 1;
}
