#include "target/symbols/addr2line.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/symbols/symbolize.h"

/* Parses a hex address as binutils does: optional 0x, then hex digits. */
static bool parse_address(const char *s, uint64_t *out)
{
    while (isspace((unsigned char)*s))
        s++;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        s += 2;
    if (!isxdigit((unsigned char)*s))
        return false;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 16);
    if (errno)
        return false;
    *out = v;
    return true;
}

static void print_one(struct symbolizer *sym, const char *text, unsigned flags)
{
    static struct sym_info chain[SYM_CHAIN_MAX];
    uint64_t addr;
    bool ok = parse_address(text, &addr);
    if (flags & ADDR2LINE_ADDRESSES)
        printf("0x%016" PRIx64 "\n", ok ? addr : 0);
    if (!ok) {
        printf("??\n??:0\n");
        return;
    }
    unsigned n = symbolizer_lookup_chain(sym, addr, chain, (flags & ADDR2LINE_INLINES) ? SYM_CHAIN_MAX : 1, NULL);
    for (unsigned i = 0; i < n; i++) {
        char where[LINE_PATH_MAX + 64];
        sym_info_format_location(&chain[i], where, sizeof(where));
        printf("%s\n%s\n", chain[i].function ? chain[i].function : "??", where);
    }
}

int addr2line_main(int argc, char **argv, struct file_locator *loc, unsigned flags)
{
    if (argc < 1 || !argv[0]) {
        fprintf(stderr, "usage: memtrace --addr2line ELF [ADDR...]\n");
        return 2;
    }
    const char *path = argv[0];
    char err[256];
    struct byte_source *src = byte_source_open_file(path, err, sizeof(err));
    if (!src) {
        fprintf(stderr, "memtrace: %s\n", err);
        return 1;
    }
    struct elf_file *elf = elf_file_open(src, err, sizeof(err));
    if (!elf) {
        fprintf(stderr, "memtrace: %s\n", err);
        return 1;
    }
    /* The debuglink search wants the path the object has on the target;
     * for a local file that is its absolute path. */
    char abs[PATH_MAX];
    if (!realpath(path, abs))
        snprintf(abs, sizeof(abs), "%s", path);
    struct file_locator empty;
    if (!loc) {
        file_locator_init(&empty);
        loc = &empty;
    }
    struct debug_object *obj = debug_object_from_elf(loc, abs, elf);
    if (!obj) {
        fprintf(stderr, "memtrace: %s: cannot read\n", path);
        return 1;
    }
    struct symbolizer *sym = symbolizer_new(obj);
    if (argc > 1) {
        for (int i = 1; i < argc; i++)
            print_one(sym, argv[i], flags);
    } else {
        char line[256];
        while (fgets(line, sizeof(line), stdin)) {
            print_one(sym, line, flags);
            fflush(stdout);
        }
    }
    fflush(stdout);
    symbolizer_free(sym);
    debug_object_close(obj);
    if (loc == &empty)
        file_locator_destroy(&empty);
    return 0;
}
