#!/usr/bin/env bash
# Builds every libFuzzer harness selftest/fuzz/fuzz_NAME.c against the
# project's own sources and fuzzes each one for a bounded time.
#
#   selftest/fuzz/run-fuzzers.sh [SECONDS] [NAME...]     (make fuzz FUZZ_SECONDS=N)
#
# SECONDS per harness (default 60); NAMEs pick harnesses (default: all).
# Before fuzzing, every committed seed of selftest/fuzz/seeds/NAME/ is run
# once: crashes found earlier are committed there as regress-* seeds, so this
# replay is their regression test.  The seeds are then copied to a scratch
# corpus (never written back) and libFuzzer mutates from there.
#
# Per harness it prints the executions, the coverage (libFuzzer's cov/ft
# counters) and the crashes; a crashing, leaking, hanging or OOM input is
# saved under $FUZZ_OUT/artifacts/ and the script exits 1.  Exit 77: clang
# or its libFuzzer runtime is missing.
#
# Environment: FUZZ_BUILD (build dir, default build-fuzz), FUZZ_OUT (scratch,
# default $FUZZ_BUILD/run), FUZZ_NICE (nice level, default 10),
# FUZZ_KEEP_CORPUS=1 (go on from the scratch corpus of an earlier run).
set -u
cd "$(dirname "$0")/../.."
SECONDS_EACH=${1:-60}
shift || true
BUILD=${FUZZ_BUILD:-build-fuzz}
OUT=${FUZZ_OUT:-$BUILD/run}
NICE=${FUZZ_NICE:-10}

SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"

if ! command -v clang >/dev/null; then
    echo "clang is not installed"; exit 77
fi
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' >"$probe/p.c"
if ! clang -fsanitize=fuzzer "$probe/p.c" -o "$probe/p" 2>/dev/null; then
    echo "clang has no libFuzzer runtime (libclang_rt.fuzzer)"; exit 77
fi

# Options per harness: inputs bigger than these teach the fuzzer nothing new.
max_len_of() {
    case $1 in
        elf|line) echo 65536 ;;
        mdns) echo 1500 ;;
        http) echo 8192 ;;
        http_response) echo 9000 ;;
        demangle) echo 512 ;;
        expr|x86_insn) echo 256 ;;
        *) echo 4096 ;;
    esac
}

# The project's sources once, instrumented for coverage and the sanitizers,
# through the Makefile's own rules (incremental on later runs).
# Harnesses are native programs: a `make check ARCH=i386` around this must
# not make their library 32-bit (command-line variables reach sub-makes).
if ! nice -n "$NICE" make -s -j2 BUILD="$BUILD" ARCH="$(uname -m)" CC=clang \
        CFLAGS="-O1 -g -fsanitize=fuzzer-no-link $SAN" "$BUILD/libmt.a" >"$probe/make.log" 2>&1; then
    cat "$probe/make.log"; echo "building $BUILD/libmt.a failed"; exit 1
fi

# libiberty's demangler (behind demangle_cxx) instrumented the same way,
# from binutils-source, so the demangle harness explores it too.
iberty=-liberty
if [ ! -f "$BUILD/iberty/libiberty.a" ] &&
        ! nice -n "$NICE" tools/cross-iberty.sh "$BUILD/iberty" clang -g -O1 -fsanitize=fuzzer-no-link $SAN \
            >"$probe/iberty.log" 2>&1; then
    echo "libiberty from binutils-source not built (uninstrumented -liberty used):"; tail -3 "$probe/iberty.log"
fi
[ -f "$BUILD/iberty/libiberty.a" ] && iberty=$BUILD/iberty/libiberty.a
# The console's line editor, when the Makefile found libedit (as it does).
edit_libs=()
[ -f "$(clang -print-file-name=libedit.a)" ] && edit_libs=(-ledit -lbsd -lmd -ltinfo)

if [ $# -gt 0 ]; then
    names=("$@")
else
    names=()
    for f in selftest/fuzz/fuzz_*.c; do n=${f##*/fuzz_}; names+=("${n%.c}"); done
fi

mkdir -p "$BUILD/fuzz" "$OUT/artifacts"
status=0
printf '%-10s %6s %10s %7s %7s %s\n' harness secs execs cov ft result | tee "$OUT/summary"
for name in "${names[@]}"; do
    src=selftest/fuzz/fuzz_$name.c
    bin=$BUILD/fuzz/fuzz_$name
    [ -f "$src" ] || { echo "no harness $src"; status=1; continue; }
    # A harness may compile host-fs sources in (fuzz_http): those count too.
    if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ] || [ "$BUILD/libmt.a" -nt "$bin" ] ||
       [ -n "$(find host-fs -name "*.c" -newer "$bin" 2>/dev/null | head -n 1)" ]; then
        if ! nice -n "$NICE" clang -std=gnu11 -g -O1 -I. -D_GNU_SOURCE -fsanitize=fuzzer $SAN \
                "$src" "$BUILD/libmt.a" "$iberty" -lz -lpthread -lprotobuf-c "${edit_libs[@]}" -o "$bin" 2>"$OUT/$name.build.log"; then
            cat "$OUT/$name.build.log"; echo "$name: build failed"; status=1; continue
        fi
    fi
    seeds=selftest/fuzz/seeds/$name
    corpus=$OUT/corpus/$name
    [ "${FUZZ_KEEP_CORPUS:-0}" = 1 ] || rm -rf "$corpus"
    mkdir -p "$corpus"
    [ -d "$seeds" ] && cp "$seeds"/* "$corpus/" 2>/dev/null
    opts=(-max_len="$(max_len_of "$name")" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024
          -print_final_stats=1 -artifact_prefix="$OUT/artifacts/$name-")
    log=$OUT/$name.log
    # Regression replay: every committed seed exactly once.
    if [ -d "$seeds" ] && ls "$seeds"/* >/dev/null 2>&1; then
        if ! nice -n "$NICE" "$bin" "${opts[@]}" "$seeds"/* >"$OUT/$name.replay.log" 2>&1; then
            tail -n 30 "$OUT/$name.replay.log"
            printf '%-10s %6s %10s %7s %7s %s\n' "$name" 0 - - - "SEED CRASH" | tee -a "$OUT/summary"
            status=1; continue
        fi
    fi
    before=$(ls "$OUT/artifacts" | grep -c "^$name-" || true)
    nice -n "$NICE" "$bin" "${opts[@]}" -max_total_time="$SECONDS_EACH" "$corpus" >"$log" 2>&1
    rc=$?
    after=$(ls "$OUT/artifacts" | grep -c "^$name-" || true)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
    if [ "$rc" -ne 0 ] || [ "$after" -gt "$before" ]; then
        result="CRASH rc=$rc: $(ls -t "$OUT/artifacts" | grep "^$name-" | head -n 1)"
        grep -m 3 -E 'ERROR: |runtime error|SUMMARY' "$log" | sed 's/^/    /'
        status=1
    else
        result=ok
    fi
    printf '%-10s %6s %10s %7s %7s %s\n' "$name" "$SECONDS_EACH" "${execs:-?}" "${cov:-?}" \
        "${ft:-?}" "$result" | tee -a "$OUT/summary"
done
echo "logs and artifacts: $OUT"
exit $status
