#!/usr/bin/env bash
# Crafted recordings (selftest/fuzz/seeds/record/regress-*.rec, written by
# selftest/fuzz/craft_record.py: figures no recorder writes) replayed in
# every format and through --diff: each run either writes its report or
# stops with exit 1 and one line "memtrace: error: ...", never an abort, an
# out-of-memory exit or a report that grows without end (the file size limit
# below turns one into SIGXFSZ).  Oracles: the crafted files' own figures
# (a count that wraps below zero is refused as such; 2^60 allocations are
# printed as 2^60 by the JSON report), and gzip -t for the heaptrack files
# written.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
cd "$MT_TMP" || fail "no scratch directory"
seeds=$MT_ROOT/selftest/fuzz/seeds/record
ls "$seeds"/regress-*.rec >/dev/null 2>&1 || fail "no crafted recordings in $seeds"

# The committed files are the generator's: a change to one shows here.
python3 "$MT_ROOT/selftest/fuzz/craft_record.py" crafted || fail "craft_record.py failed"
for f in crafted/*.rec; do
    cmp -s "$f" "$seeds/${f##*/}" || fail "$seeds/${f##*/} differs from craft_record.py's"
done

formats=(text json folded html heaptrack massif)
"$MEMTRACE" --help 2>&1 | grep -q pprof && formats+=(pprof)
# Every report below is a few KiB: 512 KiB of output is a runaway writer.
ulimit -f 512

# run NAME ARGS...: memtrace --replay ARGS; sets rc and err.
run() {
    local name=$1
    shift
    "$MEMTRACE" --replay "$@" >"$name.out" 2>"$name.err"
    rc=$?
    err=$(cat "$name.err")
    if [ $rc -gt 128 ]; then
        fail "$name: killed by signal $((rc - 128)) ($(stat -c %s "$name.out" 2>/dev/null) bytes out): $(head -c 300 "$name.err")"
    fi
    case $rc in
    0) grep -qv '^memtrace: warning: ' "$name.err" && fail "$name: exit 0 with: $err" ;;
    1) [ "$(wc -l < "$name.err")" = 1 ] || fail "$name: not one line: $err"
       grep -q '^memtrace: error: ' "$name.err" || fail "$name: $err"
       grep -q 'out of memory' "$name.err" && fail "$name: $err" ;;
    *) fail "$name: exit $rc: $err" ;;
    esac
    return 0
}

for rec in "$seeds"/regress-*.rec; do
    base=${rec##*/}
    base=${base%.rec}
    for fmt in "${formats[@]}"; do
        out=$base.$fmt.report
        [ "$fmt" = heaptrack ] && out=$base.gz
        run "$base.$fmt" "$rec" --format "$fmt" -o "$out"
        echo "$base --format $fmt: exit $rc ${err:+($err)}"
        case $base in
        regress-wrapped-*)
            [ $rc = 1 ] && grep -q 'goes below zero' "$base.$fmt.err" ||
                fail "$base: a count below zero was not refused: $err" ;;
        esac
        if [ "$fmt" = heaptrack ] && [ $rc = 0 ]; then
            gzip -t "$out" || fail "$base: the heaptrack file is not gzip"
        fi
    done
    for fmt in text json folded; do
        run "$base.diff.$fmt" "$rec" --diff 0 0.001 --format "$fmt"
        echo "$base --diff --format $fmt: exit $rc"
    done
done

# A consistent file with 2^60 allocations: every report prints them; the
# heaptrack export (one event per allocation) refuses in one line.
python3 - regress-huge-allocs.json.report <<'PY' || fail "huge-allocs: the JSON report lost the file's count"
import json, sys
h = json.load(open(sys.argv[1]))['heap']
assert h['allocs'] == 1 << 60, h
print('2^60 allocations in the JSON report:', h['allocs'])
PY
grep -q 'heaptrack: .* allocations to write' regress-huge-allocs.heaptrack.err ||
    fail "huge-allocs: heaptrack: $(cat regress-huge-allocs.heaptrack.err)"
exit 0
