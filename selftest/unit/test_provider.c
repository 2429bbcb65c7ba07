/* Sysroot provider, locator and debug_object: separate debug files made by
 * objcopy (--only-keep-debug, --add-gnu-debuglink) are found by build-id
 * and in the three .gnu_debuglink places gdb searches; the CRC objcopy
 * wrote is the oracle for byte_source_crc32; a debug file with the wrong
 * CRC or the wrong build-id is never used. */
#include "selftest/unit/test_elf_util.h"
#include "shared/elf/elf_file.h"
#include "target/files/provider.h"
#include "target/symbols/debug_object.h"

static const char prog_c[] =
    "#include <stdio.h>\n"
    "int helper(int x) { return x * 3; }\n"
    "int main(void) { printf(\"%d\\n\", helper(2)); return 0; }\n";
static const char other_c[] =
    "#include <stdio.h>\n"
    "int other(int x) { return x + 7; }\n"
    "int main(void) { printf(\"%d\\n\", other(2)); return 0; }\n";

static char sysroot[2048];

static bool sh(const char *cmd) { return run("cd '%s' && %s", test_tmpdir(), cmd); }

/* Opens /usr/bin/NAME in the sysroot through a fresh locator. */
static struct debug_object *open_in_sysroot(const char *name, struct file_locator *loc)
{
    file_locator_init(loc);
    file_locator_add(loc, file_provider_sysroot(sysroot));
    char path[256], err[256] = "";
    snprintf(path, sizeof(path), "/usr/bin/%s", name);
    struct debug_object *o = debug_object_open(loc, path, err, sizeof(err));
    CHECK(o != NULL, "open %s: %s", path, err);
    return o;
}

static const char *debug_name(struct debug_object *o)
{
    struct elf_file *d = o ? debug_object_debug_elf(o) : NULL;
    return d ? elf_file_name(d) : NULL;
}

/* The debug file must be found exactly at want (relative to the sysroot),
 * or not at all when want is NULL. */
static void expect_debug(const char *prog, const char *want, const char *why)
{
    struct file_locator loc;
    struct debug_object *o = open_in_sysroot(prog, &loc);
    const char *got = debug_name(o);
    char full[4096] = "";
    if (want)
        snprintf(full, sizeof(full), "%s%s", sysroot, want);
    if (want)
        CHECK(got && strcmp(got, full) == 0, "%s: debug file %s, expected %s", why, got ? got : "none", full);
    else
        CHECK(got == NULL, "%s: used %s", why, got);
    if (o && want) {
        CHECK(debug_object_dwarf_elf(o) == debug_object_debug_elf(o), "%s: DWARF not from the debug file", why);
        const struct symtab *t = debug_object_symtab(o);
        CHECK(strcmp(symtab_origin(t), "debug .symtab") == 0, "%s: symbols from %s", why, symtab_origin(t));
    }
    debug_object_close(o);
    file_locator_destroy(&loc);
}

static void test_crc(void)
{
    char err[256];
    struct byte_source *dbg = byte_source_open_file(test_path("prog.debug"), err, sizeof(err));
    struct elf_file *f = elf_file_open(byte_source_open_file(test_path("prog"), err, sizeof(err)), err, sizeof(err));
    CHECK(dbg && f, "open: %s", err);
    if (!dbg || !f)
        return;
    const char *name = NULL;
    uint32_t want = 0, got = 0;
    CHECK(elf_file_debuglink(f, &name, &want), "prog has no .gnu_debuglink");
    CHECK(name && strcmp(name, "prog.debug") == 0, "debuglink name %s", name ? name : "-");
    CHECK(byte_source_crc32(dbg, &got) == 0 && got == want, "crc 0x%08x, objcopy wrote 0x%08x", got, want);
    byte_source_close(dbg);
    elf_file_close(f);
}

