#!/usr/bin/env bash
# mDNS over IPv6 only: two namespaces whose veth pair has nothing but
# link-local IPv6 addresses.  memtrace-fs publishes through avahi-daemon
# (use-ipv6 only); avahi-browse in "host" (the oracle) resolves its address;
# mdns_discover in "target" queries ff02::fb, finds the same address (scoped
# to its interface) and port, and files read through it compare equal.
set -u
. "$(dirname "$0")/net_common.bash"
need_tool avahi-daemon avahi-daemon
NET_IPV6_ONLY=1
setup_netns
start_dbus
start_avahi

root=$MT_TMP/sysroot
make_sysroot "$root"
name=mtfs-v6-$tag
"${IN_HOST[@]}" "$MEMTRACE_FS" -p 3002 -N "$name" "$root" >"$MT_TMP/fs.log" 2>&1 &
PIDS+=($!)
line=$(browse "$name") || { cat "$MT_TMP/fs.log" "$MT_TMP/avahi.log"; fail "avahi-browse does not see $name"; }
echo "avahi-browse: $line"
oracle_addr=$(echo "$line" | cut -d';' -f8)
oracle_port=$(echo "$line" | cut -d';' -f9)
case $oracle_addr in fe80:*) ;; *) fail "oracle address is not link-local IPv6: $oracle_addr";; esac

found=$("${IN_TARGET[@]}" "$TEST_MDNS" discover 3000)
echo "mdns_discover: $found"
[ "$found" = "found [$oracle_addr%$VETH_T]:$oracle_port" ] ||
    fail "mdns_discover says '$found', avahi-browse says [$oracle_addr]:$oracle_port on $VETH_T"

out=$MT_TMP/out
mkdir -p "$out"
echo "path /usr/bin/prog $out/prog" |
    "${IN_TARGET[@]}" "$TEST_WIRE" client -c "${found#found }" 5000 >"$MT_TMP/client.out"
cat "$MT_TMP/client.out"
grep -q '^ok' "$MT_TMP/client.out" || fail "read over scoped IPv6"
cmp "$out/prog" "$root/usr/bin/prog" || fail "bytes differ"
echo "net_mdns6: ok"
