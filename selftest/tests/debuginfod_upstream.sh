#!/usr/bin/env bash
# memtrace-fs --upstream: elfutils' debuginfod (on loopback, in a network
# namespace of this test) holds the only copy of a stripped program's debug
# file; memtrace-fs fetches it through libdebuginfod, keeps it in its cache
# and serves it over both protocols: memtrace -c names the frames (oracle:
# binutils' addr2line on the unstripped build), elfutils' debuginfod-find
# against memtrace-fs gets the byte-identical file, memtrace --debuginfod
# against memtrace-fs names them too.  The cache keeps --cache-size (the
# least recently used file goes), an upstream that answers with another
# build's file is refused, and a memtrace-fs named as its own upstream
# does not loop.  libdebuginfod's per-build-id directories under the
# cache's .fetch/ go after every lookup, hit, miss or failure (and those a
# killed memtrace-fs left go at its start).
set -u
. "$(dirname "$0")/debuginfod_common.bash"
need_debuginfod_clients
dinf_netns
d=$MT_TMP/d d2=$MT_TMP/d2 d3=$MT_TMP/d3
make_dprog "$d2" 'int dinf_other(int x) { return x * 7 + 1; }'
ID2=$DPROG_ID
make_dprog "$d3" 'int dinf_third(int x) { return x * 5 + 3; }'
ID3=$DPROG_ID
make_dprog "$d"
ID1=$DPROG_ID
mkdir -p "$MT_TMP/up"
cp "$d/debug/dprog.debug" "$MT_TMP/up/one.debug"
cp "$d2/debug/dprog.debug" "$MT_TMP/up/two.debug"
cp "$d3/debug/dprog.debug" "$MT_TMP/up/three.debug"
start_elfutils "$MT_TMP/up"
"${IN_NS[@]}" curl -sf -o /dev/null "$ED_URL/buildid/$ID2/debuginfo" || fail "elfutils lacks $ID2"
cd "$d"
export MEMTRACE_REPORT_IN_PLACE=1

s1=$(stat -c %s "$d/debug/dprog.debug")
s2=$(stat -c %s "$d2/debug/dprog.debug")
s3=$(stat -c %s "$d3/debug/dprog.debug")
limit=$((s1 + s2 + s3 - 1))   # room for two of the three
mkdir -p "$MT_TMP/empty"
cache=$MT_TMP/cache
start_fs "$MT_TMP/fs.log" "${IN_NS[@]}" "$MEMTRACE_FS" -n -p 0 --http 0 --bind 127.0.0.1 \
    --upstream "$ED_URL" --cache-dir "$cache" --cache-size "$limit" "$MT_TMP/empty"
HP=$(fs_http_port "$MT_TMP/fs.log") || exit 1

"${IN_NS[@]}" env -u DEBUGINFOD_URLS "$MEMTRACE" ./dprog >"$MT_TMP/control.out" 2>/dev/null ||
    fail "control trace"
"${IN_NS[@]}" env -u DEBUGINFOD_URLS "$MEMTRACE" -c "127.0.0.1:$FS_PORT" ./dprog \
    >"$MT_TMP/wire.out" 2>"$MT_TMP/wire.err" || { cat "$MT_TMP/wire.err"; fail "memtrace -c"; }
check_named "$MT_TMP/wire.out" "$MT_TMP/control.out" "$d/dprog.full"
cmp "$cache/$ID1.debug" "$d/debug/dprog.debug" || fail "the cached file differs from upstream's"
grep -q "fetched $ID1.debug" "$MT_TMP/fs.log" || fail "no fetch in the log: $(cat "$MT_TMP/fs.log")"
[ "$(stat -c %a "$cache")" = 700 ] || fail "cache directory mode $(stat -c %a "$cache")"
echo "memtrace -c: frames named from upstream's debug file (cached, identical)"

got=$("${IN_NS[@]}" env DEBUGINFOD_URLS="http://127.0.0.1:$HP" DEBUGINFOD_CACHE_PATH="$MT_TMP/dfcache" \
      debuginfod-find debuginfo "$ID1") || fail "debuginfod-find against memtrace-fs"
cmp "$got" "$d/debug/dprog.debug" || fail "debuginfod-find: bytes differ"
# (the report symbolized in a forked child, as by default: the child
# opens its own connection)
"${IN_NS[@]}" env -u DEBUGINFOD_URLS -u MEMTRACE_REPORT_IN_PLACE "$MEMTRACE" --debuginfod "http://127.0.0.1:$HP" ./dprog \
    >"$MT_TMP/http.out" 2>"$MT_TMP/http.err" || { cat "$MT_TMP/http.err"; fail "memtrace --debuginfod"; }
check_named "$MT_TMP/http.out" "$MT_TMP/control.out" "$d/dprog.full" >/dev/null
echo "HTTP: debuginfod-find identical, memtrace --debuginfod names the frames"

# Three files, room for two: the least recently used one goes, whichever
# came first.  ID1 (fetched first) is used again after ID2 is fetched.
got=$("${IN_NS[@]}" env DEBUGINFOD_URLS="http://127.0.0.1:$HP" DEBUGINFOD_CACHE_PATH="$MT_TMP/dfcache" \
      debuginfod-find debuginfo "$ID2") || fail "debuginfod-find $ID2"
