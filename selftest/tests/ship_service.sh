#!/usr/bin/env bash
# memtrace-fs as a systemd service (dist/systemd, dist/default), without
# starting any service on this machine:
# - `make install-service` output passes `systemd-analyze verify` silently
#   and `systemd-analyze security --offline` rates it OK or better;
# - memtrace-fs runs with the unit's ExecStart, expanded from the shipped
#   settings file as systemd does, as a fresh unprivileged uid (what
#   DynamicUser= gives it), no capabilities, no_new_privs, over a read-only
#   sysroot; memtrace -c fetches a debug file through it (oracle: binutils
#   addr2line on the unstripped program); SIGTERM ends it with status 0;
# - every system call it made (strace) is allowed by the unit's
#   SystemCallFilter (systemd-analyze syscall-filter's own lists);
# - with the settings as shipped (no sysroot) it exits 2, the status the
#   unit does not restart on;
# - the avahi service file is valid for avahi's DTD and announces the type
#   and port memtrace-fs publishes.
# Network: loopback only, and -n: nothing published in the root namespace.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
command -v systemd-analyze >/dev/null || skip "systemd-analyze missing (package systemd)"
[ "$(id -u)" = 0 ] || skip "needs root (setpriv, a private mount namespace)"
for t in setpriv unshare strace xmllint; do command -v $t >/dev/null || skip "$t missing"; done
cd "$MT_TMP" || exit 1

# Outside $MT_TMP (mode 700): the unprivileged uid must reach the binary,
# the sysroot and strace's log.
shared=$(mktemp -d /tmp/mt-ship-service.$$.XXXXXX)
chmod 755 "$shared"
FS_PID=
cleanup() {
    [ -n "$FS_PID" ] && kill -KILL "$FS_PID" 2>/dev/null
    rm -rf "$shared"
}
trap cleanup EXIT
inst=$shared/inst
# install-service builds nothing; the program and its page are copied as
# install-memtrace-fs would (that target would build for this ARCH).
make -s -C "$MT_ROOT" install-service PREFIX="$inst/usr" SYSCONFDIR="$inst/etc" >make.log 2>&1 ||
    { cat make.log; fail "make install-service"; }
install -D -m 755 "$MT_ROOT/$MT_RELEASE_BUILD/memtrace-fs" "$inst/usr/bin/memtrace-fs"
install -D -m 644 "$MT_ROOT/dist/man/memtrace-fs.1" "$inst/usr/share/man/man1/memtrace-fs.1"
unit=$inst/usr/lib/systemd/system/memtrace-fs.service
settings=$inst/etc/default/memtrace-fs
[ -f "$unit" ] && [ -f "$settings" ] || fail "install-service made no unit or settings file"

out=$(MANPATH=$inst/usr/share/man systemd-analyze verify "$unit" 2>&1); rc=$?
[ $rc = 0 ] && [ -z "$out" ] || fail "systemd-analyze verify (exit $rc): $out"
echo "systemd-analyze verify: clean"
rating=$(systemd-analyze security --offline=yes "$unit" 2>&1 | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]* [A-Z]*\).*/\1/p')
case ${rating#* } in PERFECT|SAFE|OK) echo "systemd-analyze security: $rating" ;;
    *) fail "systemd-analyze security rates the unit '$rating' (wanted OK or better)" ;; esac

