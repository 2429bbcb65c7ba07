# Helpers for memtrace's integration tests (sourced).

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "$*"; exit 77; }
# need_tool COMMAND PACKAGE: skips when COMMAND is missing.  PACKAGE is in
# tools/install-deps.sh, so `make check STRICT=1` counts this skip as a
# failure (the reason starts "missing tool:", run-tests.sh looks for it).
need_tool() {
    command -v "$1" >/dev/null ||
        skip "missing tool: $1 (Debian package $2, installed by tools/install-deps.sh)"
}

# The HEAP SUMMARY of valgrind as "allocs frees bytes_allocated in_use_bytes
# in_use_blocks".  libc's and libstdc++'s exit-time freeing (__libc_freeres,
# __gnu_cxx::__freeres of the exception pool) is off: it is valgrind's own
# call, which a real run never makes.
valgrind_summary() {
    local log
    log=$(mktemp "$MT_TMP/vg.XXXXXX")
    valgrind --run-libc-freeres=no --run-cxx-freeres=no --log-file="$log" "$@" >/dev/null 2>&1
    valgrind_log_figures "$log"
}

# The five figures of valgrind's log $1 (its HEAP SUMMARY).
valgrind_log_figures() {
    python3 - "$1" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
num = lambda s: int(s.replace(',', ''))
m = re.search(r'in use at exit: ([\d,]+) bytes in ([\d,]+) blocks', text)
t = re.search(r'total heap usage: ([\d,]+) allocs, ([\d,]+) frees, ([\d,]+) bytes allocated', text)
if not m or not t:
    sys.exit('no HEAP SUMMARY in valgrind output')
print(num(t.group(1)), num(t.group(2)), num(t.group(3)), num(m.group(1)), num(m.group(2)))
PY
}

# The same five figures from memtrace's JSON report.
memtrace_summary() {
    local json
    json=$(mktemp "$MT_TMP/mt.XXXXXX")
    "$MEMTRACE" -q -j -o "$json" "$@" >/dev/null || return 1
    memtrace_json_figures "$json"
}

# The five figures of memtrace's JSON report $1.
memtrace_json_figures() {
    python3 - "$1" <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))['heap']
print(h['allocs'], h['frees'], h['bytes_allocated'], h['in_use_bytes'], h['in_use_blocks'])
PY
}

# Checks that memtrace and valgrind agree on a program run.
compare_with_valgrind() {
    local vg mt
    vg=$(valgrind_summary "$@") || fail "valgrind failed on $*"
    mt=$(memtrace_summary "$@") || fail "memtrace failed on $*"
    echo "valgrind: $vg | memtrace: $mt | $*"
    [ "$vg" = "$mt" ] && return 0
    # valgrind's 32-bit HEAP SUMMARY after a dlclose counts in use blocks
    # that no alloc counted (in use != allocs - frees): there only the
    # counts it does keep are compared, and memtrace's own in-use must add up.
    local a f b ub n ma mf mb mub mn
    read -r a f b ub n <<<"$vg"
    read -r ma mf mb mub mn <<<"$mt"
    if [ "$((a - f))" != "$n" ] && [ "$a $f $b" = "$ma $mf $mb" ] && [ "$((ma - mf))" = "$mn" ]; then
        echo "  (valgrind's in-use figures do not add up: allocs, frees and bytes compared)"
        return 0
    fi
    fail "figures differ for $* (allocs frees bytes in_use_bytes in_use_blocks)"
}

# wait_until SECONDS WHAT CMD...: polls CMD (every 50 ms) until it
# succeeds; fails with "timed out waiting for WHAT" after SECONDS.  For
# waiting on an event instead of sleeping a fixed time.
wait_until() {
    local limit=$1 what=$2; shift 2
    local end=$((SECONDS + limit))
    until "$@"; do
        [ $SECONDS -lt $end ] || fail "timed out after ${limit} s waiting for $what"
        sleep 0.05
    done
}

# tcp_listening PORT [NETNS]: a TCP socket listens on PORT (in NETNS).
# tcp_connected PORT [NETNS]: a TCP connection with local port PORT is
# established (in NETNS).  For wait_until: a server is up, a peer came in.
tcp_listening() {
    ${2:+ip netns exec "$2"} ss -Hltn "sport = :$1" 2>/dev/null | grep -q .
}
tcp_connected() {
    ${2:+ip netns exec "$2"} ss -Htn state established "sport = :$1" 2>/dev/null | grep -q .
}