cmp "$got" "$d2/debug/dprog.debug" || fail "debuginfod-find $ID2: bytes differ"
"${IN_NS[@]}" curl -sf -o /dev/null "http://127.0.0.1:$HP/buildid/$ID1/debuginfo" || fail "GET $ID1"
"${IN_NS[@]}" curl -sf -o "$MT_TMP/three.got" "http://127.0.0.1:$HP/buildid/$ID3/debuginfo" ||
    fail "GET $ID3"
cmp "$MT_TMP/three.got" "$d3/debug/dprog.debug" || fail "$ID3: bytes differ"
[ -e "$cache/$ID1.debug" ] || fail "the recently used $ID1 was evicted: $(ls "$cache")"
[ -e "$cache/$ID3.debug" ] || fail "$ID3 not cached"
[ -e "$cache/$ID2.debug" ] && fail "the least recently used $ID2 is still cached (limit $limit)"
used=$(find "$cache" -maxdepth 1 -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')
[ "$used" -le "$limit" ] || fail "cache holds $used bytes, limit $limit"
echo "cache: $used bytes of at most $limit, the least recently used evicted"

# no_fetch_dirs CACHE WHAT: nothing of libdebuginfod's per-build-id
# directories is left under CACHE/.fetch.
no_fetch_dirs() {
    local left
    left=$(find "$1/.fetch" -mindepth 1 -type d 2>/dev/null)
    [ -z "$left" ] || fail "$2: $(echo "$left" | wc -l) directories left under $1/.fetch: $(echo "$left" | head -n 3)"
}
no_fetch_dirs "$cache" "after 3 fetches"
# Misses (no such build-id upstream) and hits, 20 of each.
for i in $(seq 1 20); do
    miss=$(printf '%08x%032x' $((0x5eed0000 + i)) 0)
    code=$("${IN_NS[@]}" curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$HP/buildid/$miss/debuginfo")
    [ "$code" = 404 ] || fail "GET $miss (upstream has none): HTTP $code"
    "${IN_NS[@]}" curl -sf -o /dev/null "http://127.0.0.1:$HP/buildid/$ID3/debuginfo" || fail "GET $ID3 (cached)"
done
no_fetch_dirs "$cache" "after 20 misses and 20 hits"
echo "cache: no libdebuginfod directory left after 3 fetches, 20 misses and 20 hits"

# A hostile upstream: every build-id gets the second program's file.
"${IN_NS[@]}" python3 - "$MT_TMP/fake.port" "$d2/debug/dprog.debug" >"$MT_TMP/fake.log" 2>&1 <<'PY' &
import http.server, os, sys
data = open(sys.argv[2], "rb").read()
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def log_message(self, *a): pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1] + ".tmp", "w").write(str(s.server_port))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.serve_forever()
PY
for _ in $(seq 1 50); do [ -s "$MT_TMP/fake.port" ] && break; sleep 0.1; done
stop_fs
# What a killed memtrace-fs leaves in flight goes at the start.
mkdir -p "$MT_TMP/cache2/.fetch/$ID2"
echo partial >"$MT_TMP/cache2/.fetch/$ID2/debuginfo"
start_fs "$MT_TMP/fs2.log" "${IN_NS[@]}" "$MEMTRACE_FS" -n -p 0 --http 0 --bind 127.0.0.1 \
    --upstream "http://127.0.0.1:$(cat "$MT_TMP/fake.port")" --cache-dir "$MT_TMP/cache2" "$MT_TMP/empty"
HP2=$(fs_http_port "$MT_TMP/fs2.log") || exit 1
"${IN_NS[@]}" env DEBUGINFOD_URLS="http://127.0.0.1:$HP2" DEBUGINFOD_CACHE_PATH="$MT_TMP/dfcache2" \
    debuginfod-find debuginfo "$ID1" >/dev/null 2>&1 && fail "a file of another build-id was served"
grep -q "refusing $ID1.debug: not an ELF file with the build-id asked" "$MT_TMP/fs2.log" ||
    fail "no refusal logged: $(cat "$MT_TMP/fs2.log")"
[ -z "$(find "$MT_TMP/cache2" -maxdepth 1 -type f)" ] || fail "the wrong file was cached"
no_fetch_dirs "$MT_TMP/cache2" "a refused fetch (or the start)"
echo "an upstream answering with another build's file: refused, nothing cached"

# memtrace-fs as its own upstream: the hop header stops the second round.
stop_fs
port=$(free_port)
start_fs "$MT_TMP/fs3.log" "${IN_NS[@]}" "$MEMTRACE_FS" -n -p 0 --http "$port" --bind 127.0.0.1 \
    --upstream "http://127.0.0.1:$port" --cache-dir "$MT_TMP/cache3" "$MT_TMP/empty"
t0=$SECONDS
"${IN_NS[@]}" env DEBUGINFOD_URLS="http://127.0.0.1:$port" DEBUGINFOD_CACHE_PATH="$MT_TMP/dfcache3" \
    DEBUGINFOD_TIMEOUT=20 debuginfod-find debuginfo "$ID1" >/dev/null 2>&1 && fail "found a file nobody has"
[ $((SECONDS - t0)) -lt 10 ] || fail "a self-referring upstream took $((SECONDS - t0)) s"
echo "memtrace-fs as its own upstream: answered 404 in $((SECONDS - t0)) s"
no_fetch_dirs "$MT_TMP/cache3" "lookups that failed upstream"
stop_fs
echo PASS
