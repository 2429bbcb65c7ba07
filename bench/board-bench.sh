#!/usr/bin/env bash
# memtrace's per-call cost on a board (Debian's arm64 or armhf kernel in
# qemu-system, selftest/board/run.sh), as a ratio against that board's own
# ptrace floor (bench/ptrace_floor.c: one breakpoint stop and resume, with
# the register read and write that stepping past a breakpoint needs there).
# Under TCG every figure is emulated time: only the ratio means anything.
#
#   bench/board-bench.sh aarch64|arm [ROUNDS]      (make bench-board)
#
# One vCPU (BOARD_SMP=1 unless set): with two, each stop waits for the
# other vCPU's thread to be woken, and the floor varies tenfold.
# Medians of BOARD_BENCH_REPS (3) runs of allocbench ROUNDS (500) 8 1.
# The traced runs against the floor are the breakpoint engine's
# (--engine=ptrace: the agent is the default on both boards now).
# Where memtrace carries an agent for the CPU, both engines are also timed
# by difference (the cost of the calls alone, without memtrace's start and
# end, which under TCG take seconds): breakpoints on 2*ROUNDS against
# ROUNDS, --engine=agent on 100*ROUNDS against ROUNDS, less the untraced
# program's own difference.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
arch=${1:?usage: $0 aarch64|arm [ROUNDS]}
rounds=${2:-500}
reps=${BOARD_BENCH_REPS:-3}
. "$root/selftest/board/board.bash"
board_vars "$arch" || exit 2
[ -x "$root/build-$arch/memtrace" ] || { echo "no build-$arch/memtrace (make cross)" >&2; exit 1; }
work=$(mktemp -d /tmp/board-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
cflags=()
[ "$arch" = arm ] && cflags=(-mthumb)
board_cc "$arch" "$work/allocbench" "$root/bench/allocbench.c" -O2 -g "${cflags[@]}" &&
    board_cc "$arch" "$work/ptrace_floor" "$root/bench/ptrace_floor.c" -O2 "${cflags[@]}" || exit 1
cat >"$work/guest.sh" <<EOF
up() { read u _ </proc/uptime; echo "\$u"; }
for i in \$(seq 1 $reps); do
    echo "@@FLOOR \$(./ptrace_floor 2000)"
    a=\$(up); ./allocbench $rounds 8 1 >/tmp/calls; b=\$(up)
    echo "@@PLAIN \$a \$b \$(sed -n 's/^allocbench: \([0-9]*\) calls/\1/p' /tmp/calls)"
    a=\$(up); ./memtrace --engine=ptrace -q -o /dev/null ./allocbench $rounds 8 1 >/dev/null; rc=\$?; b=\$(up)
    echo "@@TRACED \$a \$b \$rc"
    if ./memtrace --version | grep -q 'engines:.*agent'; then
        a=\$(up); ./memtrace --engine=ptrace -q -o /dev/null ./allocbench $((rounds * 2)) 8 1 >/dev/null; rc=\$?; b=\$(up)
        echo "@@DIFF ptrace 1 \$a \$b \$rc"
        a=\$(up); ./allocbench $((rounds * 100)) 8 1 >/dev/null; b=\$(up)
        echo "@@DIFF plain 99 \$a \$b 0"
        for m in 1 100; do
            a=\$(up); ./memtrace --engine=agent -q -o /dev/null ./allocbench \$(($rounds * m)) 8 1 >/dev/null; rc=\$?; b=\$(up)
            echo "@@DIFF agent \$((m - 1)) \$a \$b \$rc"
        done
    fi
done
EOF
# The guest's limit only catches a hang: three rounds take about 230 s
# beside other jobs (run.sh's default 300 s ended one at its third).
BOARD_SMP=${BOARD_SMP:-1} BOARD_TIMEOUT=${BOARD_TIMEOUT:-900} "$root/selftest/board/run.sh" "$arch" "$work/out" "$work/guest.sh" \
    "$root/build-$arch/memtrace" "$work/allocbench" "$work/ptrace_floor" >"$work/run.log" 2>&1 ||
    { cat "$work/run.log"; tail -n 20 "$work/out/console.log"; exit 1; }
python3 - "$arch" "$work/out/console.log" <<'PY'
import statistics, sys
arch, log = sys.argv[1], sys.argv[2]
floor, plain, traced, calls, bad = [], [], [], None, []
diff = {}  # (engine, extra multiples of ROUNDS) -> seconds
for line in open(log, errors='replace'):
    f = line.split()
    if not f:
        continue
    if f[0] == '@@FLOOR' and len(f) == 2:
        floor.append(float(f[1]))
    elif f[0] == '@@PLAIN' and len(f) == 4:
        plain.append(float(f[2]) - float(f[1]))
        calls = int(f[3])
    elif f[0] == '@@TRACED' and len(f) == 4:
        traced.append(float(f[2]) - float(f[1]))
        if f[3] != '0':
            bad.append(f[3])
    elif f[0] == '@@DIFF' and len(f) == 6:
        diff.setdefault((f[1], int(f[2])), []).append(float(f[4]) - float(f[3]))
        if f[5] != '0':
            bad.append(f[5])
if not floor or not plain or not traced or not calls:
    sys.exit('board-bench: missing figures in ' + log)
if bad:
    sys.exit('board-bench: memtrace exited %s on %s' % (','.join(bad), arch))
fl = statistics.median(floor)
per_call = (statistics.median(traced) - statistics.median(plain)) * 1e6 / calls
print('%s board: ptrace floor %.0f us/stop; allocbench %d calls: untraced %.2f s, traced %.2f s; '
      'memtrace %.0f us/call = %.1fx the floor' % (arch, fl, calls, statistics.median(plain),
                                                  statistics.median(traced), per_call, per_call / fl))
if diff:
    # The calls alone: breakpoints on ROUNDS more, the agent on 99 ROUNDS
    # more (less what the untraced program took for them).
    bp = (statistics.median(diff[('ptrace', 1)]) - statistics.median(traced)) * 1e6 / calls
    ag = ((statistics.median(diff[('agent', 99)]) - statistics.median(diff[('agent', 0)])) -
          (statistics.median(diff[('plain', 99)]) - statistics.median(plain))) * 1e6 / (99 * calls)
    print('%s board, per call by difference: breakpoints %.0f us, --engine=agent %.1f us (%.0fx less)'
          % (arch, bp, ag, bp / ag if ag > 0 else float('inf')))
PY
