#!/usr/bin/env bash
# Functions named after JavaScript's built-in properties (toString,
# constructor, __proto__, hasOwnProperty, valueOf, isPrototypeOf:
# selftest/programs/names_js.c) in the HTML page: Debian's Chromium
# (headless, in a network namespace of its own, chromium_pages.py) draws
# its chart and flame graph with no uncaught exception and no console
# message, and the flame graph holds each of those frames with the bytes the
# folded report gives the stacks through it (the oracle: memtrace's folded
# stacks, summed per frame name and depth by python3).
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
need_tool chromium chromium
need_tool unshare util-linux
[ "$(id -u)" = 0 ] || skip "needs root: Chromium runs in a network namespace of its own"
prog="$MT_PROGS/names_js"
[ -x "$prog" ] || fail "$prog is not built"
cd "$MT_TMP" || fail "no scratch directory"

"$MEMTRACE" -q --format html -o page.html "$prog" >/dev/null || fail "memtrace --format html failed"
"$MEMTRACE" -q --format folded -o report.folded "$prog" >/dev/null || fail "memtrace --format folded failed"
unshare -n timeout 120 python3 "$MT_ROOT/selftest/tests/chromium_pages.py" "$(mktemp -d "$MT_TMP/chromium.XXXXXX")" \
    "watch:file://$MT_TMP/page.html:page.watch" "watch:file://$MT_TMP/page.html#flame=allocs:allocs.watch" ||
    fail "chromium failed: $(tail -3 chromium.*/chromium.log)"
python3 - page.watch allocs.watch report.folded <<'PY' || fail "the page with JavaScript built-ins' names is wrong"
import collections, json, re, sys
names = ('toString', 'constructor', '__proto__', 'hasOwnProperty', 'valueOf', 'isPrototypeOf')
# The folded report: bytes in use per (depth, frame name), root first.
want = collections.Counter()
for line in open(sys.argv[3]):
    stack, _, n = line.rstrip('\n').rpartition(' ')
    for depth, f in enumerate(stack.split(';'), 1):
        if f in names:
            want[depth, f] += int(n)
assert {f for _, f in want} == set(names), ('folded report', want)
for watch in sys.argv[1:3]:
    w = json.load(open(watch))
    assert not w['exceptions'], (watch, 'exceptions', w['exceptions'])
    assert not w['console'], (watch, 'console', w['console'])
    assert w['drawn'] == 'yes', (watch, 'not drawn')
    dom = w['dom']
    assert re.search(r'<polyline id="mt-chart-line" points="[^"]+"', dom), (watch, 'no chart')
    got = collections.Counter()
    for name, depth, value in re.findall(r'<g class="fr[^"]*" data-name="([^"]*)" data-depth="(\d+)" data-value="(\d+)"', dom):
        if name in names:
            got[int(depth), name] += int(value)
    if 'allocs' not in watch:
        assert got == want, (watch, 'flame graph', got, 'folded', want)
    else:
        assert {f for _, f in got} == set(names), (watch, 'flame graph', got)
print('flame graph: %s drawn with the folded report\'s bytes; chart drawn; '
      'no exception, no console message' % ', '.join(names))
PY
exit 0
