#!/usr/bin/env bash
# `monitor 1` on a console fed by a pipe, attached with -p to the phases
# program: at least 3 dated summaries within 3.5 s, about a second apart by
# this script's own clock; their growth lines add up to what the program
# allocated meanwhile (valgrind's figures for phase 1); `monitor 0` stops
# them; `quit` leaves the program to finish with its untraced output.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
cd "$MT_TMP"
PROG="$MT_PROGS/phases"

# What phase 1 leaves in use, by valgrind when it is there; by the program's
# own pattern (30 x 64 + 8 x 100 bytes in 31 blocks) when not.
phase1="$((30 * 64 + 800)) 31"
mkdir vgctl && touch vgctl/go0 vgctl/go1 vgctl/go2 vgctl/go3
if command -v valgrind >/dev/null; then
    vg1=$(valgrind_summary "$PROG" vgctl 1) || fail "valgrind, stop after phase 1"
    read -r _ _ _ b k <<< "$vg1"
    [ "$b $k" = "$phase1" ] || fail "valgrind says phase 1 leaves $b $k in use, not $phase1"
fi
untraced=$("$PROG" vgctl 2>&1) || fail "untraced run failed"

phases_start
console_open mt.out -q -p "$prog"
console_cmd status   # returns once attached and answering
[ "$(summary_figures <<< "$CONSOLE_REPLY")" = "0 0 0 0 0" ] || fail "status right after attach: $CONSOLE_REPLY"

ticks() { grep -c '^status at ' mt.out; }
before=$(ticks)
ms() { echo $(( $(date +%s%N) / 1000000 )); }
start=$(ms)
printf 'monitor 1\n' >&3
arrivals=()
go_sent=false
while :; do
    elapsed=$(( $(ms) - start ))
    [ $elapsed -gt 3500 ] && break
    n=$(ticks)
    while [ $((before + ${#arrivals[@]})) -lt "$n" ]; do arrivals+=("$elapsed"); done
    # Phase 1 runs between the first and the second summary.
    if ! $go_sent && [ ${#arrivals[@]} -ge 1 ]; then touch ctl/go0; go_sent=true; fi
    sleep 0.02
done
echo "summaries arrived after: ${arrivals[*]} ms"
[ ${#arrivals[@]} -ge 3 ] || fail "only ${#arrivals[@]} summaries in 3.5 s after 'monitor 1': $(cat mt.out)"
grep -qx 'monitor: every 1 s' mt.out || fail "monitor 1 not acknowledged: $(cat mt.out)"
python3 - "${arrivals[@]}" <<'PY' || fail "summaries not a second apart"
import sys
t = [int(x) / 1000 for x in sys.argv[1:]]
gaps = [b - a for a, b in zip(t, t[1:])]
print('gaps:', ' '.join('%.2f' % g for g in gaps))
assert 0.6 <= t[0] <= 1.6, t
assert all(0.6 <= g <= 1.4 for g in gaps), gaps
PY
wait_for_line prog.out '^phase 1$'

# Each summary: dated, a HEAP SUMMARY, a growth line over about 1 s; the
# growth adds up to the in-use figures of the last one.
python3 - mt.out "$phase1" <<'PY' || fail "monitor summaries: $(cat mt.out)"
import re, sys
text = open(sys.argv[1]).read()
want = tuple(map(int, sys.argv[2].split()))
parts = re.findall(r'^status at (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d)\n'
                   r'HEAP SUMMARY\n    in use: (\d+) bytes in (\d+) blocks\n'
                   r'    total heap usage: \d+ allocs, \d+ frees, \d+ bytes allocated\n'
                   r'(?:    mapped: \d+ bytes in \d+ regions\n)?'
                   r'    traced threads: 1\n'
                   r'    growth: ([+-]\d+) bytes, ([+-]\d+) blocks in (\d+\.\d) s\n', text, re.M)
assert len(parts) >= 3, text
stamps = [p[0] for p in parts]
assert stamps == sorted(stamps), stamps
for _, _, _, _, _, secs in parts:
    assert 0.5 <= float(secs) <= 1.5, secs
bytes_grown = sum(int(p[3]) for p in parts)
blocks_grown = sum(int(p[4]) for p in parts)
last = (int(parts[-1][1]), int(parts[-1][2]))
print('growth adds up to', bytes_grown, blocks_grown, '; last summary', last)
assert (bytes_grown, blocks_grown) == last, 'growth does not add up'
PY
# The last summary may predate phase 1 only if ticks were late: check it.
last_in_use=$(grep -A2 '^status at ' mt.out | grep -o 'in use: [0-9]* bytes in [0-9]* blocks' | tail -n 1)
[ "$last_in_use" = "in use: ${phase1% *} bytes in ${phase1#* } blocks" ] ||
    fail "the last summary says '$last_in_use', phase 1 leaves $phase1"

console_cmd "monitor 0"
grep -qx 'monitor: off' <<< "$CONSOLE_REPLY" || fail "monitor 0 said: $CONSOLE_REPLY"
stopped=$(ticks)
# Not a stand-in for an event: the window in which no summary may come.
sleep 2.5
[ "$(ticks)" -eq "$stopped" ] || fail "summaries go on after 'monitor 0'"
echo "monitor 0: no summary in 2.5 s"

printf 'quit\n' >&3
wait "$CONSOLE_PID"; rc=$?
[ $rc -eq 0 ] || fail "memtrace exit $rc after quit: $(cat mt.out.err)"
touch ctl/go1 ctl/go2 ctl/go3
wait "$prog"; rc=$?
[ $rc -eq 0 ] || fail "the program exited $rc after the detach"
[ "$(cat prog.out)" = "$untraced" ] || fail "program output differs: $(cat prog.out) vs $untraced"
echo "quit: the program finished with its untraced output"
exit 0
