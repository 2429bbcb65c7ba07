/* demangle_cxx against c++filt: every function name of libstdc++'s and
 * libLLVM's symbol tables and of a C++ program (STL containers, lambdas in
 * class templates, packs, references to arrays, operators, anonymous
 * namespaces) built with g++ and with clang++, plus hand-picked corner
 * cases.  Any answer must be c++filt's, byte for byte, and a name c++filt
 * demangles must not be left alone (NULL is right only where c++filt
 * prints the name unchanged). */
#include <inttypes.h>

#include "selftest/unit/test_elf_util.h"
#include "shared/elf/elf_file.h"
#include "target/symbols/demangle.h"
#include "target/symbols/symtab.h"

static const char program_cpp[] =
    "#include <map>\n#include <string>\n#include <vector>\n#include <memory>\n#include <functional>\n"
    "#include <iostream>\n#include <unordered_map>\n#include <algorithm>\n"
    "namespace { struct Hidden { int x; virtual ~Hidden() {} }; }\n"
    "template <typename... T> int count_args(T... args) { return sizeof...(args); }\n"
    "template <typename T, int N> struct Fixed { T v[N]; T sum() const { T s{}; for (auto x : v) s += x; return s; } };\n"
    "struct Op { bool operator<(const Op &o) const { return v < o.v; } int operator()(int a) const { return a + v; }\n"
    "  Op &operator+=(const Op &o) { v += o.v; return *this; } operator long() const { return v; } int v; };\n"
    "int apply(int (*fn)(int), int x) { return fn(x); }\n"
    "int twice(int x) { return 2 * x; }\n"
    "void takes_array(int (&a)[3]) { a[0] = 1; }\n"
    "int member_ptr(int Op::*p, Op &o) { return o.*p; }\n"
    "template <typename T> struct Sorter { std::vector<T> v; void run() {\n"
    "  std::sort(v.begin(), v.end(), [](const T &a, const T &b) { return b < a; }); } };\n"
    "template <typename... Ts> struct Tuple { template <typename... Us> static int make(Us &&...us) { return sizeof...(Us); } };\n"
    "template <typename... Ts> int forward_all(Ts &&...ts) { return Tuple<Ts...>::make(static_cast<Ts &&>(ts)...); }\n"
    "template <typename T, unsigned N> unsigned len(const T (&)[N]) { return N; }\n"
    "int main() {\n"
    "  std::map<std::string, std::vector<int>> m; m[\"a\"].push_back(1);\n"
    "  auto sp = std::make_shared<Hidden>(); std::unique_ptr<int[]> up(new int[3]);\n"
    "  std::function<int(int)> f = [&](int x) { return x + (int)m.size(); };\n"
    "  std::unordered_map<int, std::string> um; um[1] = \"x\";\n"
    "  std::vector<Op> ops(3); std::sort(ops.begin(), ops.end()); ops[0] += ops[1];\n"
    "  Fixed<double, 4> fx{}; int arr[3]; takes_array(arr);\n"
    "  std::cout << f(2) << count_args(1, 2.0, \"x\") << ops[0](1) << apply(twice, 3) << fx.sum()\n"
    "            << (long)ops[0] << member_ptr(&Op::v, ops[0]) << std::endl;\n"
    "  Sorter<int> si{{3, 1, 2}}; si.run(); Sorter<std::string> ss{{\"b\", \"a\"}}; ss.run();\n"
    "  std::cout << forward_all(1, 2.0, ops[0], \"x\") << len(\"seventeen chars!!\") << std::endl;\n"
    "  return 0; }\n";

