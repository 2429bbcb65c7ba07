#!/usr/bin/env bash
# make bench, third part: programs that are big in one direction (issue 28),
# memtrace (its default engine) beside heaptrack and valgrind, one run:
#
#  - many stacks: bench/many_paths.c keeps 2^17 blocks from 2^17 distinct
#    call paths (a binary recursion 17 deep), traced with -d 40.  The whole
#    run (trace and default text report) against heaptrack's recording
#    plus heaptrack_print's summary; the tracer's peak RSS
#    (MEMTRACE_NO_SUPERVISOR=1, bench/peak_rss.c); the text report's size.
#  - many processes: memtrace -f over a shell loop that runs ls and sed
#    (SCALE_BENCH_ROUNDS rounds, 3 processes each), against the loop
#    untraced and valgrind --trace-children=yes (given up after 120 s);
#    heaptrack follows no children, so it has no figure here.
#
#   bench/scale-bench.sh BUILD     (SCALE_BENCH_REPS=3, SCALE_BENCH_DEPTH=17,
#                                   SCALE_BENCH_ROUNDS=100, SCALE_BENCH_PTRACE=1
#                                   adds --engine=ptrace to the loop)
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MEMTRACE=$ROOT/$BUILD/memtrace
REPS=${SCALE_BENCH_REPS:-3}
DEPTH=${SCALE_BENCH_DEPTH:-17}
ROUNDS=${SCALE_BENCH_ROUNDS:-100}
TMP=$(mktemp -d /tmp/memtrace-scale.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
[ -x "$MEMTRACE" ] || { echo "scale-bench: build $BUILD first" >&2; exit 1; }
have() { command -v "$1" >/dev/null; }
progress() { echo "scale-bench: $*" >&2; }

. "$ROOT/bench/bench.bash"

gcc -O2 -g -Wall -Wextra -o "$TMP/many_paths" "$ROOT/bench/many_paths.c" || exit 1
gcc -O2 -g -Wall -Wextra -o "$TMP/peak_rss" "$ROOT/bench/peak_rss.c" || exit 1
MP=("$TMP/many_paths" "$DEPTH")

# --- many stacks -------------------------------------------------------------
nat=(); mt=(); mtj=(); ht=(); htp=()
for ((r = 0; r < REPS; r++)); do
    progress "many stacks ($((1 << DEPTH)) paths), repetition $((r + 1))/$REPS"
    nat+=("$(wall_us "${MP[@]}")")
    mt+=("$(wall_us "$MEMTRACE" -q -d 40 -o "$TMP/report.txt" "${MP[@]}")")
    mtj+=("$(wall_us "$MEMTRACE" -q -d 40 -j -o /dev/null "${MP[@]}")")
    if have heaptrack && have heaptrack_print; then
        rm -f "$TMP"/ht.*
        ht+=("$(wall_us heaptrack -o "$TMP/ht" "${MP[@]}")")
        f=$(ls "$TMP"/ht.* 2>/dev/null | head -1)
        [ -n "$f" ] && htp+=("$(wall_us heaptrack_print "$f")")
    fi
done
REPORT_BYTES=$(stat -c %s "$TMP/report.txt")
MORE_LINE=$(grep -c '^\.\.\. and [0-9]* more stack' "$TMP/report.txt")
RSS=$(MEMTRACE_NO_SUPERVISOR=1 "$TMP/peak_rss" "$MEMTRACE" -q -d 40 -o /dev/null "${MP[@]}" 2>&1 |
    awk '/^peak_rss: / {k=$2} END {print k+0}')
RSS0=$(MEMTRACE_NO_SUPERVISOR=1 "$TMP/peak_rss" "$MEMTRACE" -q -d 40 -o /dev/null "$TMP/many_paths" 0 2>&1 |
    awk '/^peak_rss: / {k=$2} END {print k+0}')
MT_S=$(calc "$(median "${mt[@]}") / 1e6" 2)
if [ ${#htp[@]} -gt 0 ]; then
    HT_S=$(calc "$(median "${ht[@]}") / 1e6" 2)
    HTP_S=$(calc "$(median "${htp[@]}") / 1e6" 2)
    HT_ROW="heaptrack $HT_S s + heaptrack_print $HTP_S s; memtrace / both = $(calc "$MT_S / ($HT_S + $HTP_S)" 2)x [target 2x: $(verdict "$MT_S <= 2 * ($HT_S + $HTP_S)")]"
else
    HT_ROW="heaptrack: n/a (not installed)"
fi

# --- many processes ----------------------------------------------------------
LOOP="for i in \$(seq $ROUNDS); do ls /usr >/dev/null; echo x | sed s/x/y/ >/dev/null; done"
progress "many processes ($ROUNDS rounds): native and memtrace -f"
pn=(); pm=(); pp=()
for ((r = 0; r < REPS; r++)); do
    pn+=("$(wall_us bash -c "$LOOP")")
    pm+=("$(wall_us "$MEMTRACE" -q -f -o "$TMP/procs.txt" bash -c "$LOOP")")
done
NPROCS=$(( $(grep -c '^==== process' "$TMP/procs.txt") + 1 ))
if [ "${SCALE_BENCH_PTRACE:-0}" = 1 ]; then
    progress "many processes: --engine=ptrace"
    pp+=("$(wall_us "$MEMTRACE" -q -f --engine=ptrace -o /dev/null bash -c "$LOOP")")
fi
VG_ROW="n/a (no valgrind)"
if have valgrind; then
    progress "many processes: valgrind --trace-children=yes (at most 120 s)"
    t=$(wall_us timeout 120 valgrind -q --trace-children=yes --run-libc-freeres=no bash -c "$LOOP")
    if [ "$t" -ge 119500000 ]; then
        VG_ROW="over 120 s (given up)"
    else
        VG_ROW="$(calc "$t / 1e6" 2) s"
    fi
fi
PN=$(median "${pn[@]}")
PM=$(median "${pm[@]}")

echo
echo "== big in one direction (issue 28; memtrace's default engine; medians of $REPS) =="
echo "machine: $(uname -m), $(nproc) CPUs, Linux $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-44s %s\n' "many stacks: $((1 << DEPTH)) paths, -d 40" \
    "native $(calc "$(median "${nat[@]}") / 1e6" 2) s; memtrace $MT_S s (trace + text report), -j $(calc "$(median "${mtj[@]}") / 1e6" 2) s"
printf '%-44s %s\n' "" "$HT_ROW"
printf '%-44s %s\n' "  tracer peak RSS" "$RSS KiB ($(calc "($RSS - $RSS0) * 1024 / $((1 << DEPTH))" 0) B per stack over 0 paths' $RSS0 KiB) [target 40 MB: $(verdict "$RSS * 1024 < 40e6")]"
printf '%-44s %s\n' "  default text report" "$REPORT_BYTES bytes, $MORE_LINE 'more stacks' line [target 1 MB: $(verdict "$REPORT_BYTES < 1e6")]"
printf '%-44s %s\n' "many processes: -f, $NPROCS processes" \
    "untraced $(calc "$PN / 1e6" 2) s; memtrace $(calc "$PM / 1e6" 2) s = $(calc "$PM / $PN" 1)x [target 10x: $(verdict "$PM <= 10 * $PN")]"
[ ${#pp[@]} -gt 0 ] && printf '%-44s %s\n' "" "--engine=ptrace $(calc "$(median "${pp[@]}") / 1e6" 2) s"
printf '%-44s %s\n' "" "valgrind --trace-children=yes $VG_ROW; heaptrack: n/a (records the first process only)"
