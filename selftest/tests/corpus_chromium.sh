#!/usr/bin/env bash
# Debian's Chromium under `memtrace -f` (issue 27): `chromium --headless
# --dump-dom` of a page whose script rebuilds it, in a network namespace of
# its own (no network at all), a fresh profile for each run.  The oracles:
#   - the untraced run: the DOM printed and the exit status must be the
#     same under memtrace, so every process the browser starts (the
#     renderer that ran the script among them) ran as it would untraced;
#   - Chromium's allocator shim folds free, operator delete and delete[]
#     (and their nothrow and sized forms) onto one address: no process may
#     report a misuse error (valgrind cannot run Chromium in reasonable
#     time; the shim is the one Chromium ships, not a bug of its own);
#   - the kernel's process tree: the report must hold the browser and a
#     process the zygote forked (a renderer), each with its allocations.
# Under the breakpoint engine the browser starts so slowly (about 1.2
# million stops, 60 s) that Chromium's own 15 s timeout ends a child the
# browser has not connected to yet ("Terminating current process after 15
# seconds with no connection") and the browser starts another (stderr:
# "Network service crashed or was terminated, restarting service"): its
# recovery, which gives the same DOM; valgrind is slower still.
set -u
. "$MT_ROOT/selftest/tests/corpus_common.bash"
need_tool unshare util-linux
[ "$(id -u)" = 0 ] || skip "needs root: Chromium runs in a network namespace of its own"
corpus_need chromium chromium

# The page: its script builds a table, sorts it, and replaces the body, so
# that the DOM dumped is the script's work, not the file's.
cat >page.html <<'HTML'
<!DOCTYPE html>
<html><head><title>memtrace corpus</title></head>
<body><p id="before">not yet</p>
<script>
const rows = [];
for (let i = 0; i < 2000; i++) rows.push({ n: i, key: ((i * 7919) % 2003).toString(36), text: 'row ' + i });
rows.sort((a, b) => a.key < b.key ? -1 : a.key > b.key ? 1 : a.n - b.n);
const t = document.createElement('table');
for (const r of rows.slice(0, 300)) {
  const tr = t.insertRow();
  tr.insertCell().textContent = r.key;
  tr.insertCell().textContent = JSON.stringify(r);
}
document.body.replaceChildren(t);
document.title = 'rows ' + t.rows.length;
</script></body></html>
HTML

# The same command for both runs: nothing of the caller's environment, a
# fresh profile each (a profile left by the first run would change what the
# second allocates).
browse() { # PROFILE PREFIX...: the browser under PREFIX, in a namespace without network
    local profile=$MT_TMP/$1
    shift
    mkdir -p "$profile"
    timeout 600 unshare -n env -i PATH=/usr/bin:/bin HOME="$profile" LANG=C "$@" \
        chromium --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$profile/data" \
        --dump-dom "file://$PWD/page.html"
}

browse native >native.dom 2>native.err
want=$?
[ $want = 0 ] || fail "chromium untraced ended with status $want: $(tail -n 2 native.err)"
grep -q '<title>rows 300</title>' native.dom || fail "the untraced DOM is not the script's: $(head -c 200 native.dom)"

# corpus_chromium_case ENGINE: the verdict line of one traced run.
corpus_chromium_case() {
    local e=$1 st report=$PWD/$1.json procs
    browse "$e.profile" "$MEMTRACE" -q -f --engine="$e" -j -o "$report" >"$e.dom" 2>"$e.err"
    st=$?
    if [ $st != "$want" ]; then
        corpus_verdict "chromium.$e" "FAIL: ended with status $st, not $want: $(grep -v dbus "$e.err" | tail -n 2)"
    elif ! cmp -s native.dom "$e.dom"; then
        corpus_verdict "chromium.$e" "FAIL: the DOM differs from the untraced run's: $(diff native.dom "$e.dom" | head -n 3)"
    elif ! procs=$(chromium_processes "$report" 2>&1); then
        corpus_verdict "chromium.$e" "FAIL: the report does not hold Chromium's processes: $procs"
    elif ! corpus_no_errors "$report" 2>"$e.errors"; then
        corpus_verdict "chromium.$e" "FAIL: misuse errors: $(head -n 3 "$e.errors")" "$procs"
    else
        corpus_verdict "chromium.$e" "ok: the untraced run's DOM and status, no misuse error in any process" "$procs"
    fi
}

# chromium_processes JSON: the processes followed, or (status 1) why the
# report lacks the browser or a process the zygote forked.
chromium_processes() {
    python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
procs = [d] + (d.get('children') or [])
def allocs(p):
    return p['heap']['allocs']
def prog(p):
    return (p.get('program') or '').rsplit('/', 1)[-1]
browser = d
assert prog(browser) == 'chromium' and allocs(browser) > 10000, \
    'the first process is %s with %d allocations, not the browser' % (prog(browser), allocs(browser))
chrome = {p.get('pid') for p in procs if prog(p) == 'chromium'}
# A process forked by a chromium process that is not the browser: the
# zygote's children (renderers).
forked = [p for p in procs if prog(p) == 'chromium' and p.get('ppid') in chrome
          and p.get('ppid') != browser.get('pid') and allocs(p) > 1000]
assert forked, 'no process forked by the zygote with allocations: %s' % \
    [(p.get('pid'), p.get('ppid'), prog(p), allocs(p)) for p in procs]
print('%d processes (%d chromium), the browser %d allocs, %d zygote children %s allocs' % (
    len(procs), len(chrome), allocs(browser), len(forked), '+'.join(str(allocs(p)) for p in forked)))
PY
}

for e in "${CORPUS_ENGINES[@]}"; do
    corpus_chromium_case "$e"
done
corpus_end
