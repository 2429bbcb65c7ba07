#!/usr/bin/env bash
# memtrace as a background job of an interactive shell (`memtrace -p PID &`
# in bash, inside tmux): what the person types next is the shell's, and
# memtrace must not read it, which would stop memtrace (SIGTTIN) and the
# program it traces with it.  So: typed lines go to bash, memtrace keeps
# running and the program with it (its phase 1 gets done); after `fg` the
# console reads again (`status` answers with phase 1's figures, valgrind's
# in-use figures in console_tmux.sh) and `quit` detaches; the program
# finishes with its untraced output.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
need_tool tmux tmux
cd "$MT_TMP" || fail "no scratch directory"
PROG="$MT_PROGS/phases"
phase1="$((30 * 64 + 800)) bytes in 31 blocks"
mkdir vgctl && touch vgctl/go0 vgctl/go1 vgctl/go2 vgctl/go3
untraced=$("$PROG" vgctl) || fail "untraced run failed"

tmux_phases_start

tm -f /dev/null new-session -d -s sh -x 120 -y 50 "env -i PATH=$PATH TERM=screen PS1='$ ' bash --norc --noprofile -i" ||
    fail "tmux cannot start a session"
screen() { tm capture-pane -p -t sh -S -300; }
wait_screen() { # TEXT: until a line of the pane contains TEXT
    local end=$((SECONDS + 15))
    until screen | grep -qF -- "$1"; do
        [ $SECONDS -lt $end ] || fail "the terminal never showed '$1':
$(screen)"
        sleep 0.05
    done
}
traced() { [ "$(sed -n 's/^TracerPid:\t//p' "/proc/$prog/status")" != 0 ]; }

tm send-keys -t sh -l "'$MEMTRACE' -q -p $prog 2> '$MT_TMP/err.txt' &"
tm send-keys -t sh Enter
wait_until 15 "memtrace to attach" traced
mt=$(pgrep -f -- "-q -p $prog\$" | head -1)
[ -n "$mt" ] || fail "no memtrace process"
sleep 0.5

# Typed while memtrace is in the background: the shell's line.
tm send-keys -t sh -l 'echo typed-to-the-shell'
tm send-keys -t sh Enter
wait_screen 'typed-to-the-shell'
touch ctl/go0
wait_for_line prog.out '^phase 1$'
state=$(awk '{print $3}' "/proc/$mt/stat")
[ "$state" != T ] || fail "memtrace was stopped by the typing (state T):
$(screen)"
echo "background: the typed line went to the shell, memtrace ran on (state $state), the program did phase 1"

tm send-keys -t sh -l 'fg'
tm send-keys -t sh Enter
sleep 0.5
tm send-keys -t sh -l 'status'
tm send-keys -t sh Enter
wait_screen "in use: $phase1"
echo "after fg: status answers ($phase1)"
tm send-keys -t sh -l 'quit'
tm send-keys -t sh Enter
wait_screen 'HEAP SUMMARY'
end=$((SECONDS + 10))
while kill -0 "$mt" 2>/dev/null; do
    [ $SECONDS -lt $end ] || fail "memtrace did not end after quit: $(screen)"
    sleep 0.05
done
touch ctl/go1 ctl/go2 ctl/go3
wait "$prog" || fail "the program exited $? after the detach"
[ "$(cat prog.out)" = "$untraced" ] || fail "program output differs: $(cat prog.out) vs $untraced"
echo "quit: detached, the program finished with its untraced output"