# threads_at_least PID N: process PID runs N threads or more.
threads_at_least() {
    [ "$(ls "/proc/$1/task" 2>/dev/null | wc -l)" -ge "$2" ]
}

# wait_ending_signals_held PID: until PID blocks or catches SIGHUP, SIGINT
# and SIGTERM (SigBlk, SigCgt in /proc/PID/status; 0x4003), or about 2 s.
# memtrace does so from .preinit_array on: before, a signal kills it as it
# kills any program (the loader and ASan's start-up still run), before it
# has touched the process.
wait_ending_signals_held() {
    local t masks blk cgt
    for ((t = 0; t < 400; t++)); do
        masks=$(awk '/^Sig(Blk|Cgt):/ {print $2}' "/proc/$1/status" 2>/dev/null | tr '\n' ' ')
        read -r blk cgt <<< "$masks"
        [ -n "${blk:-}" ] && (( ((0x$blk | 0x$cgt) & 0x4003) == 0x4003 )) && return 0
        sleep 0.005
    done
}

# --- Driving memtrace's console through a pipe (console_*.sh) -------------

# Waits until FILE has a line matching the extended regex RE; fails after
# SECONDS (default 10).
wait_for_line() {
    local file=$1 re=$2 limit=${3:-10}
    local end=$((SECONDS + limit))
    until grep -qE -- "$re" "$file" 2>/dev/null; do
        [ $SECONDS -lt $end ] || fail "timed out waiting for /$re/ in $file"
        sleep 0.05
    done
}

# console_open OUT ARGS...: starts "$MEMTRACE" ARGS with its stdin on a fifo
# held open as fd 3 and its stdout in OUT (stderr in OUT.err); sets
# CONSOLE_PID and CONSOLE_OUT.
console_open() {
    CONSOLE_OUT=$1; shift
    local fifo
    fifo=$(mktemp -u "$MT_TMP/console.XXXXXX")
    mkfifo "$fifo" || fail "mkfifo $fifo"
    # Emptied here, not only by the background redirection: console_cmd
    # must never measure an old OUT of the same name before it is cut.
    : > "$CONSOLE_OUT"
    "$MEMTRACE" "$@" < "$fifo" > "$CONSOLE_OUT" 2> "$CONSOLE_OUT.err" &
    CONSOLE_PID=$!
    exec 3> "$fifo"
}

# The line "help quit" ends with: each console_cmd sends it after its command
# and waits for it, so the command's whole output is in before it returns.
CONSOLE_SENTINEL='    detach from the target, write the final report, exit'

# console_cmd LINE: sends LINE and sets CONSOLE_REPLY to what the console
# answered (call it directly, not in $(...), so a failure ends the test).
console_cmd() {
    local before
    before=$(stat -c %s "$CONSOLE_OUT")
    printf '%s\nhelp quit\n' "$1" >&3 || fail "console: cannot send '$1'"
    # A hang detector, not a speed limit: the first report symbolizes libc
    # from its debug file, which on a loaded 2-core machine takes a while.
    local end=$((SECONDS + ${CONSOLE_TIMEOUT:-60}))
    until tail -c +$((before + 1)) "$CONSOLE_OUT" | grep -qxF -- "$CONSOLE_SENTINEL"; do
        kill -0 "$CONSOLE_PID" 2>/dev/null || fail "memtrace ended during '$1': $(cat "$CONSOLE_OUT.err")"
        [ $SECONDS -lt $end ] || fail "console: no answer to '$1'"
        sleep 0.05
    done
    # The answer, without the two lines of "help quit".
    CONSOLE_REPLY=$(tail -c +$((before + 1)) "$CONSOLE_OUT" | head -n -2)
}

# phases_console OUT ARGS...: memtrace's console (console_open OUT ARGS...
# -C phases $MT_TMP/ctl) on the phases program, returned once phase 1 is
# done; an EXIT trap ends the program and memtrace.
phases_console() {
    local out=$1; shift
    mkdir -p "$MT_TMP/ctl"
    console_open "$out" "$@" -C "$MT_PROGS/phases" "$MT_TMP/ctl"
    trap phases_console_end EXIT
    wait_for_line "$out" '^phases: start$'
    touch "$MT_TMP/ctl/go0"
    wait_for_line "$out" '^phase 1$'
}
phases_console_end() {
    exec 3>&-
    local pid
    pid=$(cat "$MT_TMP/ctl/pid" 2>/dev/null) && kill "$pid" 2>/dev/null
    kill "$CONSOLE_PID" 2>/dev/null
}

