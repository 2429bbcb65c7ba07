#!/usr/bin/env bash
# The ELF and demangler fuzz targets still build with libFuzzer, run every
# seed cleanly and survive a short round of fuzzing under ASan and UBSan.
# (Long runs are `make fuzz`.)
set -u
cd "$MT_ROOT"
command -v clang >/dev/null || { echo "clang not installed"; exit 77; }
bin=$MT_TMP/fuzz_elf
srcs="target/elf/elf_file.c target/elf/elf_compress.c target/symbols/elf_symbols.c
      target/symbols/symtab.c target/symbols/demangle.c target/files/byte_source.c
      target/dwarf/cursor.c shared/xalloc.c"
if ! clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I. \
        selftest/fuzz/fuzz_elf.c $srcs -lz -o "$bin" 2>"$MT_TMP/build.log"; then
    if grep -q "fuzzer" "$MT_TMP/build.log" && ! clang -fsanitize=fuzzer -x c /dev/null -o /dev/null 2>/dev/null; then
        echo "clang has no libFuzzer runtime"; exit 77
    fi
    cat "$MT_TMP/build.log"; exit 1
fi
# Every seed once, then a short round of mutations on a copy of the seeds.
"$bin" selftest/fuzz/seeds/elf/* || exit 1
mkdir -p "$MT_TMP/corpus"
cp selftest/fuzz/seeds/elf/* "$MT_TMP/corpus/"
"$bin" -max_total_time=${ELF_FUZZ_SECONDS:-15} -max_len=65536 -timeout=10 -rss_limit_mb=1024 \
    -artifact_prefix="$MT_TMP/" "$MT_TMP/corpus" 2>&1 | tail -n 5
[ "${PIPESTATUS[0]}" -eq 0 ] || exit 1

dbin=$MT_TMP/fuzz_demangle
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I. \
    selftest/fuzz/fuzz_demangle.c target/symbols/demangle.c shared/xalloc.c -o "$dbin" || exit 1
mkdir -p "$MT_TMP/dcorpus"
cp selftest/fuzz/seeds/demangle/* "$MT_TMP/dcorpus/"
"$dbin" -max_total_time=${ELF_FUZZ_SECONDS:-10} -max_len=512 -timeout=10 \
    -artifact_prefix="$MT_TMP/d-" "$MT_TMP/dcorpus" 2>&1 | tail -n 3
exit "${PIPESTATUS[0]}"
