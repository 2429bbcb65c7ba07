#!/usr/bin/env bash
# memtrace-fs's debuginfod endpoint (--http), on loopback, checked by
# clients nobody here wrote: elfutils' debuginfod-find returns byte-identical
# debuginfo, executable, source and section files (cmp against the sysroot
# and objcopy --dump-section); gdb names the frames of a fully stripped
# program through DEBUGINFOD_URLS (and does not without it); curl's Range
# requests get the right bytes (cmp against dd) and 416 past the end.
set -u
. "$(dirname "$0")/fs_common.bash"
need_debuginfod_clients
trap 'stop_fs >/dev/null 2>&1' EXIT
root=$MT_TMP/sysroot
make_sysroot "$root"

# A program whose DWARF names its source as /src/dprog.c (the build tree
# mapped onto the sysroot), split into a stripped object and a debug file
# reachable only by build-id.
mkdir -p "$root/src"
cat >"$root/src/dprog.c" <<'C'
#include <stdlib.h>
__attribute__((noinline)) void dprog_inner(int x) { if (x > 0) abort(); }
__attribute__((noinline)) void dprog_outer(int x) { dprog_inner(x + 1); }
int main(int argc, char **argv) { (void)argv; dprog_outer(argc); return 0; }
C
gcc ${MT_TARGET_CFLAGS:-} -g -O0 -Wl,--build-id -fdebug-prefix-map="$root"= \
    -o "$MT_TMP/dprog.full" "$root/src/dprog.c" || fail "gcc"
id=$(readelf_build_id "$MT_TMP/dprog.full")
mkdir -p "$root/usr/lib/debug/.build-id/${id:0:2}" "$root/usr/bin"
objcopy --only-keep-debug "$MT_TMP/dprog.full" "$root/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
strip --strip-all -o "$root/usr/bin/dprog" "$MT_TMP/dprog.full"
cp "$root/usr/bin/dprog" "$MT_TMP/dprog"
readelf -S "$MT_TMP/dprog" | grep -q symtab && fail "dprog still has a symbol table"

start_fs "$MT_TMP/fs.log" "$MEMTRACE_FS" -n -p 0 --http 0 --bind 127.0.0.1 "$root"
HP=$(fs_http_port "$MT_TMP/fs.log") || { echo "$HP"; exit 1; }
URL=http://127.0.0.1:$HP
export DEBUGINFOD_URLS=$URL DEBUGINFOD_CACHE_PATH=$MT_TMP/cache DEBUGINFOD_TIMEOUT=10

# --bind holds for HTTP as for the wire protocol.
ss -ltnH "sport = :$HP" | awk '{print $4}' | grep -qx "127.0.0.1:$HP" ||
    fail "the HTTP port is not bound to 127.0.0.1 only: $(ss -ltnH "sport = :$HP")"

find_cmp() { # KIND ID ARG... EXPECTED
    local want=${*: -1} got
    got=$(debuginfod-find "${@:1:$#-1}") || fail "debuginfod-find $* failed"
    cmp "$got" "$want" || fail "debuginfod-find ${*:1:$#-1}: bytes differ from $want"
    echo "debuginfod-find ${*:1:2}${3:+ $3}: identical ($(stat -c %s "$want") bytes)"
}
find_cmp debuginfo "$id" "$root/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
find_cmp executable "$id" "$root/usr/bin/dprog"
find_cmp source "$id" /src/dprog.c "$root/src/dprog.c"
objcopy --dump-section .debug_line="$MT_TMP/line.bin" \
    "$root/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" "$MT_TMP/discard"
find_cmp section "$id" .debug_line "$MT_TMP/line.bin"
objcopy --dump-section .text="$MT_TMP/text.bin" "$root/usr/bin/dprog" "$MT_TMP/discard"
find_cmp section "$id" .text "$MT_TMP/text.bin"   # NOBITS in the debug file: the executable's
# elfutils 0.188's client cuts sections out of whole files itself: the
# section endpoint is asked directly.
for sec in .debug_line:line .text:text; do
    curl -sS -f -o "$MT_TMP/sec.got" "$URL/buildid/$id/section/${sec%%:*}" || fail "section ${sec%%:*}"
    cmp "$MT_TMP/sec.got" "$MT_TMP/${sec##*:}.bin" || fail "section ${sec%%:*}: bytes differ"
