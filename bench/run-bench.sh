#!/bin/bash
# make bench: one run, one table.  Every timed figure is the median of
# BENCH_REPS repetitions; the tools run interleaved within a repetition so
# that machine noise hits them alike.
#
#   bench/run-bench.sh [BUILD_DIR]
#
# Knobs (environment): BENCH_REPS (5), BENCH_ITERS (allocbench rounds per
# thread, 3000; each round makes 4 calls), BENCH_FLOOR_STOPS (20000),
# BENCH_LIVE_SMALL (10000), BENCH_LIVE_BIG (1000000), BENCH_STACKS (4096),
# BENCH_LIBS (200) and BENCH_THREADS (50) for the attach timing.
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
REPS=${BENCH_REPS:-5}
ITERS=${BENCH_ITERS:-3000}
FLOOR_STOPS=${BENCH_FLOOR_STOPS:-20000}
LIVE_SMALL=${BENCH_LIVE_SMALL:-10000}
LIVE_BIG=${BENCH_LIVE_BIG:-1000000}
STACKS=${BENCH_STACKS:-4096}
NLIBS=${BENCH_LIBS:-200}
NTHREADS=${BENCH_THREADS:-50}

MEMTRACE=$ROOT/target/memtrace
MEMTRACE_FS=$ROOT/host-fs/memtrace-fs
# Every memtrace row of this table measures the breakpoint engine, named
# on each command line (the agent, the default on x86_64, is measured
# beside it by bench/agent-bench.sh).
MT=("$MEMTRACE" --engine=ptrace)
ALLOCBENCH=$ROOT/$BUILD/bench/allocbench
BIN=$ROOT/$BUILD/bench
TMP=$(mktemp -d /tmp/memtrace-bench.XXXXXX)
FS_PID=
ML_PID=
cleanup() {
    [ -n "$FS_PID" ] && kill $(pgrep -P "$FS_PID") "$FS_PID" 2>/dev/null
    [ -n "$ML_PID" ] && kill "$ML_PID" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT

die() { echo "run-bench: $*" >&2; exit 1; }
progress() { echo "bench: $*" >&2; }

for f in "$MEMTRACE" "$ALLOCBENCH"; do [ -x "$f" ] || die "$f missing (make all $BUILD/bench/allocbench)"; done
mkdir -p "$BIN"
for h in ptrace_floor peak_rss live_blocks many_stacks attach_time; do
    gcc -O2 -g -Wall -Wextra -o "$BIN/$h" "bench/$h.c" || die "cannot build bench/$h.c"
done
gcc -O2 -g -Wall -Wextra -pthread -o "$BIN/many_libs" bench/many_libs.c -ldl ||
    die "cannot build bench/many_libs.c"
# The leak scan's helper runs memtrace's own scanner (libmt.a) on a child.
gcc -O2 -g -Wall -Wextra -I. -D_GNU_SOURCE -o "$BIN/leak_scan" bench/leak_scan.c "$BUILD/libmt.a" -lz -lpthread ||
    die "cannot build bench/leak_scan.c"
LEAK_BLOCKS=${BENCH_LEAK_BLOCKS:-1000000}
LEAK_MIB=${BENCH_LEAK_MIB:-100}
HAVE_VALGRIND=$(command -v valgrind >/dev/null && echo 1 || echo 0)
HAVE_HEAPTRACK=$(command -v heaptrack >/dev/null && echo 1 || echo 0)
HAVE_PERF=0
if command -v perf >/dev/null &&
    perf stat -x, -e syscalls:sys_enter_ptrace -- true >/dev/null 2>&1; then
    HAVE_PERF=1
fi

# --- small helpers -----------------------------------------------------------
# now_us, wall_us, median, calc and verdict: bench/bench.bash.
. "$ROOT/bench/bench.bash"
# Peak RSS (VmHWM, KiB) of memtrace itself at its exit (bench/peak_rss.c):
# /usr/bin/time would report the traced child's peak when that is bigger.
peak_rss_kib() {
    local out=$1; shift
    # The tracer alone: without the supervisor split (target/tracer/guardian.h)
    # memtrace's own process is the tracer that peak_rss measures.
    MEMTRACE_NO_SUPERVISOR=1 "$BIN/peak_rss" "$@" >"$out" 2>&1
    awk '/^peak_rss: / {k=$2} END {print k+0}' "$out"
}

# --- machine -------------------------------------------------------------------
CPU=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
[ -n "$CPU" ] || CPU=$(awk -F': ' '/^(Hardware|CPU part)/ {print $2; exit}' /proc/cpuinfo)
MACHINE="$(uname -m), $(nproc) CPUs, ${CPU:-unknown CPU}, Linux $(uname -r)"

# --- floor ---------------------------------------------------------------------
progress "ptrace floor ($REPS x $FLOOR_STOPS stops)"
fl=(); flr=(); flp=()
for ((r = 0; r < REPS; r++)); do
    fl+=("$("$BIN/ptrace_floor" "$FLOOR_STOPS")")
    flr+=("$("$BIN/ptrace_floor" "$FLOOR_STOPS" regs)")
    flp+=("$("$BIN/ptrace_floor" "$FLOOR_STOPS" poll)")
done
FLOOR=$(median "${fl[@]}")
FLOOR_REGS=$(median "${flr[@]}")
FLOOR_POLL=$(median "${flp[@]}")

# --- per-call overhead ---------------------------------------------------------
CONFIGS=("1 8" "2 8" "1 32" "2 32")
calls_of() { awk '/^allocbench: [0-9]+ calls/ {n=$2} END {print n+0}' "$TMP/out"; }
declare -A T CALLS
startup_mt=(); startup_vg=(); startup_ht=()
for ((r = 0; r < REPS; r++)); do
    progress "per-call overhead, repetition $((r + 1))/$REPS"
    # Startup cost of each tool (no allocation rounds) so it can be taken out.
    u=$(wall_us "$ALLOCBENCH" 0 8 1)
    startup_mt+=($(($(wall_us "${MT[@]}" -q -o /dev/null "$ALLOCBENCH" 0 8 1) - u)))
    [ "$HAVE_VALGRIND" = 1 ] && startup_vg+=($(($(wall_us valgrind -q --run-libc-freeres=no "$ALLOCBENCH" 0 8 1) - u)))
    [ "$HAVE_HEAPTRACK" = 1 ] && startup_ht+=($(($(wall_us heaptrack -o "$TMP/ht" "$ALLOCBENCH" 0 8 1) - u)))
    rm -f "$TMP"/ht*
    for c in "${CONFIGS[@]}"; do
        set -- $c
        th=$1 dp=$2
        u=$(wall_us "$ALLOCBENCH" "$ITERS" "$dp" "$th")
        CALLS[$th$dp]=$(calls_of)
        T[un,$th,$dp]+=" $u"
        T[mt,$th,$dp]+=" $(wall_us "${MT[@]}" -q -o /dev/null "$ALLOCBENCH" "$ITERS" "$dp" "$th")"
        [ "$(calls_of)" = "${CALLS[$th$dp]}" ] || die "memtrace run of allocbench failed: $(tail -3 "$TMP/out")"
        if [ "$HAVE_VALGRIND" = 1 ]; then
            T[vg,$th,$dp]+=" $(wall_us valgrind -q --run-libc-freeres=no "$ALLOCBENCH" "$ITERS" "$dp" "$th")"
        fi
        if [ "$HAVE_HEAPTRACK" = 1 ]; then
            T[ht,$th,$dp]+=" $(wall_us heaptrack -o "$TMP/ht" "$ALLOCBENCH" "$ITERS" "$dp" "$th")"
            rm -f "$TMP"/ht*
        fi
    done
done
ST_MT=$(median "${startup_mt[@]}")
ST_VG=$( [ "$HAVE_VALGRIND" = 1 ] && median "${startup_vg[@]}" || echo nan)
ST_HT=$( [ "$HAVE_HEAPTRACK" = 1 ] && median "${startup_ht[@]}" || echo nan)

# Stops per call, counted: one PTRACE_CONT per stop (perf counts memtrace's
# ptrace requests); otherwise from allocbench's code: 4 calls per round make
# 4 entry+return pairs and 3 frees = 11 stops.
stops_per_call() {
    local th=$1 dp=$2 n
    if [ "$HAVE_PERF" = 1 ]; then
        n=$(perf stat -x, -e syscalls:sys_enter_ptrace --filter 'request == 7' -- \
            "${MT[@]}" -q -o /dev/null "$ALLOCBENCH" "$ITERS" "$dp" "$th" 2>&1 >/dev/null |
            awk -F, '/sys_enter_ptrace/ {print $1}')
        calc "$n / ${CALLS[$th$dp]}" 2
    else
        echo 2.75
    fi
}

per_call() { # tool th dp -> µs per call over untraced, and the same without startup
    local tool=$1 th=$2 dp=$3 st=$4 tt uu
    tt=$(median ${T[$tool,$th,$dp]})
    uu=$(median ${T[un,$th,$dp]})
    echo "$(calc "($tt - $uu) / ${CALLS[$th$dp]}" 2) $(calc "($tt - $uu - $st) / ${CALLS[$th$dp]}" 2)"
}

PERCALL_ROWS=()
WORST_RATIO=0
for c in "${CONFIGS[@]}"; do
    set -- $c
    th=$1 dp=$2
    read -r mt mt_ex <<<"$(per_call mt "$th" "$dp" "$ST_MT")"
    stops=$(stops_per_call "$th" "$dp")
    x_floor=$(calc "$mt / $FLOOR" 1)
    # The target is about the cost of each call: the fixed cost of starting
    # and of writing the final report (symbolizing) is taken out.
    ratio_all=$(calc "$mt / ($stops * $FLOOR)" 2)
    ratio=$(calc "$mt_ex / ($stops * $FLOOR)" 2)
    verdict=$(awk "BEGIN { print ($ratio <= 1.3) ? \"met\" : \"MISSED\" }")
    vg="n/a"; ht="n/a"
    if [ "$HAVE_VALGRIND" = 1 ]; then
        read -r v v_ex <<<"$(per_call vg "$th" "$dp" "$ST_VG")"
        vg="$v µs ($(calc "$v / $mt" 2)x memtrace; $v_ex w/o startup)"
    fi
    if [ "$HAVE_HEAPTRACK" = 1 ]; then
        read -r h h_ex <<<"$(per_call ht "$th" "$dp" "$ST_HT")"
        ht="$h µs ($(calc "$h / $mt" 2)x memtrace; $h_ex w/o startup)"
    fi
    WORST_RATIO=$(awk "BEGIN { print ($ratio > $WORST_RATIO) ? $ratio : $WORST_RATIO }")
    PERCALL_ROWS+=("$th thr, depth $dp, ${CALLS[$th$dp]} calls|$mt µs ($mt_ex w/o startup) = ${x_floor}x floor; $stops stops/call; w/o startup / (stops x floor) = ${ratio}x [target 1.3x: $verdict] (with startup ${ratio_all}x)|valgrind $vg|heaptrack $ht")
done

# Syscalls the tracer makes per stop (the floor needs 2: wait4 + PTRACE_CONT),
# counted by strace -c on memtrace alone: 1000 rounds minus 0 rounds.
SYSC_PER_STOP=n/a
if command -v strace >/dev/null; then
    sysc() {
        MEMTRACE_NO_SUPERVISOR=1 strace -c -o "$TMP/sc" "${MT[@]}" -q -o /dev/null "$ALLOCBENCH" "$1" 8 1 >/dev/null 2>&1
        awk '$NF != "total" && $4 ~ /^[0-9]+$/ {n += $4} END {print n+0}' "$TMP/sc"
    }
    s0=$(sysc 0)
    s1=$(sysc 1000)
    SYSC_PER_STOP=$(calc "($s1 - $s0) / ($(stops_per_call 1 8) * 4000)" 2)
    SYSC_DETAIL=$(awk '$NF != "total" && $4 ~ /^[0-9]+$/ && $4 > 1000 {printf "%s%s %d", sep, $NF, $4; sep = ", "}' "$TMP/sc")
fi

# --- unwinding cost --------------------------------------------------------------
# Same workload (1 thread, depth 32), memtrace keeping 1 frame versus 32:
# the difference is the unwinding + CFI lookups of 31 frames per event.
progress "unwinding cost (-d 1 vs -d 32)"
cpu_us() { # CPU (user+sys) of memtrace and the traced program, in µs
    /usr/bin/time -f '%U %S' -o "$TMP/time" "$@" >/dev/null 2>&1
    awk '{printf "%d", ($1 + $2) * 1e6}' "$TMP/time"
}
d1w=(); d32w=(); d1c=(); d32c=()
for ((r = 0; r < REPS; r++)); do
    d1w+=("$(wall_us "${MT[@]}" -q -d 1 -o /dev/null "$ALLOCBENCH" "$ITERS" 32 1)")
    d32w+=("$(wall_us "${MT[@]}" -q -d 32 -o /dev/null "$ALLOCBENCH" "$ITERS" 32 1)")
    if [ -x /usr/bin/time ]; then
        d1c+=("$(cpu_us "${MT[@]}" -q -d 1 -o /dev/null "$ALLOCBENCH" "$ITERS" 32 1)")
        d32c+=("$(cpu_us "${MT[@]}" -q -d 32 -o /dev/null "$ALLOCBENCH" "$ITERS" 32 1)")
    fi
done
C132=${CALLS[132]}
UNWIND_WALL=$(calc "($(median "${d32w[@]}") - $(median "${d1w[@]}")) / $C132" 2)
if [ ${#d1c[@]} -gt 0 ]; then
    UNWIND_CPU=$(calc "($(median "${d32c[@]}") - $(median "${d1c[@]}")) / $C132" 2)
    UNWIND_CPU_D1=$(calc "$(median "${d1c[@]}") / $C132" 2)
else
    UNWIND_CPU=n/a UNWIND_CPU_D1=n/a
fi

# --- symbolization ---------------------------------------------------------------
# many_stacks prints the wall clock just before it exits; what memtrace does
# after that is mostly writing the report (symbolizing every stack).
progress "report writing ($STACKS stacks)"
report_us() {
    local n=$1 t_end t_prog
    "${MT[@]}" -q -o "$TMP/report" "$BIN/many_stacks" "$n" >"$TMP/out" 2>&1
    t_end=$(now_us)
    t_prog=$(awk '/^many_stacks:/ {print $5}' "$TMP/out")
    echo $((t_end - t_prog))
}
rs1=(); rsn=()
for ((r = 0; r < REPS; r++)); do
    rs1+=("$(report_us 1)")
    rsn+=("$(report_us "$STACKS")")
done
NSTACKS=$(grep -c 'were not free' "$TMP/report")
REPORT_MS=$(calc "($(median "${rsn[@]}") - $(median "${rs1[@]}")) / 1000" 1)
REPORT_PER_STACK=$(calc "($(median "${rsn[@]}") - $(median "${rs1[@]}")) / $NSTACKS" 0)

# --- memory ----------------------------------------------------------------------
progress "tracer peak RSS (allocbench, 0 / $LIVE_SMALL / $LIVE_BIG live blocks)"
RSS_AB=$(peak_rss_kib "$TMP/out" "${MT[@]}" -q -o /dev/null "$ALLOCBENCH" "$ITERS" 8 2)
RSS_0=$(peak_rss_kib "$TMP/out" "${MT[@]}" -q -o /dev/null "$BIN/live_blocks" 0)
# Nothing left live, so the report symbolizes nothing: the tracing alone.
RSS_TRACE=$(peak_rss_kib "$TMP/out" "${MT[@]}" -q -o /dev/null "$BIN/live_blocks" 0 16 nobuf)
RSS_S=$(peak_rss_kib "$TMP/out" "${MT[@]}" -q -o /dev/null "$BIN/live_blocks" "$LIVE_SMALL")
RSS_B=$(peak_rss_kib "$TMP/out" "${MT[@]}" -q -o /dev/null "$BIN/live_blocks" "$LIVE_BIG")
grep -q "^live_blocks: $LIVE_BIG blocks" "$TMP/out" || die "live_blocks $LIVE_BIG under memtrace failed: $(tail -2 "$TMP/out")"
per_block() { calc "($1 - $RSS_0) * 1024 / $2" 0; }
rss_verdict() { awk "BEGIN { print ($1 * 1024 <= 4 * 1048576 + 64 * $2) ? \"met\" : \"MISSED\" }"; }

# Debug files served by memtrace-fs on loopback versus read locally, and the
# bytes it sends and receives for one trace.
REMOTE_RSS="n/a"; WIRE="n/a"
if [ -x "$MEMTRACE_FS" ]; then
    progress "memtrace-fs on loopback"
    PORT=$((20000 + RANDOM % 20000))
    # strace counts what crosses the socket (send/recv bypass /proc/PID/io).
    if command -v strace >/dev/null; then
        strace -f -qq -e trace=sendto,recvfrom -e signal=none -o "$TMP/fs.strace" \
            "$MEMTRACE_FS" -n -q -p "$PORT" / >"$TMP/fs.log" 2>&1 &
    else
        "$MEMTRACE_FS" -n -q -p "$PORT" / >"$TMP/fs.log" 2>&1 &
    fi
    FS_PID=$!
    sleep 1
    if kill -0 "$FS_PID" 2>/dev/null; then
        REMOTE_RSS=$(peak_rss_kib "$TMP/out" "${MT[@]}" -q -c "127.0.0.1:$PORT" -o /dev/null "$BIN/live_blocks" "$LIVE_SMALL")
        if grep -q "^live_blocks: $LIVE_SMALL blocks" "$TMP/out"; then
            REMOTE_OK=1
            REMOTE_RSS="$REMOTE_RSS KiB with $LIVE_SMALL live blocks (local: $RSS_S KiB)"
        else
            REMOTE_RSS="n/a (trace through memtrace-fs failed: $(tail -1 "$TMP/out"))"
        fi
    fi
    # Under strace, memtrace-fs is strace's child: stop the server itself.
    fs_child=$(pgrep -P "$FS_PID" | head -1)
    kill ${fs_child:-$FS_PID} 2>/dev/null; wait "$FS_PID" 2>/dev/null; FS_PID=
    if [ "${REMOTE_OK:-0}" = 1 ] && [ -s "$TMP/fs.strace" ]; then
        WIRE=$(awk '/sendto\(/ && $NF ~ /^[0-9]+$/ {s += $NF} /recvfrom\(/ && $NF ~ /^[0-9]+$/ {r += $NF}
            END {printf "%.0f KiB memtrace-fs -> memtrace, %.0f KiB back (one trace of live_blocks, files fetched by range)", s/1024, r/1024}' "$TMP/fs.strace")
    fi
fi

# --- attach ----------------------------------------------------------------------
# NLIBS distinct shared libraries (one object each, linked two at a time),
# a process with NTHREADS threads that dlopens them all, and the time from
# starting `memtrace -p PID` until it says it attached (every thread
# stopped, every module read, breakpoints placed, threads running again).
progress "attach: building $NLIBS libraries, $NTHREADS threads"
ATTACH="n/a"
LIBDIR=$TMP/libs
mkdir -p "$LIBDIR"
for ((i = 0; i < NLIBS; i++)); do
    printf 'static volatile int ml_data[%d] = {%d};\nint ml_%d(int x);\nint ml_%d(int x) { return x * %d + ml_data[0]; }\n' \
        $((i + 1)) "$i" "$i" "$i" $((i + 3)) >"$LIBDIR/ml$i.c"
done
if (cd "$LIBDIR" && gcc -c -fPIC -O1 -g ml*.c &&
    seq 0 $((NLIBS - 1)) | xargs -P2 -I{} gcc -shared -o libml{}.so ml{}.o); then
    "$BIN/many_libs" "$LIBDIR" "$NLIBS" "$NTHREADS" >"$TMP/ml.out" 2>&1 &
    ML_PID=$!
    for ((w = 0; w < 100; w++)); do
        grep -q '^many_libs: ready' "$TMP/ml.out" && break
        sleep 0.1
    done
    if grep -q '^many_libs: ready' "$TMP/ml.out"; then
        NTASKS=$(ls "/proc/$ML_PID/task" | wc -l)
        NMODS=$(awk '$6 ~ /\.so/ {print $6}' "/proc/$ML_PID/maps" | sort -u | wc -l)
        at=()
        for ((r = 0; r < REPS; r++)); do
            ms=$(MEMTRACE_ENGINE=ptrace "$BIN/attach_time" "$MEMTRACE" "$ML_PID" 2>"$TMP/at.err" | awk '{print $2}')
            [ -n "$ms" ] && at+=("$ms")
        done
        if [ ${#at[@]} -gt 0 ] && kill -0 "$ML_PID" 2>/dev/null; then
            AT=$(median "${at[@]}")
            ATTACH="$AT ms ($NTASKS threads, $NMODS shared objects mapped; median of ${#at[@]}) [target 1000 ms: $(awk "BEGIN { print ($AT < 1000) ? \"met\" : \"MISSED\" }")]"
        else
            ATTACH="n/a (attach failed: $(tail -1 "$TMP/at.err"))"
        fi
    else
        ATTACH="n/a (many_libs did not start: $(tail -1 "$TMP/ml.out"))"
    fi
    kill "$ML_PID" 2>/dev/null
    wait "$ML_PID" 2>/dev/null
    ML_PID=
else
    ATTACH="n/a (cannot build the libraries)"
fi
# --- leak scan -------------------------------------------------------------------
progress "leak scan ($LEAK_MIB MiB of roots, $LEAK_BLOCKS blocks)"
lw=(); lc=(); LEAK_LINE=
for ((r = 0; r < 3; r++)); do
    "$BIN/leak_scan" "$LEAK_BLOCKS" "$LEAK_MIB" >"$TMP/out" 2>&1 || die "leak_scan failed: $(tail -1 "$TMP/out")"
    LEAK_LINE=$(grep '^leak_scan:' "$TMP/out")
    lw+=("$(echo "$LEAK_LINE" | awk '{for (i = 1; i < NF; i++) if ($(i+1) == "s" && $(i-1) == "in") print $i}')")
    lc+=("$(echo "$LEAK_LINE" | awk '{for (i = 1; i < NF; i++) if ($(i+1) == "s" && $(i+2) == "CPU") print $i}')")
done
LEAK_BYTES=$(echo "$LEAK_LINE" | awk '{print $2}')
LEAK_WALL=$(median "${lw[@]}")
LEAK_CPU=$(median "${lc[@]}")
LEAK_ROW="$LEAK_WALL s wall, $LEAK_CPU s CPU for $(calc "$LEAK_BYTES / 1048576" 0) MiB read against $LEAK_BLOCKS blocks = $(calc "$LEAK_BYTES / 1048576 / $LEAK_CPU" 0) MiB/s of CPU (median of 3; bench/leak_scan.c)"

# --- --record ------------------------------------------------------------------
# Per sample: bench/record_cost.c times recorder_sample alone on books of
# BENCH_STACKS stacks with 256 changing per sample (steady, and with the
# peak moving at every sample).  Per hour of a real busy trace: allocbench
# (2 threads) under memtrace --record at the default 100 ms, the file's
# bytes over the traced wall time; and the wall time with and without it.
progress "--record cost"
gcc -O2 -g -Wall -Wextra -I. -D_GNU_SOURCE -o "$BIN/record_cost" bench/record_cost.c "$BUILD/libmt.a" \
    "$(gcc -print-file-name=libiberty.a)" -lz -lpthread -lprotobuf-c -lelf || die "cannot build bench/record_cost.c"
"$BIN/record_cost" "$STACKS" 256 2000 >"$TMP/rc" 2>&1 || die "record_cost failed: $(tail -1 "$TMP/rc")"
REC_STEADY=$(sed -n 's/^record_cost: steady [^:]*: //p' "$TMP/rc")
REC_GROW=$(sed -n 's/^record_cost: growing [^:]*: //p' "$TMP/rc")
rw=(); rn=(); rb=()
REC_ROUNDS=$((ITERS * 10))
# CPU seconds (user+system of memtrace and the program): the wall time of
# a shared machine is too noisy for a difference of a few per cent.
cpu_s() { /usr/bin/time -f '%U %S' -o "$TMP/time" "$@" >"$TMP/out" 2>&1; awk '{print $1 + $2}' "$TMP/time"; }
for ((r = 0; r < 3; r++)); do
    rn+=("$(cpu_s "${MT[@]}" -q -o /dev/null "$ALLOCBENCH" "$REC_ROUNDS" 8 2)")
    t0=$(now_us)
    rw+=("$(cpu_s "${MT[@]}" -q -o /dev/null --record "$TMP/rec.mt" "$ALLOCBENCH" "$REC_ROUNDS" 8 2)")
    t1=$(now_us)
    rb+=("$(stat -c %s "$TMP/rec.mt") $((t1 - t0))")
done
REC_CPU=$(median "${rw[@]}")
REC_NOCPU=$(median "${rn[@]}")
REC_BYTES=$(printf '%s\n' "${rb[@]}" | sort -n | awk 'NR == 2 {print $1}')
REC_WALL=$(printf '%s\n' "${rb[@]}" | sort -n | awk 'NR == 2 {print $2}')
REC_ROW="$(calc "$REC_BYTES * 3600 / ($REC_WALL / 1e6) / 1e6" 2) MB/hour ($REC_BYTES bytes in $(calc "$REC_WALL / 1e6" 2) s of allocbench, 2 threads, $((REC_ROUNDS * 8)) calls); CPU $REC_CPU s with, $REC_NOCPU s without (medians of 3)"

# --- the table -------------------------------------------------------------------
echo
echo "memtrace benchmark ($(date -u '+%Y-%m-%d %H:%M UTC'))"
echo "machine: $MACHINE"
echo "medians of $REPS repetitions; allocbench $ITERS rounds per thread (4 calls/round)"
echo "engine: every memtrace row is the breakpoint engine, [ptrace] (--engine=ptrace); the agent's"
echo "rows ([agent], --engine=agent) follow in the engines table (bench/agent-bench.sh)"
echo
printf '%-58s %s\n' "ptrace floor (int3 stop + PTRACE_CONT round trip)" "$FLOOR µs"
printf '%-58s %s\n' "  with GETREGS+SETREGS at each stop (informative)" "$FLOOR_REGS µs"
printf '%-58s %s\n' "  waiting as an event loop (WNOHANG+signalfd+poll)" "$FLOOR_POLL µs"
printf '%-58s %s\n' "tool startup over untraced (allocbench 0 rounds)" \
    "memtrace [ptrace] $(calc "$ST_MT / 1000" 0) ms, valgrind $(calc "$ST_VG / 1000" 0) ms, heaptrack $(calc "$ST_HT / 1000" 0) ms"
echo
echo "per-call overhead = (traced - untraced wall time) / calls"
for p in "${PERCALL_ROWS[@]}"; do
    IFS='|' read -r what m v h <<<"$p"
    printf '  %-30s memtrace [ptrace]  %s\n' "$what" "$m"
    printf '  %-30s %s\n' "" "$v"
    printf '  %-30s %s\n' "" "$h"
done
printf '  %-30s %s\n' "syscalls of memtrace per stop [ptrace]" "$SYSC_PER_STOP (the floor makes 2: wait4 + PTRACE_CONT; ${SYSC_DETAIL:-} in 1000 rounds)"
if [ "$(awk "BEGIN { print ($WORST_RATIO > 1.3) }")" = 1 ]; then
    echo "  MISSED because: every stop pays GETREGS; allocation entries also read the stack (1 process_vm_readv)"
    echo "  and write the return stub address (1 pwrite); entries write the PC (POKEUSER) to step over the"
    echo "  displaced instruction; the event loop polls when the target is not stopped yet.  At ~1 us per"
    echo "  syscall against a ~9 us floor that is ~1.3-1.5x before any scheduling noise; see bench/README.md."
fi
echo
printf '%-58s %s\n' "unwinding+CFI per call, warm cache (-d 32 - -d 1) [ptrace]" "$UNWIND_CPU µs CPU for 31 frames (CPU of tracer+program at -d 1: $UNWIND_CPU_D1 µs/call; wall difference $UNWIND_WALL µs is within noise)"
printf '%-58s %s\n' "report writing / symbolization ($NSTACKS stacks) [ptrace]" "$REPORT_MS ms ($REPORT_PER_STACK µs per stack)"
echo
printf '%-58s %s\n' "memtrace peak RSS tracing allocbench (2 threads) [ptrace]" "$RSS_AB KiB"
printf '%-58s %s\n' "memtrace peak RSS, tracing only (no symbols) [ptrace]" "$RSS_TRACE KiB [target 4096 KiB: $(rss_verdict "$RSS_TRACE" 0)]"
printf '%-58s %s\n' "memtrace peak RSS, 0 live blocks (baseline) [ptrace]" "$RSS_0 KiB [target 4096 KiB: $(rss_verdict "$RSS_0" 0)]"
if [ "$(rss_verdict "$RSS_0" 0)" = MISSED ]; then
    echo "  MISSED because: the report symbolizes libc's frames (stdio's buffer stays live).  Indexing"
    echo "  libc6-dbg starts from ~2.0 MiB (own code pages given back first) and adds ~1.8 MiB: the"
    echo "  function, inline and tail-call index being built, .debug_str whole, inflate streams and"
    echo "  chunks (~1.25 MiB), code faulted back (~0.35 MiB), then the symbol table and the line"
    echo "  lookups' chunks; see README, Symbolizer memory."
fi
printf '%-58s %s\n' "memtrace peak RSS, $LIVE_SMALL live blocks [ptrace]" "$RSS_S KiB = $(per_block "$RSS_S" "$LIVE_SMALL") B/block over baseline [target 4 MiB + 64 B/block: $(rss_verdict "$RSS_S" "$LIVE_SMALL")]"
printf '%-58s %s\n' "memtrace peak RSS, $LIVE_BIG live blocks [ptrace]" "$RSS_B KiB = $(per_block "$RSS_B" "$LIVE_BIG") B/block over baseline [target 4 MiB + 64 B/block: $(rss_verdict "$RSS_B" "$LIVE_BIG")]"
printf '%-58s %s\n' "memtrace peak RSS, debug files via memtrace-fs [ptrace]" "$REMOTE_RSS"
printf '%-58s %s\n' "bytes on the wire per trace [ptrace]" "$WIRE"
printf '%-58s %s\n' "attach to $NTHREADS threads / $NLIBS libraries [ptrace]" "$ATTACH"
printf '%-58s %s\n' "leak-scan throughput ($LEAK_MIB MiB, $LEAK_BLOCKS blocks) [no engine]" "$LEAK_ROW"
printf '%-58s %s\n' "--record per sample ($STACKS stacks, 256 changed) [no engine]" "$REC_STEADY"
printf '%-58s %s\n' "  the peak moving at every sample" "$REC_GROW"
printf '%-58s %s\n' "--record, busy real trace (allocbench) [ptrace]" "$REC_ROW"
