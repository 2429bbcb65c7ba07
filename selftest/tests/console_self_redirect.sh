#!/usr/bin/env bash
# `report > FILE` never writes into the console's own input: with the
# console on a FIFO (as a script drives it), /proc/self/fd/0, /dev/fd/0,
# /dev/stdin, /proc/PID/fd/0 and the FIFO's own path are all refused with
# one "error:" line, and nothing comes back as commands.  Oracle: stat -L
# of /proc/PID/fd/0 (the kernel's word) names the FIFO's device and inode,
# so each of those paths is the input.  A report to a plain file (control)
# is still written.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
cd "$MT_TMP" || fail "no scratch directory"
phases_console mt.out -q
fifo=$(readlink "/proc/$CONSOLE_PID/fd/0")
[ "$(stat -L -c %d:%i "/proc/$CONSOLE_PID/fd/0")" = "$(stat -c %d:%i "$fifo")" ] ||
    fail "the console's stdin is not $fifo"
[ -p "$fifo" ] || fail "$fifo is not a FIFO"

for target in /proc/self/fd/0 /dev/fd/0 /dev/stdin "/proc/$CONSOLE_PID/fd/0" "$fifo"; do
    for fmt in "" "-j " "-f folded "; do
        console_cmd "report ${fmt}> $target"
        [ "$(wc -l <<< "$CONSOLE_REPLY")" -eq 1 ] && [[ $CONSOLE_REPLY == "error: report: "*"own input"* ]] ||
            fail "'report ${fmt}> $target' answered: $(head -n 5 <<< "$CONSOLE_REPLY")"
    done
    echo "report > $target: $CONSOLE_REPLY"
done
# Nothing was fed back: the next command's answer is its own alone.
console_cmd status
grep -q '^error' <<< "$CONSOLE_REPLY" && fail "errors after the refused reports: $CONSOLE_REPLY"
grep -c '^error' mt.out | grep -qx 15 || fail "$(grep -c '^error' mt.out) error lines, 15 expected: $(grep '^error' mt.out | head -n 20)"

console_cmd "report > plain.txt"
[ "$CONSOLE_REPLY" = "report written to plain.txt" ] || fail "report > plain.txt: $CONSOLE_REPLY"
grep -q '^HEAP SUMMARY' plain.txt || fail "plain.txt holds no report"
echo "report > plain.txt (control): written"
printf 'quit\n' >&3
wait "$CONSOLE_PID"
rc=$?
[ $rc -eq 0 ] || fail "memtrace exit $rc after quit: $(cat mt.out.err)"
exit 0
