/* objects/object.c: each part of an object loads once and keeps how it
 * went.  Oracles: the dynamic linker (dladdr: where getpid is in libc, and
 * the bytes it mapped there) and libelf (which sections libc has).  Failures
 * keep a code and the reason, and a part read from a failed one says so. */
#include <dlfcn.h>
#include <gelf.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "selftest/unit/test.h"
#include "target/files/provider.h"
#include "target/objects/object.h"

static struct object *open_path(const char *path, struct file_locator *loc)
{
    return object_new(&(struct object_origin){ .pid = -1, .path = path, .locator = loc });
}

/* Does libelf find a section of this name in path? */
static bool libelf_has_section(const char *path, const char *name)
{
    elf_version(EV_CURRENT);
    int fd = open(path, O_RDONLY);
    Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
    size_t shstrndx = 0;
    bool found = false;
    if (e && elf_getshdrstrndx(e, &shstrndx) == 0)
        for (Elf_Scn *s = NULL; !found && (s = elf_nextscn(e, s));) {
            GElf_Shdr sh;
            const char *n = gelf_getshdr(s, &sh) ? elf_strptr(e, shstrndx, sh.sh_name) : NULL;
            found = n && strcmp(n, name) == 0;
        }
    if (e)
        elf_end(e);
    if (fd >= 0)
        close(fd);
    return found;
}

int main(void)
{
    struct file_locator loc;
    file_locator_init(&loc); /* no provider: no debug object is ever found */

    /* A file that is not there: the mapped file fails, and the CFI read
     * from it says so with the same reason, each once. */
    struct object *o = open_path("/nonexistent/libnothing.so", &loc);
    CHECK(object_error(o, OBJECT_CFI) == OBJECT_UNTRIED);
    CHECK(object_mapped_elf(o) == NULL);
    CHECK(object_error(o, OBJECT_MAPPED) == OBJECT_E_OPEN);
    CHECK(object_why(o, OBJECT_MAPPED) != NULL);
    CHECK(object_cfi(o) == NULL);
    CHECK(object_error(o, OBJECT_CFI) == OBJECT_E_DEPENDS);
    CHECK(object_why(o, OBJECT_CFI) && strcmp(object_why(o, OBJECT_CFI), object_why(o, OBJECT_MAPPED)) == 0);
    CHECK(object_exidx(o) == NULL && object_error(o, OBJECT_EXIDX) == OBJECT_E_DEPENDS);
    CHECK(object_export(o, "getpid") == 0);
    object_free(o);

    /* A file that is not ELF. */
    char path[] = "/tmp/mt-object-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0 && write(fd, "not an ELF file, only text\n", 27) == 27);
    if (fd >= 0)
        close(fd);
    o = open_path(path, &loc);
    CHECK(object_mapped_elf(o) == NULL);
    CHECK(object_error(o, OBJECT_MAPPED) == OBJECT_E_FORMAT, "error %d: %s", object_error(o, OBJECT_MAPPED),
          object_why(o, OBJECT_MAPPED));
    object_free(o);
    unlink(path);

    /* libc, as the dynamic linker mapped it for us. */
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    void *fn = libc ? dlsym(libc, "getpid") : NULL;
    Dl_info info;
    CHECK(fn && dladdr(fn, &info) && info.dli_fname && info.dli_fname[0] == '/');
    if (!fn || !info.dli_fname || info.dli_fname[0] != '/')
        return test_end("test_object");
    uint64_t vaddr = (uint64_t)((uintptr_t)fn - (uintptr_t)info.dli_fbase);
    o = open_path(info.dli_fname, &loc);
    CHECK(strcmp(object_path(o), info.dli_fname) == 0);
    struct elf_file *f = object_mapped_elf(o);
    CHECK(f != NULL && object_error(o, OBJECT_MAPPED) == OBJECT_LOADED && !object_why(o, OBJECT_MAPPED));
    CHECK(object_mapped_elf(o) == f, "the file is opened once");
    CHECK(object_export(o, "getpid") == vaddr, "getpid at %#llx, the dynamic linker says %#llx",
          (unsigned long long)object_export(o, "getpid"), (unsigned long long)vaddr);
    CHECK(!object_is_static_executable(o));

    bool has_eh = libelf_has_section(info.dli_fname, ".eh_frame");
    struct cfi_table *cfi = object_cfi(o);
    CHECK((cfi != NULL) == has_eh, "CFI %p, libelf: .eh_frame %s", (void *)cfi, has_eh ? "yes" : "no");
    CHECK(object_error(o, OBJECT_CFI) == (has_eh ? OBJECT_LOADED : OBJECT_E_ABSENT));
    CHECK(object_cfi(o) == cfi, "the CFI is read once");

    bool has_exidx = libelf_has_section(info.dli_fname, ".ARM.exidx");
    CHECK((object_exidx(o) != NULL) == has_exidx);
    CHECK(object_error(o, OBJECT_EXIDX) == (has_exidx ? OBJECT_LOADED : OBJECT_E_ABSENT));

    /* No provider finds the debug object: said once, and kept. */
    CHECK(object_debug_object(o) == NULL && object_error(o, OBJECT_DEBUG) == OBJECT_E_OPEN);
    CHECK(object_symbolizer(o) == NULL);

    /* Function starts from the mapped file: getpid's first bytes, as the
     * process has them. */
    uint8_t code[4];
    uint64_t off = 0;
    size_t n = object_func_code(o, vaddr + sizeof(code), &off, code, sizeof(code));
    CHECK(n == sizeof(code) && off == sizeof(code), "%zu bytes, %llu from the start", n,
          (unsigned long long)off);
    CHECK(n != sizeof(code) || memcmp(code, fn, sizeof(code)) == 0, "getpid's bytes differ");
    CHECK(object_error(o, OBJECT_STARTS) != OBJECT_UNTRIED);
    object_free(o);
    dlclose(libc);
    file_locator_destroy(&loc);
    return test_end("test_object");
}
