#!/usr/bin/env bash
# A person at a terminal: memtrace -p PID runs inside tmux (its own server
# socket) against the phases program.  The "> " prompt shows; a command typed
# with a typo and fixed with backspace runs as the fixed command; `status`
# shows what phase 1 allocated after the attach (valgrind's in-use figures for
# phase 1); a wrong command gives one error and a new prompt; `quit` detaches
# and the program finishes with its untraced output.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
need_tool tmux tmux
cd "$MT_TMP"
PROG="$MT_PROGS/phases"

mkdir vgctl && touch vgctl/go0 vgctl/go1 vgctl/go2 vgctl/go3
# Phase 1 makes 30 mallocs of 64 bytes and one calloc of 8 x 100, frees none.
phase1_in_use="$((30 * 64 + 800)) 31"
if command -v valgrind >/dev/null; then
    vg1=$(valgrind_summary "$PROG" vgctl 1) || fail "valgrind, stop after phase 1"
    read -r _ _ _ b k <<< "$vg1"
    [ "$b $k" = "$phase1_in_use" ] || fail "valgrind: phase 1 leaves $b $k in use, not $phase1_in_use"
fi
read -r in_bytes in_blocks <<< "$phase1_in_use"
untraced=$("$PROG" vgctl) || fail "untraced run failed"

tmux_phases_start

tm -f /dev/null new-session -d -s mt -x 120 -y 50 \
    "'$MEMTRACE' -q -p $prog 2> '$MT_TMP/err.txt'; echo \$? > '$MT_TMP/rc'; sleep 60" ||
    fail "tmux cannot start a session"
screen() { tm capture-pane -p -t mt -S -200; }
# wait_screen TEXT: until the pane shows a line equal to TEXT (trailing blanks
# are trimmed by tmux, so the prompt "> " shows as ">").
wait_screen() {
    local end=$((SECONDS + 10))
    until screen | grep -qxF -- "$1"; do
        [ -s rc ] && fail "memtrace ended (exit $(cat rc)): $(cat err.txt)"
        [ $SECONDS -lt $end ] || fail "the terminal never showed '$1':
$(screen)"
        sleep 0.05
    done
}
prompts() { screen | grep -c '^>'; }

wait_screen '>'
echo "prompt shown"
touch ctl/go0
wait_for_line prog.out '^phase 1$'

# "statsu", two backspaces, "us": the line is "status".
tm send-keys -t mt -l 'statsu'
tm send-keys -t mt BSpace BSpace
tm send-keys -t mt -l 'us'
tm send-keys -t mt Enter
wait_screen "    in use: $in_bytes bytes in $in_blocks blocks"
wait_screen "    total heap usage: $in_blocks allocs, 0 frees, $in_bytes bytes allocated"
screen | grep -q 'error:' && fail "the corrected line gave an error:
$(screen)"
screen | grep -qE '^status at [0-9]{4}-' || fail "no dated status line:
$(screen)"
# A prompt again under the answer.
[ "$(screen | grep -v '^$' | tail -n 1)" = '>' ] || fail "no prompt after status:
$(screen)"
echo "typo fixed with backspace: status shows $in_bytes bytes in $in_blocks blocks"

before=$(prompts)
tm send-keys -t mt -l 'stauts'
tm send-keys -t mt Enter
wait_screen "error: unknown command 'stauts' (try 'help')"
[ "$(screen | grep -c '^error:')" -eq 1 ] || fail "more than one error line:
$(screen)"
end=$((SECONDS + 5))
until [ "$(prompts)" -gt "$before" ]; do
    [ $SECONDS -lt $end ] || fail "no prompt after the error:
$(screen)"
    sleep 0.05
done
echo "a wrong command: one error line, a new prompt"

tm send-keys -t mt -l 'quit'
tm send-keys -t mt Enter
end=$((SECONDS + 10))
until [ -s rc ]; do
    [ $SECONDS -lt $end ] || fail "memtrace did not end after quit:
$(screen)"
    sleep 0.05
done
[ "$(cat rc)" = 0 ] || fail "memtrace exit $(cat rc) after quit: $(cat err.txt)"
wait_screen 'HEAP SUMMARY'
touch ctl/go1 ctl/go2 ctl/go3
wait "$prog"; rc=$?
[ $rc -eq 0 ] || fail "the program exited $rc after the detach"
[ "$(cat prog.out)" = "$untraced" ] || fail "program output differs: $(cat prog.out) vs $untraced"
echo "quit: final report shown, the program finished with its untraced output"
exit 0
