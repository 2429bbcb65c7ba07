#!/usr/bin/env bash
# The mmap family (mmap, mmap64 of a file, munmap whole and in the middle of
# a mapping, mremap grow, shrink and move): memtrace's `mapped` figure, from
# the console's `status` and from a JSON report, against /proc/PID/maps.
# The program stops itself (SIGSTOP) after each phase; the oracle for a
# phase is the growth of the process's mapped bytes since phase 0, when the
# C library had already mapped memory of its own (a 1 MiB malloc, a thread
# stack), which must not count.  [stack] is left out (it grows on its own).
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
cd "$MT_TMP"
head -c 65536 /dev/urandom > mapped_file

console_open mt.out -q -C "$MT_PROGS/intercept_mmap" "$MT_TMP/mapped_file" "$MT_TMP/pid"
cleanup() {
    exec 3>&-
    local p
    p=$(cat "$MT_TMP/pid" 2>/dev/null) && kill -CONT "$p" 2>/dev/null
    kill "$CONSOLE_PID" 2>/dev/null
}
trap cleanup EXIT

maps_bytes() {
    python3 - "$1" <<'PY'
import sys
total = 0
for line in open(f'/proc/{sys.argv[1]}/maps'):
    f = line.split()
    if len(f) >= 6 and f[5] == '[stack]':
        continue
    lo, hi = (int(x, 16) for x in f[0].split('-'))
    total += hi - lo
print(total)
PY
}

# Waits until the program has stopped itself after phase $1.
wait_phase() {
    wait_for_line mt.out "^phase $1\$"
    local end=$((SECONDS + 10)) state
    while :; do
        state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)
        [ "$state" = t ] || [ "$state" = T ] && return 0
        [ $SECONDS -lt $end ] || fail "the program did not stop after phase $1 (state $state)"
        sleep 0.05
    done
}

status_mapped() {
    console_cmd status
    sed -n 's/^ *mapped: \([0-9]*\) bytes in .*/\1/p' <<< "$CONSOLE_REPLY"
}

wait_for_line mt.out '^phase 0$'
pid=$(cat pid) || fail "no pid file"
for n in 0 1 2 3 4 5; do
    wait_phase $n
    now=$(maps_bytes "$pid")
    [ $n = 0 ] && base=$now
    mt=$(status_mapped)
    echo "phase $n: /proc/$pid/maps grew by $((now - base)) bytes; memtrace mapped: $mt"
    [ "$mt" = $((now - base)) ] || fail "phase $n: memtrace says $mt mapped bytes, /proc/PID/maps $((now - base))"
    if [ $n = 4 ]; then
        console_cmd "report -j > $MT_TMP/phase4.json"
        json=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["mapped"]["bytes"])' phase4.json) ||
            fail "no JSON report at phase 4"
        [ "$json" = $((now - base)) ] || fail "phase 4: the JSON report says $json mapped bytes, /proc/PID/maps $((now - base))"
    fi
    kill -CONT "$pid"
done
# The program ends; so does memtrace, with a final report.
exec 3>&-
wait "$CONSOLE_PID" || fail "memtrace failed: $(cat mt.out.err)"
final=$(sed -n 's/^ *mapped: \([0-9]*\) bytes in .*/\1/p' mt.out | tail -n 1)
[ "$final" = 0 ] || fail "final report: $final mapped bytes after everything was unmapped"
exit 0
