/* Length oracle for the x86 decoder: objdump disassembles whole libraries,
 * and every instruction length it implies (the distance to the next address
 * inside a function) must equal x86_decode's.  Instructions objdump calls
 * "(bad)" or shows as bare prefixes or data are skipped. */
#if defined(__x86_64__) || defined(__i386__)
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch/x86_insn.h"

struct exec_range {
    uint64_t addr, size, offset;
};

struct image {
    uint8_t *bytes;
    size_t size;
    bool mode64;
    struct exec_range ranges[64];
    unsigned n_ranges;
};

static bool load_image(const char *path, struct image *img)
{
    memset(img, 0, sizeof(*img));
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    img->bytes = malloc((size_t)size);
    img->size = (size_t)size;
    bool ok = img->bytes && fread(img->bytes, 1, img->size, f) == img->size;
    fclose(f);
    if (!ok || img->size < sizeof(Elf32_Ehdr) || memcmp(img->bytes, ELFMAG, SELFMAG) != 0)
        return false;
    img->mode64 = img->bytes[EI_CLASS] == ELFCLASS64;
    /* Executable sections; the test trusts the system's libraries. */
    if (img->mode64) {
        const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img->bytes;
        for (unsigned k = 0; k < eh->e_shnum; k++) {
            const Elf64_Shdr *sh = (const Elf64_Shdr *)(img->bytes + eh->e_shoff) + k;
            if ((sh->sh_flags & SHF_EXECINSTR) && sh->sh_type == SHT_PROGBITS &&
                img->n_ranges < 64)
                img->ranges[img->n_ranges++] =
                    (struct exec_range){sh->sh_addr, sh->sh_size, sh->sh_offset};
        }
    } else {
        const Elf32_Ehdr *eh = (const Elf32_Ehdr *)img->bytes;
        for (unsigned k = 0; k < eh->e_shnum; k++) {
            const Elf32_Shdr *sh = (const Elf32_Shdr *)(img->bytes + eh->e_shoff) + k;
            if ((sh->sh_flags & SHF_EXECINSTR) && sh->sh_type == SHT_PROGBITS &&
                img->n_ranges < 64)
                img->ranges[img->n_ranges++] =
                    (struct exec_range){sh->sh_addr, sh->sh_size, sh->sh_offset};
        }
    }
    return img->n_ranges > 0;
}

/* Bytes at a virtual address and how many follow inside its section. */
static const uint8_t *image_at(const struct image *img, uint64_t addr, size_t *avail)
{
    for (unsigned k = 0; k < img->n_ranges; k++) {
        const struct exec_range *r = &img->ranges[k];
        if (addr >= r->addr && addr < r->addr + r->size && r->offset + r->size <= img->size) {
            *avail = (size_t)(r->addr + r->size - addr);
            return img->bytes + r->offset + (addr - r->addr);
        }
    }
    return NULL;
}

static bool is_prefix_word(const char *w, size_t n)
{
    static const char *const prefixes[] = {"data16", "data32", "addr32", "addr16", "lock",
                                           "repz", "repnz", "rep", "repe", "repne", "cs", "ds",
                                           "ss", "es", "fs", "gs", "notrack", "bnd", "xacquire",
                                           "xrelease", "rex", NULL};
    if (n > 4 && strncmp(w, "rex.", 4) == 0)
        return true;
    for (unsigned k = 0; prefixes[k]; k++)
        if (strlen(prefixes[k]) == n && strncmp(w, prefixes[k], n) == 0)
            return true;
    return false;
}

/* Lines objdump prints for something that is not a whole instruction:
 * "(bad)", data (.byte), or prefixes alone ("ds rex.WRX"). */
static bool objdump_not_an_insn(const char *text)
{
    if (strstr(text, "(bad)") || strncmp(text, ".byte", 5) == 0 || strncmp(text, ".word", 5) == 0)
        return true;
    const char *s = text;
    for (;;) {
        s += strspn(s, " \t\n");
        if (!*s)
            return true;
        size_t n = strcspn(s, " \t\n");
        if (!is_prefix_word(s, n))
            return false;
        s += n;
    }
}

/* What the decoder refuses by design although objdump shows something:
 * 3DNow (0F 0E femms, 0F 0F), and a REX prefix before VEX/EVEX (#UD on
 * the CPU; objdump ignores the REX). */
static bool declined_on_purpose(const uint8_t *p, unsigned len, bool mode64)
{
    if (len >= 2 && p[0] == 0x0f && (p[1] == 0x0e || p[1] == 0x0f))
        return true;
    return mode64 && len >= 2 && (p[0] & 0xf0) == 0x40 &&
           (p[1] == 0xc4 || p[1] == 0xc5 || p[1] == 0x62);
}