done
code=$(curl -sS -o /dev/null -w '%{http_code}' "$URL/buildid/$id/section/.nosuch")
[ "$code" = 404 ] || fail "a missing section: HTTP $code"
echo "GET .../section/NAME: identical to objcopy --dump-section"
# The sysroot's own layouts: a debug file behind a relative .build-id link,
# and an unstripped object found by the build-id index.
pid=$(readelf_build_id "$root/usr/bin/prog")
find_cmp debuginfo "$pid" "$root/usr/bin/.debug/prog.debug"
find_cmp executable "$pid" "$root/usr/bin/prog"
p2=$(readelf_build_id "$root/opt/app/prog2")
find_cmp debuginfo "$p2" "$root/opt/app/prog2"
debuginfod-find debuginfo 0123456789abcdef0123456789abcdef01234567 >/dev/null 2>&1 &&
    fail "an unknown build-id was found"

# Headers and ranges, with curl as the client.
hdrs=$(curl -sS -D - -o /dev/null "$URL/buildid/$id/executable")
size=$(stat -c %s "$root/usr/bin/dprog")
echo "$hdrs" | grep -qi "^X-DEBUGINFOD-SIZE: $size" || fail "X-DEBUGINFOD-SIZE: $hdrs"
echo "$hdrs" | grep -qi "^X-DEBUGINFOD-FILE: /usr/bin/dprog" || fail "X-DEBUGINFOD-FILE: $hdrs"
echo "$hdrs" | grep -qi "^Content-Length: $size" || fail "Content-Length: $hdrs"
range_cmp() { # RANGE SKIP COUNT
    curl -sS -r "$1" -o "$MT_TMP/part" -w '%{http_code}' "$URL/buildid/$id/executable" >"$MT_TMP/code"
    [ "$(cat "$MT_TMP/code")" = 206 ] || fail "range $1: HTTP $(cat "$MT_TMP/code")"
    dd if="$root/usr/bin/dprog" of="$MT_TMP/want" bs=1 skip="$2" count="$3" status=none
    cmp "$MT_TMP/part" "$MT_TMP/want" || fail "range $1: bytes differ"
}
range_cmp 100-1123 100 1024
range_cmp "$((size - 10))-" $((size - 10)) 10
range_cmp -300 $((size - 300)) 300
range_cmp "0-$((size + 1000))" 0 "$size"
code=$(curl -sS -r "$size-" -o /dev/null -w '%{http_code}' "$URL/buildid/$id/executable")
[ "$code" = 416 ] || fail "a range past the end: HTTP $code, not 416"
echo "ranges: 206 with the right bytes, 416 past the end"
# Keep-alive: curl asks two files over one connection.
curl -sv -o /dev/null -o /dev/null "$URL/buildid/$id/debuginfo" "$URL/buildid/$id/executable" \
    2>"$MT_TMP/curl.v" || fail "curl, two files"
grep -q "Re-using existing connection" "$MT_TMP/curl.v" || fail "the connection was not kept alive"

# gdb names the frames of the fully stripped program only through memtrace-fs.
gdb_bt() {
    timeout 60 gdb -nx -batch -iex 'set debuginfod enabled on' -ex run -ex bt \
        --args "$MT_TMP/dprog" 2>&1
}
bt=$(gdb_bt)
echo "$bt" | grep -E '^#[0-9]' | head -n 6
for f in dprog_inner dprog_outer main; do
    echo "$bt" | grep -qE "^#[0-9]+ .*$f \(.*dprog\.c:[0-9]+" || fail "gdb did not name $f with its line"
done
bt0=$(DEBUGINFOD_URLS= DEBUGINFOD_CACHE_PATH=$MT_TMP/cache0 gdb_bt)
echo "$bt0" | grep -q dprog_inner && fail "gdb named the frames without memtrace-fs: the check proves nothing"

curl -sS "$URL/metrics" | grep -E '^http_requests_total\{type="(debuginfo|section)"\}'
stop_fs || fail "memtrace-fs did not stop cleanly"
echo "fs_debuginfod: ok"
