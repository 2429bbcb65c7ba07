# Programs whose allocator is a library of their own (jemalloc, tcmalloc,
# mimalloc), shared or linked statically into the executable, against
# valgrind memcheck (sourced by intercept_allocator_*.sh).
#
# valgrind replaces such an allocator's functions only when told its soname
# (--soname-synonyms=somalloc=*jemalloc*; somalloc=NONE: the executable's
# own), and it gives its program GLIBCXX_FORCE_NEW=1 and GLIBCPP_FORCE_NEW=1
# (tcmalloc's start sets them otherwise, allocating): memtrace runs with the
# same two.  The figures must be equal, and memtrace must report no misuse
# error (valgrind reports a few mismatches in tcmalloc's and mimalloc's own
# code, where one address carries free, delete and delete[]: memtrace judges
# no family through such an address).  The JSON "allocators" must name the
# allocator first.
. "$MT_ROOT/selftest/tests/lib.bash"
need_tool valgrind valgrind
ALLOC_SRC=$MT_ROOT/selftest/programs/lib/alloc_api.c
# 20,000 malloc/free pairs: counting is exact at any number, and each pair
# is two breakpoint stops under the ASan-built tracer.  The issue's report
# used 100,000 (MT_ALLOC_PAIRS=100000 repeats it).
PAIRS=${MT_ALLOC_PAIRS:-20000}

# build OUT CFLAGS-AND-LIBS...: the test program.
alloc_build() {
    local out=$1; shift
    gcc $MT_TARGET_CFLAGS -std=gnu11 -g -O0 -o "$MT_TMP/$out" "$ALLOC_SRC" "$@" 2>"$MT_TMP/cc.err" ||
        fail "cannot build $out: $(tail -n 3 "$MT_TMP/cc.err")"
}

# The five figures of valgrind (SYNONYM as somalloc, "" for none) on ARGS;
# the program must end as it does alone (status 0).
alloc_valgrind() {
    local syn=$1 log; shift
    log=$(mktemp "$MT_TMP/vg.XXXXXX")
    local opt=()
    [ -n "$syn" ] && opt=(--soname-synonyms=somalloc="$syn")
    valgrind "${opt[@]}" --run-libc-freeres=no --run-cxx-freeres=no --log-file="$log" "$@" \
        >/dev/null 2>&1 || fail "valgrind: $* ended with status $?"
    valgrind_log_figures "$log"
}

# alloc_compare WHAT FIRST_ALLOCATOR VALGRIND_FIGURES PROGRAM ARGS...:
# memtrace's figures of PROGRAM must be VALGRIND_FIGURES, with no error, and
# the module that took the most calls must be FIRST_ALLOCATOR (a pattern on
# its path).
alloc_compare() {
    local what=$1 first=$2 vg=$3; shift 3
    local json=$MT_TMP/$what.json mt
    env GLIBCXX_FORCE_NEW=1 GLIBCPP_FORCE_NEW=1 "$MEMTRACE" -q -j -o "$json" "$@" >/dev/null \
        2>"$MT_TMP/$what.err" || fail "memtrace failed on $what: $(tail -n 3 "$MT_TMP/$what.err")"
    mt=$(memtrace_json_figures "$json")
    echo "$what: valgrind: $vg | memtrace: $mt"
    [ "$vg" = "$mt" ] || fail "$what: figures differ (allocs frees bytes in_use_bytes in_use_blocks)"
    python3 - "$json" "$first" "$what" <<'PY' || fail "$what: misuse errors or allocators wrong"
import fnmatch, json, sys
d = json.load(open(sys.argv[1]))
errs = [(e['kind'], e['function']) for e in d['errors']]
if errs or d.get('errors_not_listed'):
    sys.exit('%s: misuse errors valgrind does not report: %s' % (sys.argv[3], errs[:5]))
a = d.get('allocators') or ['(none)']
if not fnmatch.fnmatch(a[0], sys.argv[2]):
    sys.exit('%s: first allocator %s, not %s (all: %s)' % (sys.argv[3], a[0], sys.argv[2], a))
PY
}