struct tally {
    unsigned long checked, mismatched, declined, skipped;
};

static void check_one(const struct image *img, uint64_t addr, uint64_t next, const char *text,
                      struct tally *t)
{
    if (objdump_not_an_insn(text)) {
        t->skipped++;
        return;
    }
    size_t avail;
    const uint8_t *p = image_at(img, addr, &avail);
    if (!p || next <= addr || next - addr > X86_INSN_MAX_LEN) {
        t->skipped++;
        return;
    }
    struct x86_insn in;
    unsigned want = (unsigned)(next - addr);
    t->checked++;
    if (!x86_decode(p, avail, img->mode64, &in)) {
        if (declined_on_purpose(p, want, img->mode64)) {
            t->skipped++;
            return;
        }
        if (t->declined++ < 20) {
            fprintf(stderr, "declined at %#llx (objdump len %u):", (unsigned long long)addr, want);
            for (unsigned k = 0; k < want; k++)
                fprintf(stderr, " %02x", p[k]);
            fprintf(stderr, "  %s", text);
        }
        return;
    }
    /* objdump folds fwait into the x87 instruction after it (fstsw = fwait;
     * fnstsw); for the CPU they are two instructions. */
    struct x86_insn rest;
    if (in.len == 1 && p[0] == 0x9b && want > 1 && x86_decode(p + 1, avail - 1, img->mode64, &rest) &&
        rest.len == want - 1)
        return;
    if (in.len != want) {
        if (t->mismatched++ < 20) {
            fprintf(stderr, "length %u != objdump %u at %#llx:", in.len, want,
                    (unsigned long long)addr);
            for (unsigned k = 0; k < want; k++)
                fprintf(stderr, " %02x", p[k]);
            fprintf(stderr, "  %s", text);
        }
    }
}

/* Parses `objdump -d --no-show-raw-insn` and checks each instruction that has
 * a successor in the same function. */
static bool check_file(const char *path, struct tally *t)
{
    struct image img;
    if (!load_image(path, &img)) {
        fprintf(stderr, "%s: cannot load\n", path);
        free(img.bytes);
        return false;
    }
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "objdump -d -w --no-show-raw-insn '%s'", path);
    FILE *f = popen(cmd, "r");
    if (!f) {
        free(img.bytes);
        return false;
    }
    char line[1024], prev_text[1024] = "";
    uint64_t prev_addr = 0;
    bool have_prev = false;
    while (fgets(line, sizeof(line), f)) {
        char *s = line;
        while (*s == ' ')
            s++;
        char *end;
        unsigned long long addr = strtoull(s, &end, 16);
        bool insn_line = s != line && end != s && end[0] == ':' && end[1] == '\t';
        if (!insn_line) {
            have_prev = false;   /* function header, section header or blank */
            continue;
        }
        if (have_prev)
            check_one(&img, prev_addr, addr, prev_text, t);
        snprintf(prev_text, sizeof(prev_text), "%s", end + 2);
        prev_addr = addr;
        have_prev = true;
    }
    int rc = pclose(f);
    free(img.bytes);
    return rc == 0;
}

int main(int argc, char **argv)
{
    static const char *const defaults[] = {
        "/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
        "/bin/bash", "/usr/lib32/libc.so.6", "/usr/lib32/libm.so.6",
        /* optional: lots of SSE/AVX/AVX-512 and SHA/AES instructions */
        "/usr/lib/x86_64-linux-gnu/libcrypto.so.3", "/usr/lib/x86_64-linux-gnu/libm.so.6",
        "/lib/x86_64-linux-musl/libc.so", NULL};
    const char *const *files = argc > 1 ? (const char *const *)argv + 1 : defaults;
    bool ok = true;
    unsigned long total = 0;
    unsigned n_files = 0;
    for (unsigned k = 0; files[k]; k++) {
        if (access(files[k], R_OK) != 0) {
            printf("%s: not present, skipped\n", files[k]);
            continue;
        }
        struct tally t = {0};
        if (!check_file(files[k], &t)) {
            printf("FAIL %s: could not disassemble\n", files[k]);
            ok = false;
            continue;
        }
        n_files++;
        total += t.checked;
        printf("%s: %lu instructions checked, %lu length mismatches, %lu declined, %lu skipped\n",
               files[k], t.checked, t.mismatched, t.declined, t.skipped);
        if (t.mismatched || t.declined || t.checked < 1000)
            ok = false;
    }
    printf("%lu instructions compared with objdump in %u files\n", total, n_files);
    if (n_files == 0) {
        printf("no x86 libraries to compare with\n");
        return 77;
    }
    return ok ? 0 : 1;
}

#else /* not x86 */
#include <stdio.h>

int main(void)
{
    printf("x86 decoder is not built for this CPU\n");
    return 77;
}
#endif
