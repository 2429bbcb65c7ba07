#!/usr/bin/env bash
# --sample keeps the stacks of a sample of the allocations only: the
# totals (allocs, frees, bytes, in use, peak, temporary), the block table
# and so the leak scan must stay exact.  Compared with valgrind memcheck
# (HEAP SUMMARY, LEAK SUMMARY) and with memtrace's own exact run, at a
# rate that leaves most blocks unsampled and some sampled; the agent on
# three programs, the breakpoint engine on the leak program.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
. "$MT_ROOT/selftest/tests/leak_common.bash"
need_tool valgrind valgrind
export MEMTRACE_SAMPLE_SEED=35

# The figures that must not move: the five valgrind has, temporary, the peak.
exact_figures() {
    python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
h, p = d['heap'], d['peak']
print(' '.join(str(v) for v in (h['allocs'], h['frees'], h['bytes_allocated'], h['in_use_bytes'],
                                h['in_use_blocks'], h['temporary'], p['bytes'], p['blocks'])))
PY
}

# valgrind once per program: its HEAP SUMMARY ($VG_FIG) and LEAK SUMMARY ($VG_LEAK).
valgrind_once() {
    valgrind_leaks "$@" || fail "valgrind failed on $*"
    VG_FIG=$(valgrind_log_figures "$VG_LOG") || fail "$VG_FIG"
    if grep -q 'All heap blocks were freed' "$VG_LOG"; then
        VG_LEAK="0 0 0 0 0 0 0 0 0 0"
    else
        VG_LEAK=$(leak_summary_of_text "$VG_LOG") || fail "$VG_LEAK"
    fi
}

check() { # ENGINE EXACT PROGRAM ARGS...  (EXACT 1: the exact run's figures too)
    local engine=$1 exact=$2; shift 2
    local name mt_exact mt_sampled ls le
    name=$(basename "$1")
    "$MEMTRACE" -q -a --engine="$engine" --sample 256 -j -o "$MT_TMP/sampled.json" "$@" >/dev/null ||
        fail "memtrace --sample ($engine) failed on $name"
    mt_sampled=$(exact_figures "$MT_TMP/sampled.json") || fail "no figures in the sampled report"
    ls=$(leak_summary_of_json "$MT_TMP/sampled.json") || fail "$ls"
    echo "$engine $name: valgrind $VG_FIG | sampled $mt_sampled"
    echo "  leaks: valgrind $VG_LEAK | sampled $ls"
    [ "$(echo "$mt_sampled" | cut -d' ' -f1-5)" = "$VG_FIG" ] ||
        fail "$name ($engine): --sample's HEAP SUMMARY differs from valgrind's"
    [ "$(echo "$VG_LEAK" | cut -d' ' -f1-8)" = "$(echo "$ls" | cut -d' ' -f1-8)" ] ||
        fail "$name ($engine): --sample's LEAK SUMMARY differs from valgrind's"
    [ "$exact" = 1 ] || return 0
    "$MEMTRACE" -q -a --engine="$engine" -j -o "$MT_TMP/exact.json" "$@" >/dev/null ||
        fail "memtrace ($engine) failed on $name"
    mt_exact=$(exact_figures "$MT_TMP/exact.json") || fail "no figures in the exact report"
    le=$(leak_summary_of_json "$MT_TMP/exact.json") || fail "$le"
    echo "  exact run: $mt_exact"
    [ "$mt_sampled" = "$mt_exact" ] || fail "$name ($engine): --sample changed the totals or the peak"
    [ "$le" = "$ls" ] || fail "$name ($engine): leak summary exact [$le] sampled [$ls]"
}

# (threads: the peak and the temporary allocations depend on how they
# interleave, which changes from run to run: mt_churn against valgrind only.)
valgrind_once "$MT_PROGS/leak_kinds"
check agent 1 "$MT_PROGS/leak_kinds"
check ptrace 0 "$MT_PROGS/leak_kinds"
valgrind_once "$MT_PROGS/mt_churn" 4 1000
check agent 0 "$MT_PROGS/mt_churn" 4 1000
valgrind_once "$MT_PROGS/peak_temp"
check agent 1 "$MT_PROGS/peak_temp"

# The blocks not sampled are one pseudo-stack, named as such in the loss
# records, and the sampled ones keep their real stacks.
"$MEMTRACE" -q -a --sample 256 -o "$MT_TMP/sampled.txt" "$MT_PROGS/leak_kinds" >/dev/null ||
    fail "memtrace --sample (text) failed"
grep -qx '    #0 \[not sampled: no stack kept under --sample\]' "$MT_TMP/sampled.txt" ||
    fail "no loss record under the not-sampled pseudo-stack"
grep -qE '^    #[0-9]+ main\(\) in ' "$MT_TMP/sampled.txt" || fail "no sampled stack kept its frames"
grep -q '^memtrace sample: .*--sample 256' "$MT_TMP/sampled.txt" || fail "the text report does not say it is sampled"
echo "totals, peak and leaks exact under --sample"
