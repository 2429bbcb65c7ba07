#!/usr/bin/env bash
# The console driven through a pipe, as a script would, against the phases
# program started by `memtrace -C`:
#  - `status` after phases 1 and 2 equals valgrind's HEAP SUMMARY of the
#    program stopped at the same phase;
#  - `clear`, then phase 3: status and report show exactly the growth (the
#    difference of valgrind's stop-2 and stop-3 runs), only phase 3's stacks;
#  - `report > FILE`, `report -j` (the JSON schema of target/report/report.h), `report -f folded`
#    (stack count lines summing to the bytes in use), -n and -s;
#  - a bad line answers one "error:" line and changes nothing;
#  - `quit` detaches: the program runs to the end with its untraced output.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
need_tool valgrind valgrind
cd "$MT_TMP"
PROG="$MT_PROGS/phases"

# The oracle: valgrind on the program stopped after phase N.  Its control
# directory says go for every phase at once.
phases_oracles 1 2 3
echo "valgrind: phase 1: ${vg[1]} | phase 2: ${vg[2]} | phase 3: ${vg[3]}"
# Cross-check the oracle with the program's own pattern: phase 1 leaves
# 30 x 64 + 8 x 100 bytes in 31 blocks.
read -r _ _ _ b1 k1 <<< "${vg[1]}"
[ "$b1 $k1" = "$((30 * 64 + 800)) 31" ] || fail "valgrind's phase 1 in use is $b1 $k1"
untraced=$("$PROG" vgctl) || fail "untraced run failed"

phases_console mt.out -q

expect_status() {   # expect_status FIGURES WHAT
    console_cmd status
    grep -qE '^status at [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}[+-][0-9]{2}:[0-9]{2}$' <<< "$CONSOLE_REPLY" ||
        fail "status has no dated first line: $CONSOLE_REPLY"
    grep -qx '    traced threads: 1' <<< "$CONSOLE_REPLY" || fail "status: no thread count: $CONSOLE_REPLY"
    local got
    got=$(summary_figures <<< "$CONSOLE_REPLY") || fail "status: $CONSOLE_REPLY"
    echo "status at $2: $got (expected $1)"
    [ "$got" = "$1" ] || fail "status at $2: $got, expected $1 (allocs frees bytes in_use_bytes in_use_blocks)"
    # The peak: never below what is in use now.
    local peak in_use
    peak=$(sed -n 's/^    peak: \([0-9]*\) bytes in [0-9]* blocks at [0-9]*\.[0-9]\{3\} s$/\1/p' <<< "$CONSOLE_REPLY")
    in_use=$(cut -d' ' -f4 <<< "$got")
    [ -n "$peak" ] && [ "$peak" -ge "$in_use" ] || fail "status at $2: peak '$peak' < in use $in_use"
    grep -qE '^    temporary allocations: [0-9]+$' <<< "$CONSOLE_REPLY" ||
        fail "status: no temporary allocations line: $CONSOLE_REPLY"
}
expect_status "${vg[1]}" "phase 1"

# Bad lines: exactly one error line each, nothing else changes.
bad_lines=("frobnicate" "report -n" "report -n x" "report -s size" "report -f xml"
           "report -q" "report >" "monitor" "monitor -1" "monitor soon" "status now"
           "clear all" "quit now" "help nosuch" "> file" "report \"unterminated"
           "report > /nonexistent-dir/report.txt" "report -n 1 > a > b")
for line in "${bad_lines[@]}"; do
    console_cmd "$line"
    [ "$(wc -l <<< "$CONSOLE_REPLY")" -eq 1 ] && [[ $CONSOLE_REPLY == "error: "* ]] ||
        fail "'$line' answered: $CONSOLE_REPLY"
done
[ -e a ] || [ -e b ] && fail "a rejected 'report > a > b' still wrote a file"
echo "${#bad_lines[@]} bad lines: one error line each"
expect_status "${vg[1]}" "phase 1, after the bad lines"

# report > FILE: the text report, its stacks adding up to the summary.
console_cmd "report > $MT_TMP/report1.txt"
[ "$CONSOLE_REPLY" = "report written to $MT_TMP/report1.txt" ] || fail "report > FILE said: $CONSOLE_REPLY"
[ -s report1.txt ] || fail "report > FILE wrote nothing"
[ "$(summary_figures < report1.txt)" = "${vg[1]}" ] || fail "report1.txt summary: $(cat report1.txt)"
python3 - report1.txt "${vg[1]}" <<'PY' || fail "report1.txt: stacks do not add up"
import re, sys
text = open(sys.argv[1]).read()
_, _, _, in_bytes, in_blocks = map(int, sys.argv[2].split())
stacks = [tuple(map(int, m)) for m in re.findall(r'^(\d+) bytes in (\d+) blocks were not free$', text, re.M)]
assert sum(b for b, _ in stacks) == in_bytes and sum(k for _, k in stacks) == in_blocks, stacks
assert [b for b, _ in stacks] == sorted((b for b, _ in stacks), reverse=True), 'not sorted by bytes'
assert 'phase1_table() in ' in text, 'no phase1_table frame'
PY