static void test_locator(void)
{
    struct file_locator loc;
    file_locator_init(&loc);
    char missing[4096];
    snprintf(missing, sizeof(missing), "%s/nothing-here", test_tmpdir());
    file_locator_add(&loc, file_provider_sysroot(missing));
    char with_slash[4096];
    snprintf(with_slash, sizeof(with_slash), "%s/", sysroot);
    file_locator_add(&loc, file_provider_sysroot(with_slash));
    file_locator_add(&loc, file_provider_sysroot("/"));
    struct byte_source *s = file_locator_open_path(&loc, "/usr/bin/prog");
    char want[4096];
    snprintf(want, sizeof(want), "%s/usr/bin/prog", sysroot);
    CHECK(s && strcmp(s->name, want) == 0, "locator opened %s", s ? s->name : "nothing");
    byte_source_close(s);
    s = file_locator_open_path(&loc, "/bin/sh");
    CHECK(s && strcmp(s->name, "/bin/sh") == 0, "fallback to / gave %s", s ? s->name : "nothing");
    byte_source_close(s);
    CHECK(file_locator_open_path(&loc, "/no/such/file") == NULL, "found a missing file");
    CHECK(file_locator_open_debuglink(&loc, "/usr/bin/prog", "../bin/prog", 0) == NULL, "debuglink with a path");
    for (int i = loc.count; i < FILE_LOCATOR_MAX; i++)
        CHECK(file_locator_add(&loc, file_provider_sysroot("/")) == 0, "locator full early");
    struct file_provider *extra = file_provider_sysroot("/");
    CHECK(file_locator_add(&loc, extra) == -1, "locator accepted more than FILE_LOCATOR_MAX");
    extra->ops->destroy(extra);
    file_locator_destroy(&loc);
}

static int attachment_frees;
static void count_free(void *data)
{
    attachment_frees++;
    free(data);
}

/* The build-id of a file in the scratch dir, as our reader sees it. */
static size_t build_id_of(const char *name, uint8_t *id)
{
    char err[256];
    struct elf_file *f = elf_file_open(byte_source_open_file(test_path(name), err, sizeof(err)), err, sizeof(err));
    size_t n = f ? elf_file_build_id(f, id, ELF_BUILD_ID_MAX) : 0;
    elf_file_close(f);
    return n;
}

