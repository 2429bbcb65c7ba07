#!/usr/bin/env bash
# The whole cross-debugging story in two network namespaces: the target has
# only stripped programs, memtrace-fs in "host" has their debug files.
#   A. memtrace -m (mDNS) in "target" traces the stripped demo: its report is
#      identical to a local trace of the unstripped demo, and a local trace of
#      the stripped one lacks the names (so they came over the wire).
#   B. Reversed roles: memtrace -l in "target", memtrace-fs -c connects in: same.
#   C. memtrace-fs killed mid-trace and started again: the trace goes on and
#      the report is still identical; killed for good: memtrace finishes, says
#      why, and reports what it can.
set -u
. "$(dirname "$0")/net_common.bash"
MEMTRACE=${MEMTRACE:-$MT_ROOT/$MT_BUILD/memtrace}
MT_PROGS=${MT_PROGS:-$MT_ROOT/$MT_BUILD/selftest}
[ -x "$MEMTRACE" ] || skip "no memtrace binary"
[ -x "$MT_PROGS/demo" ] && [ -x "$MT_PROGS/phases" ] || skip "selftest programs not built"
need_tool avahi-daemon avahi-daemon
setup_netns
start_dbus
start_avahi

t=$MT_TMP/t
root=$MT_TMP/sysroot
mkdir -p "$t" "$root$t"
# stage PROG: references from the unstripped program at $t/PROG, then the
# stripped one in its place and in the sysroot, the debug file by build-id.
stage() {
    local p=$1 id
    cp "$MT_PROGS/$p" "$t/$p"
    id=$(readelf_build_id "$t/$p")
    [ -n "$id" ] || fail "$p has no build-id"
    mkdir -p "$root/usr/lib/debug/.build-id/${id:0:2}"
    objcopy --only-keep-debug "$MT_PROGS/$p" "$root/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
}
stage demo
stage phases
"$MEMTRACE" -q -o "$MT_TMP/demo.local" "$t/demo" >/dev/null 2>"$MT_TMP/demo.local.err" ||
    fail "local trace of demo: $(cat "$MT_TMP/demo.local.err")"
mkdir -p "$MT_TMP/ctl0"
touch "$MT_TMP/ctl0/go0" "$MT_TMP/ctl0/go1" "$MT_TMP/ctl0/go2" "$MT_TMP/ctl0/go3"
"$MEMTRACE" -q -o "$MT_TMP/phases.local" "$t/phases" "$MT_TMP/ctl0" >/dev/null 2>&1 ||
    fail "local trace of phases"
for p in demo phases; do
    strip --strip-all "$t/$p"
    cp "$t/$p" "$root$t/$p"
done
grep -q "cache_insert() in .*demo.c" "$MT_TMP/demo.local" || fail "reference trace lacks names"
"$MEMTRACE" -q -o "$MT_TMP/demo.stripped" "$t/demo" >/dev/null 2>&1
if grep -q "cache_insert" "$MT_TMP/demo.stripped"; then
    fail "the stripped demo has names without memtrace-fs: the test proves nothing"
fi

# The peak's time differs from run to run: compared as "T".
timeless() { sed -E 's/^(    peak heap: [0-9]+ bytes in [0-9]+ blocks at )[0-9]+\.[0-9]+ s$/\1T s/' "$1"; }
same_report() { # REFERENCE REPORT WHAT
    if ! diff -u <(timeless "$1") <(timeless "$2") >"$MT_TMP/diff"; then
        head -40 "$MT_TMP/diff"
        fail "$3: report differs from the local trace of the unstripped program"
    fi
    echo "$3: report identical to the local unstripped trace"
}

# A. mDNS
"${IN_HOST[@]}" "$MEMTRACE_FS" -p 3002 -N "mtfs-trace-$tag" "$root" >"$MT_TMP/fs.log" 2>&1 &
FS=$!
PIDS+=($FS)
browse "mtfs-trace-$tag" >/dev/null || fail "avahi-browse does not see memtrace-fs"
"${IN_TARGET[@]}" "$MEMTRACE" -m -o "$MT_TMP/demo.mdns" "$t/demo" >/dev/null 2>"$MT_TMP/demo.mdns.err" ||
    { cat "$MT_TMP/demo.mdns.err"; fail "memtrace -m failed"; }
cat "$MT_TMP/demo.mdns.err"
grep -q "found memtrace-fs at $ADDR_H:3002" "$MT_TMP/demo.mdns.err" || fail "memtrace -m did not find memtrace-fs"
same_report "$MT_TMP/demo.local" "$MT_TMP/demo.mdns" "A (memtrace -m)"

# B. reversed roles
"${IN_TARGET[@]}" "$MEMTRACE" -l "$ADDR_T:4003" -o "$MT_TMP/demo.rev" "$t/demo" >/dev/null 2>"$MT_TMP/demo.rev.err" &
TR=$!
PIDS+=($TR)
wait_until 10 "memtrace -l to listen on port 4003" tcp_listening 4003 "$NS_T"
"${IN_HOST[@]}" "$MEMTRACE_FS" -n -c "$ADDR_T:4003" "$root" >"$MT_TMP/fs-rev.log" 2>&1 &
FSR=$!
PIDS+=($FSR)
wait "$TR" || { cat "$MT_TMP/demo.rev.err"; fail "memtrace -l failed"; }
kill "$FSR"; wait "$FSR" 2>/dev/null
same_report "$MT_TMP/demo.local" "$MT_TMP/demo.rev" "B (memtrace -l, memtrace-fs -c)"

# C. killed mid-trace
run_phases() { # NAME RESTART(yes/no)
    local ctl=$MT_TMP/ctl-$1
    mkdir -p "$ctl"
    touch "$ctl/go0"
    "${IN_TARGET[@]}" "$MEMTRACE" -c "$ADDR_H:3002" -o "$MT_TMP/phases.$1" "$t/phases" "$ctl" \
        >"$MT_TMP/phases.$1.out" 2>"$MT_TMP/phases.$1.err" &
    local tr=$!
    PIDS+=($tr)
    wait_for_line "$MT_TMP/phases.$1.out" "^phase 1$"
    kill -KILL "$FS"; wait "$FS" 2>/dev/null
    touch "$ctl/go1"
    wait_for_line "$MT_TMP/phases.$1.out" "^phase 2$"
    if [ "$2" = yes ]; then
        "${IN_HOST[@]}" "$MEMTRACE_FS" -n -p 3002 "$root" >"$MT_TMP/fs-$1.log" 2>&1 &
        FS=$!
        PIDS+=($FS)
        wait_for_line "$MT_TMP/fs-$1.log" "serving .* on port 3002"
    fi
    touch "$ctl/go2" "$ctl/go3"
    local start=$SECONDS rc=0
    wait "$tr" || rc=$?
    cat "$MT_TMP/phases.$1.err"
    [ $rc -eq 0 ] || fail "C ($1): memtrace exited $rc"
    [ $((SECONDS - start)) -le 60 ] || fail "C ($1): memtrace took $((SECONDS - start)) s to finish"
}
run_phases restart yes
same_report "$MT_TMP/phases.local" "$MT_TMP/phases.restart" "C (memtrace-fs restarted mid-trace)"
run_phases gone no
grep -q "memtrace-fs .*cannot reconnect" "$MT_TMP/phases.gone.err" || fail "C: memtrace did not say why it cannot reconnect"
grep -q "bytes in" "$MT_TMP/phases.gone" || fail "C: no report after memtrace-fs went away"
echo "C (memtrace-fs gone): memtrace finished and reported"
echo "net_trace: ok"
