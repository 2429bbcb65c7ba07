#!/usr/bin/env bash
# memtrace-fs against requests the protocol forbids (issue 21): a trailing
# slash after a file's name (ENOTDIR, as the kernel's lookup says), the
# reserved header field or an unknown flag bit set (docs/protocol.md: must
# be 0), a FIFO in the sysroot when the build-id index scans it (it must not
# be opened: its blocked writer stays blocked), and a flood of refused
# requests (the log stays bounded).  Loopback only, memtrace-fs -n.
set -u
. "$(dirname "$0")/fs_common.bash"
trap 'stop_fs >/dev/null 2>&1; [ -n "${WRITER:-}" ] && kill $WRITER 2>/dev/null' EXIT
root=$MT_TMP/sysroot
make_sysroot "$root"   # has lib/fifo
start_fs "$MT_TMP/fs.log" "$MEMTRACE_FS" -n -p 0 "$root"

# A writer blocked in open() on the FIFO until some reader opens it.
python3 - "$root/lib/fifo" "$MT_TMP/fifo-opened" <<'PY' &
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)   # blocks until a reader opens
open(sys.argv[2], "w").write("opened\n")
PY
WRITER=$!

PYTHONPATH=$(dirname "$0") python3 - "$FS_PORT" <<'PY' || fail "raw frame checks"
import sys, fs_wire as w
port = int(sys.argv[1])
s = w.session(port)
def ask(what, data):
    s.sendall(data)
    r = w.recv_frame(s)
    print("%-34s -> %s" % (what, "closed" if r is None else
          "opened" if r[0] == w.OPENED else "error: %s" % w.error_text(r[2])[1]))
    return r
bad = []
# The same file without the slash is served (the check is not too wide).
if ask("/usr/bin/prog", w.open_path(b"/usr/bin/prog"))[0] != w.OPENED: bad.append("plain path")
if ask("/lib/alias-rel.so (link)", w.open_path(b"/lib/alias-rel.so"))[0] != w.OPENED: bad.append("link")
for p in (b"/usr/bin/prog/", b"/lib/alias-rel.so/", b"/usr/bin/prog//", b"/usr/bin/prog/."):
    r = ask(p.decode(), w.open_path(p))
    if r is None or r[0] != w.ERROR or "Not a directory" not in w.error_text(r[2])[1]:
        bad.append("trailing slash %s served" % p)
# Unknown flag bit: refused, and the server hangs up (the stream is suspect).
r = ask("flags 0x80", w.open_path(b"/usr/bin/prog", flags=0x80))
if r is None or r[0] != w.ERROR: bad.append("flag bit 0x80 accepted")
s = w.session(port)
r = ask("reserved 0x0001", w.open_path(b"/usr/bin/prog", reserved=1))
if r is not None and r[0] != w.ERROR: bad.append("reserved field accepted")
# An unknown build-id makes the server index the sysroot (FIFO included).
s = w.session(port)
ask("unknown build-id", w.open_build_id(bytes(range(20))))
if bad:
    sys.exit("FAIL: " + "; ".join(bad))
PY
sleep 1
if [ -e "$MT_TMP/fifo-opened" ]; then
    fail "the build-id index opened the FIFO (its writer was let through)"
fi
kill -0 "$WRITER" 2>/dev/null || fail "the FIFO's writer is gone"
echo "FIFO in the sysroot: not opened by the index, its writer still waits"
kill "$WRITER"; WRITER=

# 400 refused opens on one connection: the log keeps a bounded number.
PYTHONPATH=$(dirname "$0") python3 - "$FS_PORT" <<'PY' || fail "refusal flood"
import sys, fs_wire as w
s = w.session(int(sys.argv[1]))
for i in range(400):
    s.sendall(w.open_path(b"/../secret%d" % i))
    r = w.recv_frame(s)
    assert r and r[0] == w.ERROR, r
print("400 refusals answered")
PY
stop_fs || fail "memtrace-fs did not stop cleanly"
lines=$(grep -c "refused /../secret" "$MT_TMP/fs.log")
echo "log: $lines lines for 400 refusals; $(grep -c . "$MT_TMP/fs.log") lines in all"
grep "not logged" "$MT_TMP/fs.log"
[ "$lines" -le 25 ] || fail "$lines refusal lines for 400 refusals: the log is not bounded"
grep -q "more refusals in the last .* not logged" "$MT_TMP/fs.log" || fail "the count of unlogged refusals is missing"
echo "fs_hardening: ok"
