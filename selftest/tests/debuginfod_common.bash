# Helpers of the debuginfod_*.sh tests (sourced, not a test itself): a
# private network namespace with only loopback up (elfutils' debuginfod
# listens on every address: here that is 127.0.0.1 and ::1 of a namespace
# this test owns), a stripped program whose debug file is elsewhere, and
# elfutils' own debuginfod server over a directory of debug files.

. "$(dirname "${BASH_SOURCE[0]}")/fs_common.bash"
need_tool debuginfod debuginfod
need_tool curl curl
need_tool addr2line binutils

NS=mtdinf$$
IN_NS=(ip netns exec "$NS")
dinf_cleanup() {
    for pid in $(ip netns pids "$NS" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
    ip netns del "$NS" 2>/dev/null
}
dinf_netns() {
    ip netns add "$NS" 2>/dev/null || skip "cannot create a network namespace (need root)"
    trap dinf_cleanup EXIT
    "${IN_NS[@]}" ip link set lo up || fail "lo up"
}

# make_dprog DIR [C]: DIR/dprog (no symbols, no debug info: only its build-id),
# DIR/dprog.full (the unstripped build, for addr2line) and DIR/debug/dprog.debug.
# C: more code, for another build-id.
make_dprog() {
    local d=$1 more=${2:-}
    mkdir -p "$d/debug"
    cat >"$d/dprog.c" <<'C'
#include <stdlib.h>
#include <string.h>
__attribute__((noinline)) char *dinf_make(int n) { char *p = malloc(n); memset(p, 1, n); return p; }
__attribute__((noinline)) void dinf_leak(void) { for (int i = 0; i < 3; i++) dinf_make(100 + i); }
int main(void) { dinf_leak(); return 0; }
C
    echo "$more" >>"$d/dprog.c"
    gcc ${MT_TARGET_CFLAGS:-} -g -O1 -Wl,--build-id -o "$d/dprog.full" "$d/dprog.c" || fail "gcc"
    objcopy --only-keep-debug "$d/dprog.full" "$d/debug/dprog.debug"
    strip --strip-all -o "$d/dprog" "$d/dprog.full"
    DPROG_ID=$(readelf_build_id "$d/dprog.full")
    [ -n "$DPROG_ID" ] || fail "no build-id"
}

free_port() {
    "${IN_NS[@]}" python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# start_elfutils DIR: elfutils' debuginfod over DIR in the namespace; waits
# until it serves DPROG_ID (its scan is done).  Sets ED_URL.
start_elfutils() {
    local port
    port=$(free_port)
    "${IN_NS[@]}" debuginfod -F "$1" -p "$port" -d "$MT_TMP/debuginfod.sqlite" \
        >"$MT_TMP/debuginfod.log" 2>&1 &
    ED_URL=http://127.0.0.1:$port
    for _ in $(seq 1 100); do
        "${IN_NS[@]}" curl -sf -o /dev/null "$ED_URL/buildid/$DPROG_ID/debuginfo" && return 0
        sleep 0.2
    done
    cat "$MT_TMP/debuginfod.log"
    fail "elfutils debuginfod did not serve $DPROG_ID within 20 s"
}

# check_named REPORT CONTROL: every frame of dprog that CONTROL (a trace
# without the debug file) shows as dprog+0xADDR is named in REPORT, frame
# for frame, as binutils' addr2line -f names that address in dprog.full.
check_named() {
    local report=$1 control=$2 full=$3 n=0
    paste -d '\t' <(grep -E '^ +#[0-9]+ ' "$control") <(grep -E '^ +#[0-9]+ ' "$report") >"$MT_TMP/pairs"
    while IFS=$'\t' read -r c r; do
        [[ $c =~ dprog\+0x([0-9a-f]+)$ ]] || continue
        local addr=$((16#${BASH_REMATCH[1]}))
        [[ $c =~ ^\ +#0\  ]] || addr=$((addr - 1))   # a return address: the call is before it
        local want
        want=$(addr2line -f -e "$full" "$(printf '0x%x' "$addr")" | head -n 1)
        [[ $want == "??" ]] && continue
        [[ $r =~ ^\ +#[0-9]+\ $want\(\)\  ]] || fail "frame '$c' should be $want(): got '$r'"
        n=$((n + 1))
    done <"$MT_TMP/pairs"
    [ "$n" -ge 4 ] || fail "only $n frames of dprog compared (control: $(cat "$control"))"
    echo "$n frames of the stripped dprog named as addr2line names them"
}
