#!/usr/bin/env bash
# The console's line editor (libedit), typed at as a person would in tmux:
# memtrace -p PID on the phases program.  `status`, then Up + Enter runs it
# again from the history, Up Up Down walks it; a line mistyped and mended with Backspace, Left and
# an insertion runs as the mended command; Tab completes a command prefix
# (sta -> status), an option's value (-f j -> json) and a file name after
# '>' (the report then lands in that file, as JSON that python reads).  No
# "control character" error ever shows.  The terminal is put back exactly as
# it was (stty -g before = after) when the session ends by quit, by Ctrl-C,
# by SIGTERM, by a SIGKILL of the tracer process (its supervisor restores
# it), by Ctrl-D (tracing goes on) and by the program's exit.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
need_tool tmux tmux
need_tool python3 python3
"$MEMTRACE" --version | grep -qx 'console: libedit' ||
    skip "this memtrace has no line editor ($("$MEMTRACE" --version | grep console:))"
cd "$MT_TMP"
PROG="$MT_PROGS/phases"

mkdir ctl out
"$PROG" "$MT_TMP/ctl" > prog.out &
prog=$!
# One tmux server per session (a new server on a socket just killed can
# race with the old one's exit).
cur=0
tm() { tmux -S "$MT_TMP/tmux.$cur" "$@"; }
cleanup() {
    for cur in 1 2 3 4 5; do tm kill-server 2>/dev/null; done
    kill "$prog" 2>/dev/null
}
trap cleanup EXIT
wait_for_line prog.out '^phases: start$'
touch ctl/go0
wait_for_line prog.out '^phase 1$'

screen() { tm capture-pane -p -t mt -S -300; }
# session N: memtrace in a fresh pane; the pane's shell records the terminal
# settings before and after, and memtrace's exit status.
session() {
    tm kill-server 2>/dev/null
    cur=$1
    rm -f rc.$1
    tm -f /dev/null new-session -d -s mt -x 150 -y 60 \
        "stty -g > tty.before.$1; '$MEMTRACE' -q -p $prog 2> err.$1; echo \$? > rc.$1.tmp;
         stty -g > tty.after.$1; mv rc.$1.tmp rc.$1; sleep 60" ||
        fail "tmux cannot start a session"
    wait_screen '>' "$1"
}
# wait_screen TEXT N: until the pane shows a line equal to TEXT.
wait_screen() {
    wait_until 10 "the line '$1' on the terminal" screen_has "$1" "$2"
}
screen_has() {
    [ -s "rc.$2" ] && [ "$1" != HEAP\ SUMMARY ] &&
        fail "memtrace ended (exit $(cat "rc.$2")): $(cat "err.$2")"
    screen | grep -qxF -- "$1"
}
count() { screen | grep -cE -- "$1"; }
count_ge() { [ "$(count "$1")" -ge "$2" ]; }
until_count() {   # RE N: until N lines match RE
    wait_until 10 "$2 lines /$1/" count_ge "$1" "$2"
}
prompt_last() { [ "$(screen | grep -v '^$' | tail -n 1)" = '>' ]; }
type_keys() { tm send-keys -t mt "$@"; }
restored() {      # N: the session ended and the terminal is as before
    wait_until 10 "memtrace to end (session $1)" test -s "rc.$1"
    cmp -s "tty.before.$1" "tty.after.$1" ||
        fail "session $1: the terminal is left changed: $(cat "tty.before.$1") -> $(cat "tty.after.$1")"
}

session 1
type_keys -l status; type_keys Enter
until_count '^status at [0-9]{4}-' 1
type_keys Up
wait_until 5 "Up to bring back 'status'" count_ge '^> status$' 2
type_keys Enter
until_count '^status at [0-9]{4}-' 2
echo "history: Up + Enter ran status again"
# Up, Up goes back past "help quit" to "status"; Down comes back to it.
type_keys -l 'help quit'; type_keys Enter
until_count '^    detach from the target' 1
type_keys Up Up
wait_until 5 "Up Up to bring back 'status'" count_ge '^> status$' 3
type_keys Down Enter
until_count '^    detach from the target' 2
[ "$(count '^status at [0-9]{4}-')" -eq 2 ] || fail "Up Up Down ran status, not help quit:
$(screen)"
echo "history: Up Up Down + Enter ran 'help quit' again"

