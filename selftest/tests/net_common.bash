# Helpers of the net_*.sh tests (sourced): two network namespaces, "host" and
# "target", joined by a veth pair with link-local addresses; a private
# dbus-daemon and avahi-daemon in the host namespace only.  Nothing is sent in
# the root namespace.  Everything is torn down on every exit path.

. "$(dirname "${BASH_SOURCE[0]}")/fs_common.bash"
TEST_MDNS=${TEST_MDNS:-$MT_ROOT/$MT_BUILD/unit/test_mdns}

tag=$$
NS_H=mt-h-$tag
NS_T=mt-t-$tag
VETH_H=mth$tag
VETH_T=mtt$tag
ADDR_H=169.254.77.1
ADDR_T=169.254.77.2
PIDS=()

# Arrays, not functions: a background function would be a subshell, and $!
# its pid instead of the program's.
IN_HOST=(ip netns exec "$NS_H" env DBUS_SYSTEM_BUS_ADDRESS="unix:path=$MT_TMP/dbus.sock")
IN_TARGET=(ip netns exec "$NS_T")

cleanup() {
    local p
    for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
    for p in "${PIDS[@]}"; do
        for _ in $(seq 1 30); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
    # Anything else still running inside our namespaces was started by us.
    local ns pid
    for ns in "$NS_H" "$NS_T"; do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
        ip netns del "$ns" 2>/dev/null
    done
}

setup_netns() {
    need_tool ip iproute2
    ip netns add "$NS_H" 2>/dev/null || skip "cannot create network namespaces (need root)"
    trap cleanup EXIT
    trap 'exit 1' INT TERM
    ip netns add "$NS_T" || fail "ip netns add"
    # Link-local IPv6 addresses usable at once (no duplicate detection wait).
    local ns
    for ns in "$NS_H" "$NS_T"; do
        ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.accept_dad=0 2>/dev/null
        ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.accept_dad=0 2>/dev/null
    done
    ip link add "$VETH_H" type veth peer name "$VETH_T" || fail "veth"
    ip link set "$VETH_H" netns "$NS_H"
    ip link set "$VETH_T" netns "$NS_T"
    # NET_IPV6_ONLY=1: link-local IPv6 only, no IPv4 address at all.
    if [ -z "${NET_IPV6_ONLY:-}" ]; then
        ip -n "$NS_H" addr add "$ADDR_H/16" dev "$VETH_H"
        ip -n "$NS_T" addr add "$ADDR_T/16" dev "$VETH_T"
    fi
    ip -n "$NS_H" link set lo up
    ip -n "$NS_T" link set lo up
    ip -n "$NS_H" link set "$VETH_H" up
    ip -n "$NS_T" link set "$VETH_T" up
    # Wait for the carrier on both ends (and usable IPv6 link-local addresses).
    for _ in $(seq 1 50); do
        if ip -n "$NS_H" link show dev "$VETH_H" | grep -q LOWER_UP &&
           ip -n "$NS_T" link show dev "$VETH_T" | grep -q LOWER_UP &&
           { [ -z "${NET_IPV6_ONLY:-}" ] ||
             { ip -n "$NS_H" -6 addr show dev "$VETH_H" | grep "fe80" | grep -vq tentative &&
               ip -n "$NS_T" -6 addr show dev "$VETH_T" | grep "fe80" | grep -vq tentative; }; }; then
            return 0
        fi
        sleep 0.1
    done
    fail "veth link does not come up"
}

start_dbus() {
    cat >"$MT_TMP/dbus.conf" <<XML
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$MT_TMP/dbus.sock</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
XML
    "${IN_HOST[@]}" dbus-daemon --config-file="$MT_TMP/dbus.conf" --nofork --nopidfile \
        >"$MT_TMP/dbus.log" 2>&1 &
    PIDS+=($!)
    for _ in $(seq 1 50); do [ -S "$MT_TMP/dbus.sock" ] && return 0; sleep 0.1; done
    cat "$MT_TMP/dbus.log"; fail "dbus-daemon did not start"
}

# avahi-daemon keeps its pid file in /run/avahi-daemon: give it a private one
# (own mount namespace) so it never meets another avahi-daemon's.
start_avahi() {
    cat >"$MT_TMP/avahi.conf" <<CONF
[server]
host-name=mtfs-$tag
use-ipv4=$([ -n "${NET_IPV6_ONLY:-}" ] && echo no || echo yes)
use-ipv6=$([ -n "${NET_IPV6_ONLY:-}" ] && echo yes || echo no)
allow-interfaces=$VETH_H
enable-dbus=yes
ratelimit-interval-usec=1000000
ratelimit-burst=1000
[wide-area]
enable-wide-area=no
[publish]
publish-hinfo=no
publish-workstation=no
publish-domain=no
publish-addresses=yes
[reflector]
enable-reflector=no
[rlimits]
CONF
    mkdir -p /run/avahi-daemon
    "${IN_HOST[@]}" unshare -m --propagation private sh -c \
        'mount -t tmpfs tmpfs /run/avahi-daemon && exec avahi-daemon --no-chroot --no-drop-root --no-rlimits -f "$1"' \
        sh "$MT_TMP/avahi.conf" >>"$MT_TMP/avahi.log" 2>&1 &
    AVAHI_PID=$!
    PIDS+=($AVAHI_PID)
    for _ in $(seq 1 100); do
        grep -q "Server startup complete" "$MT_TMP/avahi.log" && return 0
        kill -0 "$AVAHI_PID" 2>/dev/null || break
        sleep 0.1
    done
    cat "$MT_TMP/avahi.log"; fail "avahi-daemon did not start"
}

stop_avahi() {
    kill -TERM "$AVAHI_PID" 2>/dev/null
    wait "$AVAHI_PID" 2>/dev/null
}

# browse NAME: waits until avahi-browse (the oracle) resolves our service
# instance NAME; prints its "=;..." line.
browse() {
    local name=$1 out
    for _ in $(seq 1 40); do
        out=$("${IN_HOST[@]}" timeout 10 avahi-browse -rpt _memtrace-fs._tcp 2>/dev/null |
              awk -F';' -v n="$name" '$1 == "=" && $4 == n')
        [ -n "$out" ] && { echo "$out" | head -n 1; return 0; }
        sleep 0.5
    done
    return 1
}