# phases_oracles N...: valgrind's HEAP SUMMARY figures of the phases program
# stopped after each phase N, in vg[N] (its control directory vgctl says go
# for every phase at once).
phases_oracles() {
    mkdir -p vgctl && touch vgctl/go0 vgctl/go1 vgctl/go2 vgctl/go3
    local n
    for n in "$@"; do
        vg[$n]=$(valgrind_summary "$MT_PROGS/phases" vgctl "$n") || fail "valgrind, stop after phase $n"
    done
}

# phases_start: the phases program in the background on $MT_TMP/ctl (pid in
# $prog, output in prog.out), returned once it has started; an EXIT trap
# ends it and the console.
phases_start() {
    mkdir -p ctl
    "$MT_PROGS/phases" "$MT_TMP/ctl" > prog.out &
    prog=$!
    trap phases_start_end EXIT
    wait_for_line prog.out '^phases: start$'
}
phases_start_end() {
    exec 3>&-
    kill "$prog" "${CONSOLE_PID:-}" 2>/dev/null
}

# console_wait_allocs: asks `status` until memtrace has counted an
# allocation (the program is being traced), for up to 15 s.
console_wait_allocs() {
    local end=$((SECONDS + 15))
    while :; do
        console_cmd status
        grep -qE 'total heap usage: [1-9][0-9]* allocs' <<< "$CONSOLE_REPLY" && return 0
        [ $SECONDS -lt $end ] || fail "no allocation traced in 15 s: $CONSOLE_REPLY"
        sleep 0.05
    done
}

# The five HEAP SUMMARY figures of a text summary on stdin, in
# valgrind_summary's order: allocs frees bytes_allocated in_use_bytes in_use_blocks.
summary_figures() {
    python3 -c '
import re, sys
t = sys.stdin.read()
m = re.search(r"in use: (\d+) bytes in (\d+) blocks\n\s*total heap usage: (\d+) allocs, (\d+) frees, (\d+) bytes allocated", t)
if not m:
    sys.exit("no HEAP SUMMARY in: " + t)
b, k, a, f, ba = m.groups()
print(a, f, ba, b, k)'
}

# program_pid PID [NAME]: the pid of the program memtrace (pid PID) started:
# memtrace's pid supervises, the tracer is its child and the program the
# tracer's child (target/tracer/guardian.h), so search every descendant.
# Prints nothing while there is none yet.
program_pid() {
    local frontier=$1 name=${2:-} next p
    for _ in 1 2 3; do
        next=
        for p in $frontier; do next="$next $(pgrep -P "$p")"; done
        for p in $next; do
            [ "$(cat "/proc/$p/comm" 2>/dev/null)" = memtrace ] && continue
            if [ -z "$name" ] || [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$name" ]; then
                echo "$p"
                return 0
            fi
        done
        frontier=$next
    done
    return 1
}

# libc's separate debug file (libc6-dbg, found by build-id), or nothing.
libc_debug_file() {
    local libc id cand
    libc=$(ldd /bin/true | awk '/libc\.so/{print $3}')
    [ -n "$libc" ] || return 0
    id=$(readelf -n "$libc" | awk '/Build ID/{print $3}')
    cand=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
    [ -r "$cand" ] && echo "$cand"
    return 0
}

# A text report with the peak's time (which differs from run to run) as "T":
# for comparing two traces of the same program line by line.
report_timeless() {
    sed -E 's/^(    peak heap: [0-9]+ bytes in [0-9]+ blocks at )[0-9]+\.[0-9]+ s$/\1T s/' "$1"
}

# A person at a terminal (console_tmux.sh, console_background.sh): tm runs
# tmux on a server of the test's own; tmux_phases_start starts $PROG (the
# phases program) on $MT_TMP/ctl in the background, prog=its pid, output
# in prog.out, and has both ended at exit.
tm() { tmux -S "$MT_TMP/tmux.sock" "$@"; }
tmux_phases_start() {
    mkdir ctl
    "$PROG" "$MT_TMP/ctl" > prog.out &
    prog=$!
    trap 'tm kill-server 2>/dev/null; kill "$prog" 2>/dev/null' EXIT
    wait_for_line prog.out '^phases: start$'
}

# The agent engine exists in $MEMTRACE's build (its --version lists it).
# It runs on every x86 CPU: with rdfsbase where the kernel allows it, else
# through the TCB's self pointer (%fs:0, %gs:0 on i386).
need_agent_engine() {
    "$MEMTRACE" --version 2>/dev/null | grep -q '^engines:.*agent' ||
        skip "no agent engine in this build ($("$MEMTRACE" --version 2>/dev/null | head -1))"
}