# "sttusx", Backspace, three times Left, "a": the line is "status".
type_keys -l sttusx; type_keys BSpace Left Left Left; type_keys -l a
wait_until 5 "the edited line" count_ge '^> status$' 3
type_keys Enter
until_count '^status at [0-9]{4}-' 3
echo "editing: Backspace, Left and an insertion made 'status'"

type_keys -l sta; type_keys Tab
wait_until 5 "sta<Tab> to become status" count_ge '^> status$' 4
type_keys Enter
until_count '^status at [0-9]{4}-' 4
echo "completion: sta<Tab> -> status"

: > out/edited-report.json
type_keys -l 'rep'; type_keys Tab; type_keys -l -- '-n 2 -f j'; type_keys Tab
wait_until 5 "the options completed" screen_has '> report -n 2 -f json' 1
type_keys -l "> $MT_TMP/out/edi"; type_keys Tab
wait_until 5 "the file name completed" screen_has "> report -n 2 -f json > $MT_TMP/out/edited-report.json" 1
type_keys Enter
wait_until 10 "the report in out/edited-report.json" test -s out/edited-report.json
wait_until 10 "a prompt after the report" prompt_last
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d else 1)' \
    out/edited-report.json || fail "out/edited-report.json is not a JSON report: $(head -c 300 out/edited-report.json)"
echo "completion: report -f j<Tab> -> json, > .../edi<Tab> -> edited-report.json (JSON written)"

screen | grep -q 'control character' && fail "a key was taken for a control character:
$(screen)"
type_keys -l quit; type_keys Enter
restored 1
[ "$(cat rc.1)" = 0 ] || fail "memtrace exit $(cat rc.1) after quit: $(cat err.1)"
echo "quit: terminal restored"

# Ctrl-C in the middle of a line, in raw mode.
session 2
type_keys -l sta; type_keys C-c
restored 2
echo "Ctrl-C (exit $(cat rc.2)): terminal restored"

session 3
type_keys -l rep
pid=$(pgrep -P "$(tm list-panes -t mt -F '#{pane_pid}')" -x memtrace) || fail "no memtrace in the pane"
kill -TERM "$pid"
restored 3
echo "SIGTERM (exit $(cat rc.3)): terminal restored"

# SIGKILL of the tracer (the supervisor's child): the supervisor restores.
session 5
type_keys -l sta
sup=$(pgrep -P "$(tm list-panes -t mt -F '#{pane_pid}')" -x memtrace) || fail "no memtrace in the pane"
tracer=$(pgrep -P "$sup" -x memtrace) || fail "no tracer under memtrace's supervisor"
kill -KILL "$tracer"
restored 5
echo "SIGKILL of the tracer (exit $(cat rc.5)): terminal restored by the supervisor"

# Ctrl-D on an empty line ends the input: the terminal is restored at once
# while tracing goes on; then the program's exit ends the session.
session 4
tty_now() { stty -g < "$(tm display-message -p -t mt '#{pane_tty}')"; }
tty_as_before() { [ "$(tty_now)" = "$(cat tty.before.4)" ]; }
tty_as_before && fail "the terminal is not in the editor's mode while editing"
type_keys C-d
wait_until 10 "Ctrl-D to restore the terminal" tty_as_before
[ -s rc.4 ] && fail "memtrace ended at Ctrl-D: $(cat err.4)"
echo "Ctrl-D: terminal restored, tracing goes on"
touch ctl/go1 ctl/go2 ctl/go3
restored 4
wait "$prog" || fail "the program failed after the sessions"
echo "program exit (memtrace exit $(cat rc.4)): terminal restored"
exit 0
