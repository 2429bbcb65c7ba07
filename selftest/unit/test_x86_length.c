/* Length oracle for the x86 decoder: objdump disassembles whole libraries
 * (64-bit and i386) and streams of random instruction-shaped bytes, and every
 * instruction length it implies (the distance to the next address inside a
 * function) must equal x86_decode's, and so must RIP-relative addressing and
 * relative branch targets, which displaced execution rewrites.  Instructions
 * objdump calls "(bad)" or shows as bare prefixes or data are skipped, and so
 * are the few encodings the decoder refuses on purpose (declined_on_purpose).
 *
 *   build/unit/test_x86_length [FILE...]   only these ELF files, no random code */
#if defined(__x86_64__) || defined(__i386__)
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch/x86_insn.h"

#ifndef SHOW_MAX
#define SHOW_MAX 20   /* differences printed per file */
#endif

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
    /* Executable sections. */
    if (img->mode64) {
        const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img->bytes;
        if (img->size < sizeof(*eh) || eh->e_shoff > img->size ||
            (img->size - eh->e_shoff) / sizeof(Elf64_Shdr) < eh->e_shnum)
            return false;
        for (unsigned k = 0; k < eh->e_shnum; k++) {
            const Elf64_Shdr *sh = (const Elf64_Shdr *)(img->bytes + eh->e_shoff) + k;
            if ((sh->sh_flags & SHF_EXECINSTR) && sh->sh_type == SHT_PROGBITS &&
                img->n_ranges < 64)
                img->ranges[img->n_ranges++] =
                    (struct exec_range){sh->sh_addr, sh->sh_size, sh->sh_offset};
        }
    } else {
        const Elf32_Ehdr *eh = (const Elf32_Ehdr *)img->bytes;
        if (eh->e_shoff > img->size || (img->size - eh->e_shoff) / sizeof(Elf32_Shdr) < eh->e_shnum)
            return false;
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

/* A file of raw code at address 0. */
static bool load_raw(const char *path, bool mode64, struct image *img)
{
    memset(img, 0, sizeof(*img));
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    img->bytes = malloc(size > 0 ? (size_t)size : 1);
    img->size = (size_t)size;
    bool ok = img->bytes && fread(img->bytes, 1, img->size, f) == img->size;
    fclose(f);
    img->mode64 = mode64;
    img->ranges[0] = (struct exec_range){0, img->size, 0};
    img->n_ranges = 1;
    return ok;
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

static bool is_legacy_prefix_byte(uint8_t b)
{
    return b == 0x66 || b == 0x67 || b == 0xf0 || b == 0xf2 || b == 0xf3 || b == 0x2e ||
           b == 0x36 || b == 0x3e || b == 0x26 || b == 0x64 || b == 0x65;
}

/* What the decoder refuses by design although objdump shows something:
 * 3DNow (0F 0E femms, 0F 0F), mov %trN, and VEX/EVEX after a REX, 66, F2, F3 or F0
 * prefix (#UD on the CPU; objdump ignores the prefix). */
static bool declined_on_purpose(const uint8_t *p, unsigned len, bool mode64)
{
    unsigned i = 0;
    bool vex_ud_prefix = false;
    for (; i < len; i++) {
        uint8_t b = p[i];
        if (b == 0x66 || b == 0xf2 || b == 0xf3 || b == 0xf0 || (mode64 && (b & 0xf0) == 0x40))
            vex_ud_prefix = true;
        else if (!is_legacy_prefix_byte(b))
            break;
    }
    if (i + 1 >= len)
        return false;
    if (p[i] == 0x0f && (p[i + 1] == 0x0e || p[i + 1] == 0x0f))
        return true;
    /* mov to/from the 386's test registers, #UD since the Pentium */
    if (!mode64 && p[i] == 0x0f && (p[i + 1] == 0x24 || p[i + 1] == 0x26))
        return true;
    bool vex = p[i] == 0xc4 || p[i] == 0xc5 || p[i] == 0x62 ||
               (p[i] == 0x8f && ((p[i + 1] >> 3) & 7) != 0);
    if (vex && !mode64 && p[i] != 0x8f)
        vex = (p[i + 1] >> 6) == 3;
    return vex && vex_ud_prefix;
}

struct tally {
    unsigned long checked, mismatched, declined, skipped, operands_differ;
};

/* The target objdump prints for a relative branch ("jne 1234 <f+0x8>",
 * "call 0x1234"), after any prefix words.  False for other instructions and
 * indirect forms ("jmp *%rax"). */
static bool objdump_relative_target(const char *text, uint64_t *target)
{
    const char *s = text;
    size_t n;
    for (;;) {
        s += strspn(s, " \t");
        n = strcspn(s, " \t\n");
        if (n == 0 || !is_prefix_word(s, n))
            break;
        s += n;
    }
    bool branch = (s[0] == 'j' && n > 1) || strncmp(s, "call", 4) == 0 ||
                  strncmp(s, "loop", 4) == 0 || strncmp(s, "xbegin", 6) == 0;
    if (!branch)
        return false;
    s += n;
    s += strspn(s, " \t");
    char *end;
    *target = strtoull(s, &end, 16);
    return end != s && (*end == 0 || *end == ' ' || *end == '\n');
}

/* What the decoder says about operands that displaced execution relies on,
 * against objdump's text: RIP-relative addressing and branch targets. */
static const char *operand_difference(const struct x86_insn *in, const uint8_t *p, uint64_t addr,
                                      bool mode64, const char *text)
{
    if (mode64) {
        bool objdump_rip = strstr(text, "(%rip)") || strstr(text, "(%eip)");
        if (objdump_rip != in->rip_relative)
            return in->rip_relative ? "RIP-relative, objdump disagrees"
                                    : "not RIP-relative, objdump disagrees";
    }
    uint64_t objdump_target;
    bool objdump_rel = objdump_relative_target(text, &objdump_target);
    bool rel = in->flow == X86_FLOW_JMP_REL || in->flow == X86_FLOW_JCC_REL ||
               in->flow == X86_FLOW_CALL_REL || in->flow == X86_FLOW_XBEGIN;
    if (rel != objdump_rel)
        return rel ? "relative branch, objdump disagrees"
                   : "not a relative branch, objdump disagrees";
    if (rel && !in->opsize_prefix && x86_branch_target(in, p, addr, mode64) != objdump_target)
        return "branch target differs";
    return NULL;
}

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
        if (t->declined++ < SHOW_MAX) {
            fprintf(stderr, "declined at %#llx (objdump len %u):", (unsigned long long)addr, want);
            for (unsigned k = 0; k < want; k++)
                fprintf(stderr, " %02x", p[k]);
            fprintf(stderr, "  %s", text);
        }
        return;
    }
    /* objdump folds fwait into the x87 instruction after it (fstsw = fwait;
     * fnstsw) and applies fwait's prefixes to it; for the CPU they are two
     * instructions. */
    if (in.map == X86_MAP_1BYTE && in.opcode == 0x9b && want > in.len) {
        unsigned at = in.len;
        while (at < want && p[at] == 0x9b)
            at++;   /* more fwaits, folded too */
        /* a prefix dangling after it ("9b 3e": "ds fwait") */
        if (at == want || (want == at + 1 && is_legacy_prefix_byte(p[at])))
            return;
        uint8_t folded[2 * X86_INSN_MAX_LEN];
        unsigned folded_len = in.n_prefixes + (want - at);
        struct x86_insn rest;
        memcpy(folded, p, in.n_prefixes);
        memcpy(folded + in.n_prefixes, p + at, want - at);
        if (x86_decode(folded, folded_len, img->mode64, &rest) && rest.len == folded_len)
            return;
    }
    if (in.len != want) {
        if (t->mismatched++ < SHOW_MAX) {
            fprintf(stderr, "length %u != objdump %u at %#llx:", in.len, want,
                    (unsigned long long)addr);
            for (unsigned k = 0; k < want; k++)
                fprintf(stderr, " %02x", p[k]);
            fprintf(stderr, "  %s", text);
        }
        return;
    }
    const char *why = operand_difference(&in, p, addr, img->mode64, text);
    if (why && t->operands_differ++ < SHOW_MAX) {
        fprintf(stderr, "%s at %#llx:", why, (unsigned long long)addr);
        for (unsigned k = 0; k < want; k++)
            fprintf(stderr, " %02x", p[k]);
        fprintf(stderr, "  %s", text);
    }
}