static void build_id_path(const uint8_t *id, size_t n, char *out, size_t len)
{
    char hex[2 * ELF_BUILD_ID_MAX + 1] = "";
    for (size_t i = 0; i < n; i++)
        snprintf(hex + 2 * i, sizeof(hex) - 2 * i, "%02x", id[i]);
    snprintf(out, len, "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
}

/* dwz's .gnu_debugaltlink, made by hand with objcopy: prog's debug file
 * names other.debug (by path and build-id) as its supplementary file. */
static void test_altlink(void)
{
    uint8_t prog_id[ELF_BUILD_ID_MAX], other_id[ELF_BUILD_ID_MAX];
    size_t pn = build_id_of("prog", prog_id), on = build_id_of("other.debug", other_id);
    CHECK(pn == 20 && on == 20, "build-ids %zu %zu", pn, on);
    static const char alt_path[] = "/usr/lib/debug/.dwz/common.debug";
    uint8_t section[sizeof(alt_path) + ELF_BUILD_ID_MAX];
    memcpy(section, alt_path, sizeof(alt_path));
    memcpy(section + sizeof(alt_path), other_id, on);
    CHECK(write_whole(test_path("altlink.bin"), section, sizeof(alt_path) + on), "write altlink");
    CHECK(sh("objcopy --add-section .gnu_debugaltlink=altlink.bin prog.debug prog-alt.debug"), "objcopy");
    /* readelf decodes the link too: the oracle for our parser. */
    CHECK(run("readelf --debug-dump=links '%s' 2>/dev/null | grep -q '%s'", test_path("prog-alt.debug"), alt_path),
          "readelf does not see the altlink");
    {
        char err[256];
        struct elf_file *f = elf_file_open(byte_source_open_file(test_path("prog-alt.debug"), err, sizeof(err)),
                                           err, sizeof(err));
        const char *p = NULL;
        uint8_t id[ELF_BUILD_ID_MAX];
        size_t n = f ? elf_file_debugaltlink(f, &p, id, sizeof(id)) : 0;
        CHECK(n == on && memcmp(id, other_id, n) == 0 && p && strcmp(p, alt_path) == 0, "altlink parse");
        elf_file_close(f);
    }
    char prog_debug[1024], other_debug[1024], cmd[4096];
    build_id_path(prog_id, pn, prog_debug, sizeof(prog_debug));
    build_id_path(other_id, on, other_debug, sizeof(other_debug));
    snprintf(cmd, sizeof(cmd),
             "rm -rf sysroot/usr/lib/debug/.build-id && mkdir -p \"$(dirname 'sysroot%s')\" "
             "sysroot/usr/lib/debug/.dwz && cp prog-alt.debug 'sysroot%s' && cp other.debug sysroot%s",
             prog_debug, prog_debug, alt_path);
    CHECK(sh(cmd), "sysroot for altlink");

    struct {
        const char *setup, *want, *what;
    } cases[] = {
        {"true", alt_path, "by path"},
        {NULL, NULL, "by build-id"}, /* filled below */
        {"cp noid.debug sysroot/usr/lib/debug/.dwz/common.debug", NULL, "wrong file at the path"},
    };
    char by_id_setup[4096];
    snprintf(by_id_setup, sizeof(by_id_setup),
             "rm sysroot%s && mkdir -p \"$(dirname 'sysroot%s')\" && cp other.debug 'sysroot%s'", alt_path,
             other_debug, other_debug);
    cases[1].setup = by_id_setup;
    cases[1].want = other_debug;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        if (i == 2) { /* no copy under the build-id any more */
            snprintf(cmd, sizeof(cmd), "rm 'sysroot%s' && %s", other_debug, cases[i].setup);
            CHECK(sh(cmd), "setup %s", cases[i].what);
        } else {
            CHECK(sh(cases[i].setup), "setup %s", cases[i].what);
        }
        struct file_locator loc;
        struct debug_object *o = open_in_sysroot("prog", &loc);
        CHECK(o && debug_object_debug_elf(o), "altlink %s: prog's debug file not found", cases[i].what);
        struct elf_file *alt = o ? debug_object_alt_elf(o) : NULL;
        char want[4096] = "";
        if (cases[i].want)
            snprintf(want, sizeof(want), "%s%s", sysroot, cases[i].want);
        if (cases[i].want)
            CHECK(alt && strcmp(elf_file_name(alt), want) == 0, "altlink %s: got %s", cases[i].what,
                  alt ? elf_file_name(alt) : "none");
        else
            CHECK(alt == NULL, "altlink %s: used %s", cases[i].what, elf_file_name(alt));
        CHECK(!o || debug_object_alt_elf(o) == alt, "second call differs");
        if (o) {
            attachment_frees = 0;
            debug_object_set_attachment(o, malloc(16), count_free);
            CHECK(debug_object_attachment(o) != NULL, "attachment lost");
            debug_object_set_attachment(o, malloc(16), count_free);
            CHECK(attachment_frees == 1, "replaced attachment not freed");
        }
        debug_object_close(o);
        CHECK(!o || attachment_frees == 2, "attachment not freed on close");
        file_locator_destroy(&loc);
    }
}