# --- a sysroot the unprivileged uid can read: the debug file of a program
# whose stripped copy stays local, found by build-id through memtrace-fs.
sysroot=$shared/sysroot
tracedir=$shared/strace
mkdir -p "$sysroot" "$tracedir"
printf 'int helper(int x) { return x * 3; }\nint main(void) { return helper(2); }\n' >prog.c
gcc -g -O0 -Wl,--build-id -o prog.full prog.c || fail gcc
id=$(readelf -n prog.full | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
[ -n "$id" ] || fail "no build-id"
mkdir -p "$sysroot/usr/lib/debug/.build-id/${id:0:2}"
objcopy --only-keep-debug prog.full "$sysroot/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
chmod -R a+rX "$sysroot"
strip -o prog prog.full
addr=$(nm prog.full | awk '$3 == "helper" {print "0x" $1}')
expected=$(addr2line -f -e prog.full "$addr")

# The unit's ExecStart with $VAR expanded from the settings file and split
# on white space, as systemd does for an unbraced $VAR.
exec_start() {
    local line word name
    local -a cmd=()
    line=$(sed -n 's/^ExecStart=//p' "$unit")
    for word in $line; do
        if [[ $word =~ ^\$([A-Za-z_][A-Za-z0-9_]*)$ ]]; then
            name=${BASH_REMATCH[1]}
            # shellcheck disable=SC2206
            cmd+=(${!name})
        else
            cmd+=("$word")
        fi
    done
    printf '%s\n' "${cmd[@]}"
}
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# The shipped settings, with the sysroot named; -n and a free port added.
sed -e "s|^MEMTRACE_FS_SYSROOTS=.*|MEMTRACE_FS_SYSROOTS=\"$sysroot\"|" \
    -e "s|^MEMTRACE_FS_OPTIONS=\"\(.*\)\"|MEMTRACE_FS_OPTIONS=\"\1 -n -p $port\"|" "$settings" >settings.test
grep -q " -n -p $port\"" settings.test || fail "no MEMTRACE_FS_OPTIONS line in $settings"
mapfile -t cmd < <(set -a; . ./settings.test; exec_start)
echo "ExecStart: ${cmd[*]}"

# A uid in DynamicUser's range that no account and no process uses.
uid=$((61184 + $$ % 4000))
while getent passwd $uid >/dev/null || pgrep -U $uid >/dev/null; do uid=$((uid + 1)); done
chown $uid:$uid "$tracedir"
# shellcheck disable=SC2016
unshare -m bash -c 'mount --make-rprivate / && mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" &&
    shift && exec "$@"' bash "$sysroot" \
    setpriv --reuid=$uid --regid=$uid --clear-groups --no-new-privs --inh-caps=-all --bounding-set=-all -- \
    strace -f -qq -o "$tracedir/strace.log" "${cmd[@]}" >fs.log 2>&1 &
FS_PID=$!
for _ in $(seq 1 100); do
    (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break
    kill -0 $FS_PID 2>/dev/null || { cat fs.log; fail "memtrace-fs ended"; }
    sleep 0.1
done
fs=$(pgrep -P $FS_PID -x memtrace-fs | head -n 1)
[ -n "$fs" ] || fail "no memtrace-fs under strace"
grep -q "^Uid:[[:space:]]*$uid[[:space:]]" /proc/$fs/status || fail "memtrace-fs runs as $(grep Uid: /proc/$fs/status)"
grep -q '^NoNewPrivs:[[:space:]]*1' /proc/$fs/status || fail "no_new_privs is not set"
grep -q '^CapEff:[[:space:]]*0*$' /proc/$fs/status || fail "memtrace-fs has capabilities"
got=$("$MEMTRACE" -q -c 127.0.0.1:$port --addr2line prog "$addr" 2>&1)
[ "$got" = "$expected" ] || fail "through memtrace-fs: '$got', addr2line: '$expected'"
local_only=$("$MEMTRACE" -q --addr2line prog "$addr" 2>&1)
[ "$local_only" != "$expected" ] || fail "the local stripped copy already names $addr: the check proves nothing"
echo "uid $uid, read-only sysroot: memtrace -c resolves $addr as addr2line does: $(head -n 1 <<<"$got")"
kill -TERM "$fs"            # strace exits with its status
rc=0; wait $FS_PID || rc=$?
FS_PID=
[ $rc = 0 ] || { cat fs.log; fail "memtrace-fs exited $rc on SIGTERM"; }

# Every system call made against the unit's SystemCallFilter lines.
used=$(sed -nE 's/^[0-9]+ +([a-z0-9_]+)\(.*/\1/p' "$tracedir/strace.log" | sort -u)
[ -n "$used" ] || fail "strace recorded no system call"
python3 - "$unit" $used <<'PY' || fail "SystemCallFilter would kill memtrace-fs"
import re, subprocess, sys
unit, used = sys.argv[1], sys.argv[2:]
groups, name = {}, None
for line in subprocess.run(['systemd-analyze', 'syscall-filter'], capture_output=True,
                           text=True, check=True).stdout.splitlines():
    s = line.strip()
    if line.startswith('@'):
        name = s; groups[name] = []
    elif name and s and not s.startswith('#'):
        groups[name].append(s)
def expand(item, seen=()):
    if not item.startswith('@'):
        return {item}
    return set().union(*(expand(m, seen + (item,)) for m in groups.get(item, []) if m not in seen))
allowed = None
for line in open(unit):
    m = re.match(r'SystemCallFilter=(~?)(.*)', line.strip())
    if not m:
        continue
    items = set().union(*(expand(i) for i in m.group(2).split()))
    if m.group(1):
        allowed = (allowed if allowed is not None else set()) - items
    else:
        allowed = items if allowed is None else allowed | items
bad = sorted(set(used) - allowed) if allowed is not None else []
for s in bad:
    print(f'memtrace-fs calls {s}, which the unit\'s SystemCallFilter forbids')
print(f'{len(used)} system calls used, all allowed' if not bad else '', end='')
sys.exit(1 if bad else 0)
PY
echo

# As shipped, no sysroot: exit 2, which RestartPreventExitStatus names.
mapfile -t cmd < <(set -a; . "$settings"; exec_start)
rc=0; timeout 10 "${cmd[@]}" -n >shipped.log 2>&1 || rc=$?
[ $rc = 2 ] || fail "with the shipped settings memtrace-fs exited $rc, not 2: $(cat shipped.log)"
grep -qx 'RestartPreventExitStatus=2' "$unit" || fail "the unit restarts on status 2"

# The avahi service file.
avahi=$inst/usr/share/doc/memtrace-fs/examples/memtrace-fs.service
dtd=/usr/share/avahi/avahi-service.dtd         # package avahi-daemon
if [ -r $dtd ]; then
    xmllint --noout --path "${dtd%/*}" --valid "$avahi" || fail "$avahi is not valid for $dtd"
else
    xmllint --noout "$avahi" || fail "$avahi is not well-formed"
fi
type=$(sed -n 's/.*define MTFS_SERVICE_TYPE "\(.*\)".*/\1/p' "$MT_ROOT/host-fs/publish.h")
dport=$(sed -n 's/.*define WIRE_DEFAULT_PORT \([0-9]*\).*/\1/p' "$MT_ROOT/shared/wire.h")
[ "$(xmllint --xpath 'string(//service/type)' "$avahi")" = "$type" ] || fail "avahi file: type is not $type"
[ "$(xmllint --xpath 'string(//service/port)' "$avahi")" = "$dport" ] || fail "avahi file: port is not $dport"
echo "avahi service file: valid, $type port $dport"
