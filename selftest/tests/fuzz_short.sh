#!/usr/bin/env bash
# Every libFuzzer harness (selftest/fuzz/fuzz_*.c) builds against the
# project's sources, replays its committed seeds (regress-* seeds are inputs
# that once crashed it) and survives a few seconds of fuzzing under ASan and
# UBSan.  Long runs: make fuzz FUZZ_SECONDS=N.
set -u
cd "$MT_ROOT"
# Not niced (run-fuzzers.sh's default is nice 10, for long runs beside
# other work): in make check's pool a niced build starved behind the other
# tests and ran past its timeout.
FUZZ_NICE=${FUZZ_NICE:-0} FUZZ_OUT=$MT_TMP/fuzz selftest/fuzz/run-fuzzers.sh "${FUZZ_SHORT_SECONDS:-2}"
rc=$?
[ $rc -eq 77 ] && exit 77
exit $rc
