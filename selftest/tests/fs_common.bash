# Helpers of the fs_*.sh and net_*.sh tests (sourced, not a test itself).
# Builds a small sysroot, starts memtrace-fs, and checks results against
# readelf and cmp.

: "${MT_TMP:?}" "${MT_ROOT:?}" "${MT_BUILD:=build}"
MEMTRACE_FS=${MEMTRACE_FS:-$MT_ROOT/$MT_BUILD/memtrace-fs}
TEST_WIRE=${TEST_WIRE:-$MT_ROOT/$MT_BUILD/unit/test_wire}

. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"  # wait_until, wait_for_line
fail() { echo "FAIL: $*"; exit 1; }

# The GNU build-id of an ELF file, as readelf says.
readelf_build_id() {
    readelf -n "$1" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p' | head -n 1
}

# The CRC stored in a .gnu_debuglink section (last 4 bytes, file byte order).
debuglink_crc() {
    local tmp=$MT_TMP/debuglink.bin
    objcopy --dump-section .gnu_debuglink="$tmp" "$1" "$MT_TMP/debuglink.discard"
    python3 -c 'import sys,struct; d=open(sys.argv[1],"rb").read(); print("%08x" % struct.unpack("<I", d[-4:])[0])' "$tmp"
}

# make_sysroot DIR: a program split into stripped object + debug file reachable
# by debuglink and by build-id, a big library, links inside and escaping links.
make_sysroot() {
    local root=$1
    mkdir -p "$root/usr/bin/.debug" "$root/lib" "$root/usr/lib/debug/.build-id"
    cat >"$MT_TMP/prog.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
int helper(int x) { return x * 3; }
int main(void) { char *p = malloc(10); printf("%d\n", helper(4)); free(p); return 0; }
C
    gcc ${MT_TARGET_CFLAGS:-} -g -O0 -Wl,--build-id -o "$MT_TMP/prog.full" "$MT_TMP/prog.c" || fail "gcc"
    objcopy --only-keep-debug "$MT_TMP/prog.full" "$root/usr/bin/.debug/prog.debug"
    objcopy --strip-debug --add-gnu-debuglink="$root/usr/bin/.debug/prog.debug" \
        "$MT_TMP/prog.full" "$root/usr/bin/prog"
    local id
    id=$(readelf_build_id "$MT_TMP/prog.full")
    [ -n "$id" ] || fail "no build-id in prog"
    mkdir -p "$root/usr/lib/debug/.build-id/${id:0:2}"
    # Relative link that stays inside, as distributions ship them.
    ln -s "../../../../../usr/bin/.debug/prog.debug" \
        "$root/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
    # An unstripped object with no .build-id entry: found by build-id through
    # the server's index of the sysroot.
    mkdir -p "$root/opt/app"
    { cat "$MT_TMP/prog.c"; echo 'int prog2_only(int x) { return x + 2; }'; } >"$MT_TMP/prog2.c"
    gcc ${MT_TARGET_CFLAGS:-} -g -O0 -Wl,--build-id -o "$root/opt/app/prog2" "$MT_TMP/prog2.c" || fail "gcc"
    local libc
    libc=$(ldd "$MT_TMP/prog.full" | awk '/libc.so/ {print $3}')
    cp "$libc" "$root/lib/libbig.so"
    head -c 3000000 /dev/urandom >"$root/lib/random.bin"
    ln -s /lib/libbig.so "$root/lib/alias-abs.so"      # absolute: means the sysroot's /lib
    ln -s ../lib/libbig.so "$root/lib/alias-rel.so"
    echo "top secret" >"$MT_TMP/secret"
    ln -s ../../secret "$root/lib/escape-rel"          # ../.. leaves the sysroot
    ln -s "$MT_TMP/secret" "$root/lib/escape-abs"      # host path: not inside
    ln -s ../.. "$root/lib/escape-dir"
    ln -s loop1 "$root/lib/loop2"; ln -s loop2 "$root/lib/loop1"
    mkfifo "$root/lib/fifo"
}

# start_fs LOG ARGS...: starts memtrace-fs in the background, waits for its
# port; sets FS_PID and FS_PORT.
start_fs() {
    local log=$1; shift
    : >"$log"   # a log reused from an earlier start must not answer for this one
    "$@" >"$log" 2>&1 3>&- &
    FS_PID=$!
    FS_PORT=
    for _ in $(seq 1 100); do
        FS_PORT=$(sed -n 's/.*serving .* on port \([0-9]*\).*/\1/p' "$log" | head -n 1)
        [ -n "$FS_PORT" ] && return 0
        kill -0 "$FS_PID" 2>/dev/null || { cat "$log"; fail "memtrace-fs died"; }
        sleep 0.1
    done
    cat "$log"; fail "memtrace-fs did not start"
}

# readheld_until_ok N FILE: after a failed read the provider fails reads at
# once for a while (its back-off: 1 s, doubling), a timer no test can see.
# Sends "readheld FILE" to the test_wire client (fd 3, replies in
# $MT_TMP/client.out, N of them so far; the test's wait_lines N waits for the
# Nth) until one is answered ok, for at most 15 s.  OK_LINE: that reply's number.
readheld_until_ok() {
    local n=$1 end=$((SECONDS + 15)) reply
    while :; do
        echo "readheld $2" >&3
        n=$((n + 1))
        wait_lines "$n"
        reply=$(sed -n "${n}p" "$MT_TMP/client.out")
        [[ $reply == ok* ]] && break
        [ $SECONDS -lt $end ] || fail "reads still fail after 15 s: $reply"
        sleep 0.1
    done
    OK_LINE=$n
}

stop_fs() {
    [ -n "${FS_PID:-}" ] || return 0
    kill -TERM "$FS_PID" 2>/dev/null
    local rc=0
    wait "$FS_PID" || rc=$?
    FS_PID=
    return $rc
}

# The debuginfod tests' clients (elfutils' debuginfod-find, curl): skip without.
need_debuginfod_clients() {
    command -v debuginfod-find >/dev/null || { echo "debuginfod-find is not installed"; exit 77; }
    command -v curl >/dev/null || { echo "curl is not installed"; exit 77; }
}

# fs_http_port LOG: the HTTP (debuginfod) port a memtrace-fs --http 0 logged.
fs_http_port() {
    local p
    p=$(sed -n 's/.*debuginfod endpoint: http port \([0-9]*\).*/\1/p' "$1")
    [ -n "$p" ] || { cat "$1"; fail "no HTTP port in the log"; }
    echo "$p"
}