enum file_kind { FILE_ELF, FILE_RAW32, FILE_RAW64 };

/* Parses `objdump -d --no-show-raw-insn` and checks each instruction that has
 * a successor in the same function. */
static bool check_file(const char *path, enum file_kind kind, struct tally *t)
{
    struct image img;
    bool loaded = kind == FILE_ELF ? load_image(path, &img)
                                   : load_raw(path, kind == FILE_RAW64, &img);
    if (!loaded) {
        fprintf(stderr, "%s: cannot load\n", path);
        free(img.bytes);
        return false;
    }
    char cmd[512];
    if (kind == FILE_ELF)
        snprintf(cmd, sizeof(cmd), "objdump -d -w --no-show-raw-insn '%s'", path);
    else
        snprintf(cmd, sizeof(cmd), "objdump -D -w --no-show-raw-insn -b binary -m %s '%s'",
                 kind == FILE_RAW64 ? "i386:x86-64" : "i386", path);
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

static unsigned next_random(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return (unsigned)(*x >> 11);
}

/* Random instruction-shaped bytes: prefixes, REX, an opcode from one of the
 * maps or behind a VEX/EVEX/XOP prefix, then random ModRM, SIB, displacement
 * and immediate bytes.  objdump decodes the stream from its start, and each
 * instruction it finds is compared; this reaches encodings compilers rarely
 * emit. */
static bool write_random_code(const char *path, unsigned n_insns, uint64_t seed)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return false;
    static const uint8_t prefixes[] = {0x66, 0x67, 0xf2, 0xf3, 0x2e, 0x3e, 0x64, 0xf0};
    uint64_t x = seed;
    for (unsigned n = 0; n < n_insns; n++) {
        uint8_t b[24];
        unsigned len = 0;
        while (next_random(&x) % 10 < 3 && len < 4)
            b[len++] = prefixes[next_random(&x) % sizeof(prefixes)];
        if (next_random(&x) % 10 < 3)
            b[len++] = (uint8_t)(0x40 | (next_random(&x) & 15));
        unsigned r = next_random(&x) % 100;
        if (r < 35) {
            b[len++] = (uint8_t)next_random(&x);
        } else if (r < 60) {
            b[len++] = 0x0f;
            b[len++] = (uint8_t)next_random(&x);
        } else if (r < 74) {
            b[len++] = 0x0f;
            b[len++] = r < 67 ? 0x38 : 0x3a;
            b[len++] = (uint8_t)next_random(&x);
        } else if (r < 82) {
            b[len++] = 0xc5;
            b[len++] = (uint8_t)next_random(&x);
        } else if (r < 90) {
            b[len++] = r < 87 ? 0xc4 : 0x8f;
            unsigned map = r < 87 ? 1 + next_random(&x) % 3 : 8 + next_random(&x) % 3;
            b[len++] = (uint8_t)((next_random(&x) & 0xe0) | map);
            b[len++] = (uint8_t)next_random(&x);
        } else {
            static const uint8_t evex_maps[] = {1, 2, 3, 5, 6};
            b[len++] = 0x62;
            unsigned map = evex_maps[next_random(&x) % 5];
            b[len++] = (uint8_t)((next_random(&x) & 0xf0) | map);
            b[len++] = (uint8_t)(next_random(&x) | 4);
            b[len++] = (uint8_t)next_random(&x);
        }
        for (unsigned k = 0; k < 7; k++)
            b[len++] = (uint8_t)next_random(&x);
        fwrite(b, 1, len, f);
    }
    return fclose(f) == 0;
}