# report -j, to the console and to a file: the same schema, same content.
check_json() {   # check_json FILE FIGURES CALLERS [SORTKEY]: frames[1] is one of CALLERS (a,b)
    python3 - "$@" <<'PY'
import json, sys
path, figures, function = sys.argv[1:4]
key = sys.argv[4] if len(sys.argv) > 4 else 'bytes'
r = json.load(open(path))
allocs, frees, ba, ib, ik = map(int, figures.split())
assert r['memtrace'] == 1 and isinstance(r['pid'], int) and r['program'].endswith('/phases'), r
h = r['heap']
assert (h['allocs'], h['frees'], h['bytes_allocated'], h['in_use_bytes'], h['in_use_blocks']) == \
    (allocs, frees, ba, ib, ik), h
st = r['stacks']
assert st and sum(s['bytes'] for s in st) == ib and sum(s['blocks'] for s in st) == ik, st
keys = [s[key] for s in st]
assert keys == sorted(keys, reverse=True), 'not sorted by %s: %s' % (key, keys)
for s in st:
    assert all(isinstance(s[k], int) for k in ('bytes', 'blocks', 'allocs'))
    fr = s['frames']
    for f in fr:
        assert set(f) == {'pc', 'module', 'offset', 'function', 'file', 'line', 'inlined', 'tail_call'}, f
        assert f['pc'].startswith('0x') and f['offset'].startswith('0x') and isinstance(f['line'], int)
    assert fr[0]['function'] and ('alloc' in fr[0]['function'] or fr[0]['function'] == 'realloc'), fr[0]
    assert fr[1]['function'] in function.split(','), (function, fr[1])
    assert fr[1]['file'].endswith('phases.c') and fr[1]['line'] > 0, fr[1]
PY
}
console_cmd "report -j"
printf '%s\n' "$CONSOLE_REPLY" > console1.json
check_json console1.json "${vg[1]}" phase1_table || fail "report -j on the console: $CONSOLE_REPLY"
console_cmd "report -j > $MT_TMP/report1.json"
check_json report1.json "${vg[1]}" phase1_table || fail "report -j > FILE: $(cat report1.json)"
echo "phase 1: report > FILE, report -j checked"

# Phase 2: tracing went on through all of the above.
touch ctl/go1
wait_for_line mt.out '^phase 2$'
expect_status "${vg[2]}" "phase 2"

console_cmd "report -f folded"
printf '%s\n' "$CONSOLE_REPLY" > folded2.txt
python3 - folded2.txt "${vg[2]}" <<'PY' || fail "folded report: $(cat folded2.txt)"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
in_bytes = int(sys.argv[2].split()[3])
total = 0
for line in lines:
    m = re.fullmatch(r'(\S+) (\d+)', line)
    assert m, 'not "stack count": %r' % line
    frames = m.group(1).split(';')
    assert all(frames) and frames[0] == '_start', frames
    total += int(m.group(2))
assert total == in_bytes, (total, in_bytes)
text = '\n'.join(lines)
assert 'main;phase1_table;' in text and 'main;phase2_churn;' in text, text
PY
echo "phase 2: folded lines add up to ${vg[2]}"

console_cmd "report -n 1"
[ "$(grep -c 'were not free$' <<< "$CONSOLE_REPLY")" -eq 1 ] || fail "report -n 1: $CONSOLE_REPLY"
console_cmd "report -s blocks -j > $MT_TMP/blocks2.json"
check_json blocks2.json "${vg[2]}" phase1_table,phase2_churn blocks || fail "report -s blocks -j: $(cat blocks2.json)"
python3 -c '
import json, sys
st = json.load(open(sys.argv[1]))["stacks"]
assert [s["bytes"] for s in st] != sorted((s["bytes"] for s in st), reverse=True), "blocks and bytes orders agree: the test proves nothing"
' blocks2.json || fail "report -s blocks: the byte order is the block order"

# clear, then phase 3: only the growth.
console_cmd clear
[[ $CONSOLE_REPLY == cleared* ]] || fail "clear said: $CONSOLE_REPLY"
expect_status "0 0 0 0 0" "the clear"
touch ctl/go2
wait_for_line mt.out '^phase 3$'
growth=$(python3 -c 'import sys; a = sys.argv[1].split(); b = sys.argv[2].split(); print(*(int(y) - int(x) for x, y in zip(a, b)))' "${vg[2]}" "${vg[3]}")
expect_status "$growth" "phase 3 after the clear"
console_cmd "report -j"
printf '%s\n' "$CONSOLE_REPLY" > growth3.json
check_json growth3.json "$growth" phase3_leak || fail "report -j after clear shows more than the growth: $CONSOLE_REPLY"
echo "after clear: $growth, only phase3_leak stacks"

# quit: memtrace detaches and ends; the program finishes as if untraced.
printf 'quit\n' >&3
wait $CONSOLE_PID; rc=$?
[ $rc -eq 0 ] || fail "memtrace exit $rc after quit: $(cat mt.out.err)"
pid=$(cat ctl/pid)
kill -0 "$pid" 2>/dev/null || fail "the program is gone after quit"
[ "$(tac mt.out | sed '/^HEAP SUMMARY$/q' | tac | summary_figures)" = "$growth" ] || fail "final report after quit: $(tail -n 5 mt.out)"
touch ctl/go3
wait_for_line mt.out '^done checksum'
traced=$(grep -E '^(phases: |phase |done )' mt.out)
[ "$traced" = "$untraced" ] || fail "program output after the detach differs: $traced vs $untraced"
for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
kill -0 "$pid" 2>/dev/null && fail "the program did not end after its last phase"
echo "quit: detached, the program ended with its untraced output"
exit 0
