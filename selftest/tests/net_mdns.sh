#!/usr/bin/env bash
# mDNS in two network namespaces: memtrace-fs publishes through a private
# avahi-daemon in "host"; avahi-browse there (the oracle) resolves it; the
# target's one-shot query (mdns_discover) in "target" finds the same address
# and port, and files read through it compare equal.  Also: renaming on a
# name collision and publishing again after an avahi-daemon restart, both as
# avahi-browse sees them, publishing once the daemons appear after
# memtrace-fs started, and "nothing found" once memtrace-fs is gone.
set -u
. "$(dirname "$0")/net_common.bash"
need_tool avahi-daemon avahi-daemon
need_tool dbus-daemon dbus
setup_netns
root=$MT_TMP/sysroot
make_sysroot "$root"
name=mtfs-test-$tag
# memtrace-fs first, before any dbus or avahi-daemon: it says so once, serves
# anyway, and publishes as soon as the daemons appear.
"${IN_HOST[@]}" "$MEMTRACE_FS" -p 3002 -N "$name" "$root" >"$MT_TMP/fs.log" 2>&1 &
FS1=$!
PIDS+=($FS1)
wait_for_line "$MT_TMP/fs.log" 'no avahi-daemon reachable' 10
[ "$(grep -c 'no avahi-daemon reachable' "$MT_TMP/fs.log")" -eq 1 ] ||
    { cat "$MT_TMP/fs.log"; fail "memtrace-fs should say once that no avahi-daemon is reachable"; }
start_dbus
start_avahi

line=$(browse "$name") || { cat "$MT_TMP/fs.log" "$MT_TMP/avahi.log"; fail "avahi-browse does not see $name"; }
echo "avahi-browse: $line"
oracle_addr=$(echo "$line" | cut -d';' -f8)
oracle_port=$(echo "$line" | cut -d';' -f9)
echo "$line" | grep -q '"proto=1"' || fail "TXT proto=1 missing"
echo "$line" | grep -qF "\"sysroots=$(realpath "$root")\"" || fail "TXT sysroots missing"

# The debuginfod endpoint, published as _debuginfod._tcp under the same
# name: the address avahi-browse resolves serves debuginfod-find in "target".
dline=
for _ in $(seq 1 40); do
    dline=$("${IN_HOST[@]}" timeout 10 avahi-browse -rpt _debuginfod._tcp 2>/dev/null |
            awk -F';' -v n="$name" '$1 == "=" && $3 == "IPv4" && $4 == n' | head -n 1)
    [ -n "$dline" ] && break
    sleep 0.5
done
[ -n "$dline" ] || { cat "$MT_TMP/fs.log"; fail "avahi-browse does not see _debuginfod._tcp $name"; }
echo "avahi-browse: $dline"
[ "$(echo "$dline" | cut -d';' -f9)" = 8002 ] || fail "_debuginfod._tcp not on port 8002"
if command -v debuginfod-find >/dev/null; then
    did=$(readelf_build_id "$MT_TMP/prog.full")
    got=$("${IN_TARGET[@]}" env DEBUGINFOD_URLS="http://$(echo "$dline" | cut -d';' -f8):8002" \
          DEBUGINFOD_CACHE_PATH="$MT_TMP/dcache" debuginfod-find debuginfo "$did") ||
        fail "debuginfod-find through the published address"
    cmp "$got" "$root/usr/bin/.debug/prog.debug" || fail "debuginfod-find: bytes differ"
    echo "debuginfod-find through _debuginfod._tcp: identical"
fi

found=$("${IN_TARGET[@]}" "$TEST_MDNS" discover 3000)
echo "mdns_discover: $found"
[ "$found" = "found $oracle_addr:$oracle_port" ] ||
    fail "mdns_discover says '$found', avahi-browse says $oracle_addr:$oracle_port"

id=$(readelf_build_id "$MT_TMP/prog.full")
out=$MT_TMP/out
mkdir -p "$out"
"${IN_TARGET[@]}" "$TEST_WIRE" client -c "${found#found }" 5000 >"$MT_TMP/client.out" <<CMDS
path /usr/bin/prog $out/prog
buildid $id $out/byid
CMDS
cat "$MT_TMP/client.out"
[ "$(sed -n 2p "$MT_TMP/client.out" | cut -d' ' -f1)" = ok ] || fail "read by path"
[ "$(sed -n 3p "$MT_TMP/client.out" | cut -d' ' -f1)" = ok ] || fail "read by build-id"
cmp "$out/prog" "$root/usr/bin/prog" || fail "bytes differ"
cmp "$out/byid" "$root/usr/bin/.debug/prog.debug" || fail "bytes differ (build-id)"

# Collision: a second server with the same name gets another one.
"${IN_HOST[@]}" "$MEMTRACE_FS" -p 3003 -N "$name" "$root" >"$MT_TMP/fs2.log" 2>&1 &
FS2=$!
PIDS+=($FS2)
ok=
for _ in $(seq 1 40); do
    n=$("${IN_HOST[@]}" timeout 10 avahi-browse -rpt _memtrace-fs._tcp 2>/dev/null |
        awk -F';' '$1 == "=" && $9 == 3003 {print $4}' | head -n 1)
    if [ -n "$n" ] && [ "$n" != "$name" ]; then ok=1; break; fi
    sleep 0.5
done
cat "$MT_TMP/fs2.log"
[ -n "$ok" ] || fail "second server was not renamed (avahi-browse shows '$n')"
echo "renamed on collision: $n"
kill "$FS2"; wait "$FS2" 2>/dev/null

# avahi-daemon restart: memtrace-fs publishes again by itself.
stop_avahi   # waits for its end
start_avahi
browse "$name" >/dev/null || { cat "$MT_TMP/fs.log"; fail "not published again after avahi-daemon restart"; }
echo "published again after avahi-daemon restart"
cat "$MT_TMP/fs.log"; grep -q "back: publishing again" "$MT_TMP/fs.log" || fail "no message about publishing again"

# Gone: discovery says so within its timeout.
kill "$FS1"; wait "$FS1" 2>/dev/null
# Its goodbye reached avahi: the oracle no longer lists it.
gone() { ! "${IN_HOST[@]}" timeout 10 avahi-browse -rpt _memtrace-fs._tcp 2>/dev/null |
    awk -F';' -v n="$name" '$1 == "=" && $4 == n' | grep -q .; }
wait_until 15 "avahi-browse to drop $name" gone
start=$SECONDS
if res=$("${IN_TARGET[@]}" "$TEST_MDNS" discover 2000); then
    fail "discovered a server that is gone: $res"
fi
echo "after stop: $res ($((SECONDS - start)) s)"
[ $((SECONDS - start)) -le 4 ] || fail "discovery took too long"
cat "$MT_TMP/fs.log"
echo "net_mdns: ok"