/* Corner cases c++filt is asked about too (not compared with fixed text). */
static const char *const corner_cases[] = {
    "_ZNSt6vectorIiSaIiEE9push_backERKi", "_ZNKSt6vectorIiSaIiEE4sizeEv", "_Z3fooIiEvT_", "_ZN3FooC2Ev",
    "_ZNSsC1Ev", "_ZplRK1AS1_", "_ZltI1AEbRKT_S3_", "_ZN1A1fEPFviEPA3_i", "_Z1fILi5EEvv", "_Z1fILj5EEvv",
    "_Z1fILb1EEvv", "_Z1fILc65EEvv", "_Z1fILin5EEvv", "_ZN1AcviEv", "_Z3fooB5cxx11v", "_ZZ4mainE1x",
    "_ZZ4mainENKUlvE_clEv", "_ZZ4mainENKUliE0_clEi", "_Z1fPKc", "_Z1fPVKc", "_Z1fRA3_i", "_Z1fPFPFivEvE",
    "_ZN3foo3barEv.cold", "_ZN3foo3barEv.constprop.0.isra.0", "_Znwm", "_ZdlPvm", "_ZdlPvm@CXXABI_1.3.9",
    "_ZTV3Foo", "_ZTI3Foo", "_ZTS3Foo", "_ZThn8_N3Foo3barEv", "_ZTv0_n24_N3Foo3barEv", "_ZGVZ4mainE1x", "_Z1fDn",
    "_Z1fIJidEEvDpT_", "_Z1fIJEEvDpT_", "_ZNKR1A1fEv", "_ZNKO1A1fEv", "_ZlsRSoRKSs", "_Z1fM1AFviE", "_Z1fM1Ai",
    "_Z1fA2_A3_i", "_ZN12_GLOBAL__N_16HiddenD0Ev", "_ZStL8__ioinit", "_ZL3barv", "_Z1fPA3_Ki",
    "_ZNSt8ios_base7failureB5cxx11C1EPKcRKSt10error_code", "_Z1fU8__vectori", "_Z1fRA18_Kc",
    "_Z3lenIcLj18EEjRAT0__KT_", "_Z11forward_allIJidR2OpRA2_KcEEiDpOT_",
    "_ZN6SorterIiE3runEvENKUlRKiS2_E_clES2_S2_", "_ZZN6SorterIiE3runEvENKUlRKiS3_E_clES3_S3_",
};

struct names {
    char **v;
    size_t n, cap;
};

static void add_name(struct names *ns, const char *s)
{
    if (strncmp(s, "_Z", 2) != 0 || strchr(s, '\n'))
        return;
    if (ns->n == ns->cap) {
        ns->cap = ns->cap ? 2 * ns->cap : 1024;
        ns->v = realloc(ns->v, ns->cap * sizeof(*ns->v));
    }
    ns->v[ns->n++] = strdup(s);
}

static void add_symbols_of(struct names *ns, const char *path)
{
    char err[256] = "";
    struct elf_file *f = elf_file_open(byte_source_open_file(path, err, sizeof(err)), err, sizeof(err));
    CHECK(f != NULL, "%s: %s", path, err);
    if (!f)
        return;
    struct symtab *t = symtab_load(f, NULL);
    size_t before = ns->n;
    for (size_t i = 0; i < symtab_count(t); i++)
        add_name(ns, symtab_entry(t, i, NULL, NULL));
    printf("%s: %zu mangled function names\n", path, ns->n - before);
    symtab_free(t);
    elf_file_close(f);
}

/* Every symbol nm lists (data, vtables, typeinfo, versioned names), not
 * only the functions the symbol table reader keeps. */
static void add_nm_symbols(struct names *ns, const char *path)
{
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "nm -D --defined-only '%s' 2>/dev/null; nm --defined-only '%s' 2>/dev/null", path,
             path);
    FILE *p = popen(cmd, "r");
    CHECK(p != NULL, "nm %s", path);
    static char line[1 << 16];
    size_t before = ns->n;
    while (p && fgets(line, sizeof(line), p)) {
        line[strcspn(line, "\n")] = 0;
        char *name = strrchr(line, ' ');
        add_name(ns, name ? name + 1 : line);
    }
    if (p)
        pclose(p);
    printf("%s: %zu mangled symbols from nm\n", path, ns->n - before);
}