static bool report(const char *name, const struct tally *t)
{
    printf("%s: %lu instructions checked, %lu length mismatches, %lu declined, "
           "%lu operand differences, %lu skipped\n",
           name, t->checked, t->mismatched, t->declined, t->operands_differ, t->skipped);
    return !t->mismatched && !t->declined && !t->operands_differ && t->checked >= 1000;
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
        if (!check_file(files[k], FILE_ELF, &t)) {
            printf("FAIL %s: could not disassemble\n", files[k]);
            ok = false;
            continue;
        }
        n_files++;
        total += t.checked;
        ok &= report(files[k], &t);
    }
    if (n_files == 0) {
        printf("no x86 libraries to compare with\n");
        return 77;
    }
    if (argc <= 1) {
        const char *tmpdir = getenv("MT_TMP") ? getenv("MT_TMP") : "/tmp";
        char path[4096];
        snprintf(path, sizeof(path), "%s/x86_random_code.%d", tmpdir, (int)getpid());
        for (int mode64 = 0; mode64 <= 1; mode64++) {
            struct tally t = {0};
            uint64_t seed = 0x9e3779b97f4a7c15ull + (uint64_t)mode64;
            bool written = write_random_code(path, 100000, seed);
            if (!written || !check_file(path, mode64 ? FILE_RAW64 : FILE_RAW32, &t)) {
                printf("FAIL random code: could not write or disassemble %s\n", path);
                ok = false;
            } else {
                total += t.checked;
                ok &= report(mode64 ? "random code, 64-bit" : "random code, 32-bit", &t);
            }
            unlink(path);
        }
    }
    printf("%lu instructions compared with objdump\n", total);
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
