#!/usr/bin/env bash
# Issue 21, finding 2: a slow host must not freeze the traced program.
# memtrace-fs answers through a proxy that holds every chunk it sends for
# DELAY ms (the issue's case is 4.5 s, just under memtrace's 5 s timeout;
# the test uses 1 s per chunk so that it stays short, which changes the
# length of the stall on old code, not its existence).  A program sleeping
# 100 ms per loop records its worst gap between loops; a `report` on the
# console then symbolizes over the slow link while it runs, and meanwhile
# the program makes a misuse error (new[] released by free), whose stacks
# are named over the same link.  Its worst gap traced must stay within 2x
# of the worst gap of an untraced copy run alongside (same machine load),
# and the report must name its functions (names that only the served copy
# can give: the local program is stripped).
set -u
. "$(dirname "$0")/fs_common.bash"
PROXY=
trap 'stop_fs >/dev/null 2>&1; [ -n "$PROXY" ] && kill $PROXY 2>/dev/null' EXIT
DELAY=${DELAY:-1000}
here=$(dirname "$0")
cat >"$MT_TMP/gap.cpp" <<'C'
#include <cstdio>
#include <cstdlib>
#include <ctime>
static double now() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
__attribute__((noinline)) void *gap_keep_block(int i) { return malloc(16 + i); }
// A misuse error while the report is fetched: new[] released by free.
__attribute__((noinline)) void gap_mismatch() { int *q = new int[4]; free(q); }
int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 50;
    double worst = 0, prev = now();
    for (int i = 0; i < n; i++) {
        gap_keep_block(i);
        free(malloc(32));
        if (i == 5) {
            printf("five loops done\n");
            fflush(stdout);
        }
        if (i == 20)
            gap_mismatch();
        timespec d = { 0, 100 * 1000 * 1000 };
        nanosleep(&d, NULL);
        double t = now();
        if (i > 0 && t - prev > worst) worst = t - prev;
        prev = t;
    }
    printf("worst gap %.0f ms\n", worst * 1e3);
    return 0;
}
C
g++ ${MT_TARGET_CFLAGS:-} -g -O0 -o "$MT_TMP/gap.full" "$MT_TMP/gap.cpp" || fail "g++"
prog=$MT_TMP/run/gap
mkdir -p "$MT_TMP/run" && strip -o "$prog" "$MT_TMP/gap.full"
root=$MT_TMP/root
mkdir -p "$root$MT_TMP/run" && cp "$MT_TMP/gap.full" "$root$prog"


start_fs "$MT_TMP/fs.log" "$MEMTRACE_FS" -n -p 0 "$root"
python3 "$here/tcp_proxy.py" "$MT_TMP/proxy.port" "$FS_PORT" --delay "$DELAY" &
PROXY=$!
for _ in $(seq 1 50); do [ -s "$MT_TMP/proxy.port" ] && break; sleep 0.1; done
pport=$(cat "$MT_TMP/proxy.port")

# The program runs 80 x 100 ms; the report is asked for once it has looped
# five times.
# An untraced copy runs alongside, so that both see the same machine load.
start=$SECONDS
"$prog" 80 >"$MT_TMP/untraced.out" &
plain=$!
{ for ((k = 0; k < 300; k++)); do grep -qs "five loops done" "$MT_TMP/out" && break; sleep 0.1; done
  echo "report"; } |
    "$MEMTRACE" -C -c "127.0.0.1:$pport" "$prog" 80 >"$MT_TMP/out" 2>"$MT_TMP/err"
rc=$?
wait $plain
untraced=$(sed -n 's/worst gap \([0-9]*\) ms/\1/p' "$MT_TMP/untraced.out")
echo "untraced, alongside: worst gap $untraced ms"
cat "$MT_TMP/err"
traced=$(sed -n 's/worst gap \([0-9]*\) ms/\1/p' "$MT_TMP/out")
echo "traced while a report was fetched at $DELAY ms a chunk: worst gap $traced ms (run: $((SECONDS - start)) s)"
[ $rc = 0 ] || fail "memtrace exited $rc"
# Twice: the console's report and the final one.
[ "$(grep -c "gap_keep_block(int) in " "$MT_TMP/out")" -ge 2 ] ||
    fail "the console's report has no names from the served copy"
grep -q "Mismatched free() / delete / delete \[\]" "$MT_TMP/err" || fail "the misuse error was not printed"
grep -q "gap_mismatch() (gap.cpp:" "$MT_TMP/err" || fail "the misuse error's stack has no names from the served copy"
[ -n "$traced" ] && [ "$traced" -le $((2 * untraced)) ] ||
    fail "the traced program was held: worst gap $traced ms, untraced $untraced ms (2x allowed)"
echo "rely_slow_host: ok"