/* Runs every name through c++filt and ours; returns how many we left alone. */
static size_t compare_with_cxxfilt(const struct names *ns, const char *label)
{
    const char *in = test_path("names.txt"), *out = test_path("cxxfilt.txt");
    FILE *f = fopen(in, "w");
    for (size_t i = 0; i < ns->n; i++)
        fprintf(f, "%s\n", ns->v[i]);
    fclose(f);
    CHECK(run("c++filt < '%s' > '%s'", in, out), "c++filt failed");
    FILE *o = fopen(out, "r");
    size_t unhandled = 0, differ = 0;
    static char line[1 << 16];
    for (size_t i = 0; o && i < ns->n; i++) {
        if (!fgets(line, sizeof(line), o)) {
            CHECK(false, "%s: c++filt gave fewer lines", label);
            break;
        }
        line[strcspn(line, "\n")] = 0;
        char *ours = demangle_cxx(ns->v[i]);
        if (!ours) {
            /* Left alone: right only where c++filt leaves it alone too. */
            if (strcmp(line, ns->v[i]) != 0 && unhandled++ < 5)
                printf("%s: not handled: %s (c++filt: %s)\n", label, ns->v[i], line);
        } else if (strcmp(ours, line) != 0) {
            if (differ++ < 10)
                fprintf(stderr, "%s: %s\n  ours:     %s\n  c++filt:  %s\n", label, ns->v[i], ours, line);
        }
        free(ours);
    }
    if (o)
        fclose(o);
    printf("%s: %zu names, %zu differ from c++filt, %zu not handled\n", label, ns->n, differ, unhandled);
    CHECK(differ == 0, "%s: %zu names demangle differently from c++filt", label, differ);
    CHECK(unhandled == 0, "%s: %zu names c++filt demangles are left mangled", label, unhandled);
    return unhandled;
}

static void free_names(struct names *ns)
{
    for (size_t i = 0; i < ns->n; i++)
        free(ns->v[i]);
    free(ns->v);
    memset(ns, 0, sizeof(*ns));
}

int main(void)
{
    struct names ns = {0};
    for (size_t i = 0; i < sizeof(corner_cases) / sizeof(corner_cases[0]); i++)
        add_name(&ns, corner_cases[i]);
    compare_with_cxxfilt(&ns, "corner cases");
    free_names(&ns);

    const char *libstdcxx = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6";
    if (access(libstdcxx, R_OK) == 0) {
        add_symbols_of(&ns, libstdcxx);
        add_nm_symbols(&ns, libstdcxx);
        compare_with_cxxfilt(&ns, "libstdc++");
        free_names(&ns);
    }
    /* One large C++ library: whichever libLLVM Debian installed (clang's). */
    static const char *const big[] = { "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1",
                                       "/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1" };
    for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++) {
        if (access(big[i], R_OK) != 0)
            continue;
        add_symbols_of(&ns, big[i]);
        add_nm_symbols(&ns, big[i]);
        CHECK(ns.n > 10000, "%s: only %zu C++ names", big[i], ns.n);
        compare_with_cxxfilt(&ns, big[i]);
        free_names(&ns);
        break;
    }

    const char *src = test_path("program.cpp");
    CHECK(write_text(src, program_cpp), "cannot write %s", src);
    char *src_copy = strdup(src);
    const char *compilers[] = {"g++", "clang++"};
    for (size_t i = 0; i < 2; i++) {
        char exe[64];
        snprintf(exe, sizeof(exe), "prog-%s", compilers[i]);
        char *exe_path = strdup(test_path(exe));
        bool built = run("%s -std=c++17 -O0 -g -o '%s' '%s'", compilers[i], exe_path, src_copy);
        CHECK(built, "cannot build with %s", compilers[i]);
        if (built) {
            add_symbols_of(&ns, exe_path);
            add_nm_symbols(&ns, exe_path);
            compare_with_cxxfilt(&ns, compilers[i]);
            CHECK(ns.n > 40, "%s: only %zu C++ names", compilers[i], ns.n);
            free_names(&ns);
        }
        free(exe_path);
    }
    free(src_copy);

    /* Not C++ names: left alone. */
    CHECK(demangle_cxx("malloc") == NULL && demangle_cxx("_Z") == NULL && demangle_cxx("_Zx") == NULL &&
              demangle_cxx("") == NULL && demangle_cxx(NULL) == NULL,
          "non-C++ names demangled");
    return test_finish("test_symtab_demangle");
}
