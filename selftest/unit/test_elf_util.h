/* Helpers shared by the ELF/symbol/provider unit tests: a scratch
 * directory, building test objects with real toolchains, file copies and
 * the failure counter.  Header-only because each unit test is one .c file. */
#ifndef MT_TEST_ELF_UTIL_H
#define MT_TEST_ELF_UTIL_H

#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "selftest/unit/test.h"

static char test_dir[2048];

/* $MT_TMP when the runner gives one, else a fresh directory under /tmp. */
__attribute__((unused)) static const char *test_tmpdir(void)
{
    if (test_dir[0])
        return test_dir;
    const char *t = getenv("MT_TMP");
    if (t && t[0]) {
        snprintf(test_dir, sizeof(test_dir), "%s", t);
        mkdir(test_dir, 0700);
    } else {
        snprintf(test_dir, sizeof(test_dir), "/tmp/mt-elf-test.XXXXXX");
        if (!mkdtemp(test_dir)) {
            perror("mkdtemp");
            exit(2);
        }
    }
    return test_dir;
}

__attribute__((unused)) static char *test_path(const char *name)
{
    static char bufs[8][4096];
    static int next;
    char *b = bufs[next++ % 8];
    snprintf(b, sizeof(bufs[0]), "%s/%s", test_tmpdir(), name);
    return b;
}

/* Runs a shell command (printf-style); true when it exits 0. */
__attribute__((format(printf, 1, 2)))
__attribute__((unused)) static bool run(const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    int rc = system(cmd);
    if (rc != 0)
        fprintf(stderr, "command failed (%d): %s\n", rc, cmd);
    return rc == 0;
}

/* Whether a tool is on PATH.  Tools that tools/install-deps.sh may not
 * install everywhere (ld.lld, llvm-strip) make their checks skip, loudly. */
__attribute__((unused)) static bool have_tool(const char *name)
{
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "command -v '%s' >/dev/null 2>&1", name);
    bool ok = system(cmd) == 0;
    if (!ok)
        printf("NOTE: %s not installed: the checks that need it are skipped\n", name);
    return ok;
}

__attribute__((unused)) static bool write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    fputs(text, f);
    return fclose(f) == 0;
}

__attribute__((unused)) static uint8_t *read_whole(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
    if (n < 0 || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        fclose(f);
        return NULL;
    }
    fclose(f);
    *size = (size_t)n;
    return buf;
}

__attribute__((unused)) static bool write_whole(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return false;
    bool ok = fwrite(data, 1, size, f) == size;
    return fclose(f) == 0 && ok;
}

/* A copy of an ELF file without section headers, like sstrip makes:
 * e_shoff, e_shnum and e_shstrndx zeroed (zero is zero in either byte
 * order, so only the class matters). */
__attribute__((unused)) static bool write_without_section_headers(const char *from, const char *to)
{
    size_t size;
    uint8_t *data = read_whole(from, &size);
    if (!data || size < sizeof(Elf64_Ehdr) || memcmp(data, ELFMAG, SELFMAG) != 0) {
        free(data);
        return false;
    }
    if (data[EI_CLASS] == ELFCLASS64) {
        memset(data + offsetof(Elf64_Ehdr, e_shoff), 0, 8);
        memset(data + offsetof(Elf64_Ehdr, e_shnum), 0, 4); /* e_shnum, e_shstrndx */
    } else {
        memset(data + offsetof(Elf32_Ehdr, e_shoff), 0, 4);
        memset(data + offsetof(Elf32_Ehdr, e_shnum), 0, 4);
    }
    bool ok = write_whole(to, data, size);
    free(data);
    return ok;
}

/* The running system's libc (x86-64 Debian first). */
__attribute__((unused)) static const char *libc_path(void)
{
    static const char *const candidates[] = {"/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6",
                                             "/lib64/libc.so.6", "/usr/lib/libc.so.6"};
    for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++)
        if (access(candidates[i], R_OK) == 0)
            return candidates[i];
    return NULL;
}

static int test_finish(const char *name)
{
    if (failures) {
        fprintf(stderr, "%s: %d check(s) failed\n", name, failures);
        return 1;
    }
    printf("%s: all checks passed\n", name);
    return 0;
}

#endif
