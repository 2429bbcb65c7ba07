#!/usr/bin/env bash
# memtrace --debuginfod with no memtrace-fs: the tracer's own small HTTP
# client names the frames of a stripped program whose debug file only a
# debuginfod server has.  Servers: elfutils' debuginfod (answers 200 with
# the whole file: memtrace downloads it once) and memtrace-fs --http
# (ranges).  Oracle: binutils' addr2line -f on the unstripped build, frame
# for frame against a trace without the debug file.  DEBUGINFOD_URLS is
# used without --debuginfod, and ignored with -c (memtrace-fs serves then).
# Bytes on the wire of each path are counted by a TCP proxy and printed
# (the README's table).  Everything runs in a network namespace of its own.
set -u
. "$(dirname "$0")/debuginfod_common.bash"
here=$(cd "$(dirname "$0")" && pwd)
dinf_netns
d=$MT_TMP/d
make_dprog "$d"
start_elfutils "$d/debug"
cd "$d"
export MEMTRACE_REPORT_IN_PLACE=1 # one process: its stderr is the warning count

run() { # NAME ARGS...: memtrace ARGS ./dprog, report in NAME.out, stderr NAME.err
    local name=$1; shift
    "${IN_NS[@]}" env "${ENVS[@]}" "$MEMTRACE" "$@" ./dprog >"$MT_TMP/$name.out" 2>"$MT_TMP/$name.err"
    local rc=$?
    [ $rc -eq 0 ] || { cat "$MT_TMP/$name.err"; fail "$name: memtrace exited $rc"; }
}
ENVS=(-u DEBUGINFOD_URLS)
run control
grep -q 'dinf_make' "$MT_TMP/control.out" && fail "the control trace names dinf_make without a debug file"
run elfutils --debuginfod "$ED_URL"
check_named "$MT_TMP/elfutils.out" "$MT_TMP/control.out" "$d/dprog.full"
grep -q "no Range support" "$MT_TMP/elfutils.err" || fail "no note that elfutils' server ignores ranges"

ENVS=(DEBUGINFOD_URLS="https://debuginfod.invalid $ED_URL")
run env
check_named "$MT_TMP/env.out" "$MT_TMP/control.out" "$d/dprog.full"
echo "DEBUGINFOD_URLS: used (https entry skipped), frames named"

# memtrace-fs, its sysroot empty at first: with -c, DEBUGINFOD_URLS is not
# used (memtrace-fs serves this run), so the frames stay unnamed.
root=$MT_TMP/root
mkdir -p "$root/usr/lib/debug/.build-id/${DPROG_ID:0:2}"
start_fs "$MT_TMP/fs.log" "${IN_NS[@]}" "$MEMTRACE_FS" -n -p 0 --http 0 --bind 127.0.0.1 "$root"
HP=$(fs_http_port "$MT_TMP/fs.log") || exit 1
ENVS=(DEBUGINFOD_URLS="$ED_URL")
run precedence -c "127.0.0.1:$FS_PORT"
grep -q 'dinf_make' "$MT_TMP/precedence.out" &&
    fail "with -c, memtrace used DEBUGINFOD_URLS anyway"
echo "with -c: DEBUGINFOD_URLS ignored"
ENVS=(-u DEBUGINFOD_URLS)
# Now memtrace-fs has the debug file under .build-id.
cp "$d/debug/dprog.debug" "$root/usr/lib/debug/.build-id/${DPROG_ID:0:2}/${DPROG_ID:2}.debug"

# The bytes of each path, through a counting proxy.
proxy() { # NAME PORT: a counting proxy to PORT; sets PROXY_PORT
    rm -f "$MT_TMP/$1.port"
    "${IN_NS[@]}" python3 "$here/tcp_proxy.py" "$MT_TMP/$1.port" "$2" --record "$MT_TMP/$1" &
    for _ in $(seq 1 50); do [ -s "$MT_TMP/$1.port" ] && break; sleep 0.1; done
    PROXY_PORT=$(cat "$MT_TMP/$1.port") || fail "proxy $1"
}
bytes() { read -r c2s s2c <"$MT_TMP/$1.count" || fail "no count for $1"; echo "$c2s $s2c"; }
ED_PORT=${ED_URL##*:}
proxy p_ed "$ED_PORT";  run m_ed --debuginfod "http://127.0.0.1:$PROXY_PORT"
proxy p_http "$HP";     run m_http --debuginfod "http://127.0.0.1:$PROXY_PORT"
proxy p_wire "$FS_PORT"; run m_wire -c "127.0.0.1:$PROXY_PORT"
for m in m_ed m_http m_wire; do check_named "$MT_TMP/$m.out" "$MT_TMP/control.out" "$d/dprog.full" >/dev/null; done
size=$(stat -c %s "$d/debug/dprog.debug")
echo "bytes on the wire, tracer sent/received (debug file $size bytes, libc's debug files local):"
printf '  %-36s %s\n' "memtrace -c (memtrace protocol)" "$(bytes p_wire)" \
    "memtrace --debuginfod memtrace-fs" "$(bytes p_http)" \
    "memtrace --debuginfod elfutils" "$(bytes p_ed)"
echo "PASS"
