#!/usr/bin/env bash
# Every libFuzzer harness (selftest/fuzz/fuzz_*.c) builds against the
# project's sources, replays its committed seeds (regress-* seeds are inputs
# that once crashed it) and survives a few seconds of fuzzing under ASan and
# UBSan.  Long runs: make fuzz FUZZ_SECONDS=N.
set -u
cd "$MT_ROOT"
FUZZ_OUT=$MT_TMP/fuzz selftest/fuzz/run-fuzzers.sh "${FUZZ_SHORT_SECONDS:-2}"
rc=$?
[ $rc -eq 77 ] && exit 77
exit $rc
