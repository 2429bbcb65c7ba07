#!/usr/bin/env bash
# The tracer's own memory stays bounded under load: many live blocks, many
# distinct stacks, many threads alive at once (selftest/programs/rely_load.c,
# whose counts are known by construction).  With everything still live, the
# tracer's peak RSS (VmHWM of the TracerPid in the target's /proc status)
# must stay under a generous bound derived from the performance target of
# 4 MiB + 64 B per live block: a leak or a per-event growth fails it.
# Release build (ASan's shadow memory would be measured otherwise).
# Full sizes (the reliability target, docs/reliability.md): RELY_LOAD_BLOCKS=1000000 RELY_LOAD_STACKS=100000
# RELY_LOAD_THREADS=500 (about a minute on 2 cores).
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
cd "$MT_TMP"
MT_REL=$MT_ROOT/${MT_RELEASE_BUILD:-build}/memtrace
[ -x "$MT_REL" ] || MT_REL=$MEMTRACE
PROG=$MT_PROGS/rely_load

# run MODE N BOUND_KB: prints the tracer's peak RSS in kB, fails over BOUND_KB.
run() {
    local mode=$1 n=$2 bound=$3 flag=$MT_TMP/flag.$1
    rm -f "$flag"
    local start=$SECONDS
    "$MT_REL" -q -j -o "$MT_TMP/report.$mode.json" "$PROG" "$mode" "$n" "$flag" > "$MT_TMP/out.$mode" 2> "$MT_TMP/err.$mode" &
    local mt=$!
    for ((t = 0; t < 1800; t++)); do
        grep -qs '^ready' "$MT_TMP/out.$mode" && break
        kill -0 $mt 2>/dev/null || break
        sleep 0.1
    done
    local pid
    pid=$(awk '/^ready/ {print $2}' "$MT_TMP/out.$mode")
    [ -n "$pid" ] || { touch "$flag"; fail "$mode $n: the program never got ready: $(tail -n 3 "$MT_TMP/err.$mode")"; }
    local tracer hwm rss
    tracer=$(awk '/^TracerPid:/ {print $2}' /proc/"$pid"/status)
    hwm=$(awk '/^VmHWM:/ {print $2}' /proc/"$tracer"/status)
    rss=$(awk '/^VmRSS:/ {print $2}' /proc/"$tracer"/status)
    touch "$flag"
    wait $mt || fail "$mode $n: memtrace failed: $(tail -n 3 "$MT_TMP/err.$mode")"
    echo "$mode $n: tracer VmHWM ${hwm} kB (VmRSS ${rss} kB), bound ${bound} kB, $((SECONDS - start)) s"
    [ "$hwm" -le "$bound" ] || fail "$mode $n: tracer peak RSS ${hwm} kB over the bound ${bound} kB"
    # The report saw the load: its live block count is at least the program's.
    python3 - "$MT_TMP/report.$mode.json" "$mode" "$n" <<'PY' || fail "$mode $n: report does not show the load"
import json, sys
h = json.load(open(sys.argv[1]))['heap']
mode, n = sys.argv[2], int(sys.argv[3])
need = n if mode != 'threads' else 0
print("  report: %d blocks in use" % h['in_use_blocks'])
sys.exit(0 if h['in_use_blocks'] >= need else 1)
PY
}

BLOCKS=${RELY_LOAD_BLOCKS:-100000}
STACKS=${RELY_LOAD_STACKS:-10000}
THREADS=${RELY_LOAD_THREADS:-200}
# Generous: 16 MiB of base (code, libc's own, DWARF of the program and libc)
# plus 3x the target's 64 B per block; 1 KiB per distinct stack (up to 20
# PCs of 8 bytes, hashing and report work); 32 KiB per live thread.
run blocks "$BLOCKS" $((16384 + BLOCKS * 192 / 1024))
run stacks "$STACKS" $((16384 + STACKS))
run threads "$THREADS" $((16384 + THREADS * 32))