int main(void)
{
    snprintf(sysroot, sizeof(sysroot), "%s/sysroot", test_tmpdir());
    CHECK(write_text(test_path("prog.c"), prog_c) && write_text(test_path("other.c"), other_c), "sources");
    bool ok = sh("gcc -g -O1 -Wl,--build-id=sha1 -o prog.full prog.c") &&
              sh("gcc -g -O1 -Wl,--build-id=sha1 -o other.full other.c") &&
              sh("gcc -g -O1 -Wl,--build-id=none -o noid.full prog.c") &&
              sh("objcopy --only-keep-debug prog.full prog.debug") &&
              sh("objcopy --only-keep-debug other.full other.debug") &&
              sh("objcopy --only-keep-debug noid.full noid.debug") &&
              sh("objcopy --strip-debug --add-gnu-debuglink=prog.debug prog.full prog") &&
              sh("objcopy --strip-debug --add-gnu-debuglink=noid.debug noid.full noid") &&
              /* prog's code, but a debuglink naming other's debug file (CRC right, build-id wrong) */
              sh("objcopy --strip-debug --add-gnu-debuglink=other.debug prog.full wrongid") &&
              sh("mkdir -p sysroot/usr/bin sysroot/usr/lib/debug/usr/bin");
    CHECK(ok, "cannot build the test files");
    if (!ok)
        return test_finish("test_provider");
    test_crc();

    sh("cp prog noid wrongid sysroot/usr/bin/");
    expect_debug("prog", NULL, "no debug file anywhere");

    sh("cp prog.debug sysroot/usr/bin/");
    expect_debug("prog", "/usr/bin/prog.debug", "debuglink next to the object");
    sh("rm sysroot/usr/bin/prog.debug && mkdir -p sysroot/usr/bin/.debug && cp prog.debug sysroot/usr/bin/.debug/");
    expect_debug("prog", "/usr/bin/.debug/prog.debug", "debuglink in .debug/");
    sh("rm -r sysroot/usr/bin/.debug && cp prog.debug sysroot/usr/lib/debug/usr/bin/");
    expect_debug("prog", "/usr/lib/debug/usr/bin/prog.debug", "debuglink under /usr/lib/debug");

    /* A changed byte is a different file: the CRC must reject it. */
    sh("rm sysroot/usr/lib/debug/usr/bin/prog.debug && cp prog.debug sysroot/usr/bin/ && "
       "printf X | dd of=sysroot/usr/bin/prog.debug bs=1 seek=100 conv=notrunc status=none");
    expect_debug("prog", NULL, "debuglink with a wrong CRC");
    sh("rm sysroot/usr/bin/prog.debug");

    /* By build-id; the directory is the first byte in lowercase hex. */
    char id_path[512] = "";
    {
        char err[256];
        struct elf_file *f = elf_file_open(byte_source_open_file(test_path("prog"), err, sizeof(err)), err,
                                           sizeof(err));
        uint8_t id[64];
        size_t n = f ? elf_file_build_id(f, id, sizeof(id)) : 0;
        CHECK(n == 20, "prog build-id has %zu bytes", n);
        char hex[2 * 64 + 1] = "";
        for (size_t i = 0; i < n; i++)
            snprintf(hex + 2 * i, sizeof(hex) - 2 * i, "%02x", id[i]);
        snprintf(id_path, sizeof(id_path), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
        elf_file_close(f);
        /* eu-readelf's view of the same build-id, as a cross-check. */
        CHECK(run("eu-readelf -n '%s' | grep -q 'Build ID: %s'", test_path("prog"), hex), "eu-readelf disagrees");
    }
    char rel[2048];
    snprintf(rel, sizeof(rel), "mkdir -p \"$(dirname 'sysroot%s')\" && cp prog.debug 'sysroot%s'", id_path, id_path);
    sh(rel);
    expect_debug("prog", id_path, "by build-id");
    /* Another program's debug file under this build-id: refused. */
    snprintf(rel, sizeof(rel), "cp other.debug 'sysroot%s'", id_path);
    sh(rel);
    expect_debug("prog", NULL, "build-id path holding another build");

    /* CRC right but build-id wrong: refused too. */
    sh("cp other.debug sysroot/usr/bin/");
    expect_debug("wrongid", NULL, "debuglink to another build");

    /* Without a build-id only the CRC can match. */
    sh("cp noid.debug sysroot/usr/bin/");
    expect_debug("noid", "/usr/bin/noid.debug", "no build-id, debuglink only");

    /* No debug file and no DWARF in the object: nothing to read lines from. */
    {
        struct file_locator loc;
        sh("rm -f sysroot/usr/bin/noid.debug");
        struct debug_object *o = open_in_sysroot("noid", &loc);
        CHECK(o && debug_object_dwarf_elf(o) == NULL, "stripped object without debug file has DWARF?");
        CHECK(o && strcmp(symtab_origin(debug_object_symtab(o)), ".symtab") == 0, "stripped: symbols from %s",
              o ? symtab_origin(debug_object_symtab(o)) : "-");
        debug_object_close(o);
        file_locator_destroy(&loc);
        sh("cp prog.full sysroot/usr/bin/");
        o = open_in_sysroot("prog.full", &loc);
        CHECK(o && debug_object_dwarf_elf(o) == debug_object_elf(o), "unstripped object: DWARF not its own");
        debug_object_close(o);
        file_locator_destroy(&loc);
        char err[256] = "";
        file_locator_init(&loc);
        file_locator_add(&loc, file_provider_sysroot(sysroot));
        CHECK(debug_object_open(&loc, "/usr/bin/missing", err, sizeof(err)) == NULL && err[0],
              "missing object opened");
        file_locator_destroy(&loc);
    }
    test_locator();
    test_altlink();
    return test_finish("test_provider");
}
