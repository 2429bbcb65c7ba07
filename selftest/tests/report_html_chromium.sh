#!/usr/bin/env bash
# --format html in a real browser: Debian's Chromium, headless, in a network
# namespace of its own (no network at all), one browser for every page
# (chromium_pages.py, the DevTools protocol on a pipe), renders the page
# memtrace wrote for a deterministic C++ program
# (selftest/programs/html_curve.cpp), and the DOM after its script ran is
# checked (report_html_check.py) against the JSON report and the folded
# stacks of the same program:
#   - the chart's peak dot and label are the JSON "peak" (bytes, seconds),
#     the curve's highest point, and the curve ends at the bytes in use;
#   - the flame graph of bytes in use has exactly the folded report's
#     frames, each as wide as its share (root: the bytes in use); the
#     address #flame=allocs|peak switches the measure (root: the JSON's
#     allocs, peak; at the peak every frame equals the JSON peak stacks);
#   - cards, peak, top stacks and the leak summary (-a) show the JSON's
#     figures; C++ names (< > &) are escaped in the file, whole in the DOM;
#   - the page loads nothing: no URL or src= in the file, and Chromium saw
#     no request from it but its own load, not even one its CSP blocked (a
#     control page with an <img> proves such a request would be seen);
#   - the npm package flamegraph, given the same folded stacks, draws the
#     same frames at the same places and widths (its 0.1 px rounding);
#   - the console's `report -f html > FILE` of a live program renders too.
# A screenshot is taken; MT_UPDATE_SCREENSHOT=1 writes it to
# docs/report-html.png (the README's picture).
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
need_tool chromium chromium
need_tool unshare util-linux
[ "$(id -u)" = 0 ] || skip "needs root: Chromium runs in a network namespace of its own"
prog="$MT_PROGS/html_curve"
[ -x "$prog" ] || fail "$prog is not built"
cd "$MT_TMP" || fail "no scratch directory"
start=$(date +%s%N)

"$MEMTRACE" -q -a --record-interval 20 --format html -o page.html "$prog" >/dev/null || fail "memtrace --format html failed"
"$MEMTRACE" -q -a -j -o report.json "$prog" >/dev/null || fail "memtrace -j failed"
"$MEMTRACE" -q --format folded -o report.folded "$prog" >/dev/null || fail "memtrace --format folded failed"

# The console: report -f html > FILE of a live program (phases, stopped
# after phase 1), drawn with the figures `status` gives, and with the leak
# summary of the `scan` before it.
phases_console console.out -q
console_cmd status
read -r _ _ _ in_use _ <<<"$(summary_figures <<<"$CONSOLE_REPLY")"
console_cmd scan
lost=$(sed -n 's/^ *\(definitely lost\|still reachable\): \([0-9]*\) bytes in [0-9]* blocks$/\2/p' <<<"$CONSOLE_REPLY" | paste -sd,)
[[ $lost == *,* ]] || fail "scan printed no LEAK SUMMARY: $CONSOLE_REPLY"
console_cmd "report -f html > $MT_TMP/console.html"
[ "$CONSOLE_REPLY" = "report written to $MT_TMP/console.html" ] || fail "report -f html answered: $CONSOLE_REPLY"
touch ctl/go1 ctl/go2 ctl/go3
printf 'quit\n' >&3
wait "$CONSOLE_PID" || fail "memtrace exit $? after quit: $(cat console.out.err)"

# One browser, no network, a private profile, none of its own background
# requests; a tab per page (the address's #flame= picks the measure).
url="file://$MT_TMP/page.html"
printf '<!DOCTYPE html><img src="http://192.0.2.1/x.png">' >control.html
unshare -n timeout 120 python3 "$MT_ROOT/selftest/tests/chromium_pages.py" "$(mktemp -d "$MT_TMP/chromium.XXXXXX")" \
    "dom:$url:dom-inuse.html" "dom:$url#flame=allocs:dom-allocs.html" "dom:$url#flame=peak:dom-peak.html" \
    "requests:$url:requests-page" "requests:file://$MT_TMP/control.html:requests-control" \
    "dom:file://$MT_TMP/console.html:dom-console.html" "find:$url:pool:dom-find.html" \
    "shot:$url:report-html.png:1280x1180" ||
    fail "chromium failed: $(tail -3 chromium.*/chromium.log)"
python3 "$MT_ROOT/selftest/tests/report_html_check.py" page page.html report.json report.folded \
    dom-inuse.html dom-allocs.html dom-peak.html || fail "the page as drawn differs"

# The highlight box: "pool" marks the Pool<...>::grab() frames, and their
# share is the folded stacks' that hold such a frame.
python3 - dom-find.html report.folded <<'PY' || fail "the flame graph's highlight is wrong"
import re, sys
dom = open(sys.argv[1]).read()
want = sum(int(l.rsplit(' ', 1)[1]) for l in open(sys.argv[2]) if 'pool' in l.rsplit(' ', 1)[0].lower())
got = re.search(r'id="mt-flame-found"[^>]*>highlighted: ([\d,]+) bytes', dom)
hits = re.findall(r'<g class="fr hit" data-name="([^"]*)"', dom)
assert want and got and int(got.group(1).replace(',', '')) == want, ('highlighted', got and got.group(1), want)
assert hits and all('pool' in h.lower() for h in hits), hits
print('highlight "pool": %d bytes in %d frames, as the folded stacks holding such a frame' % (want, len(hits)))
PY

# What the page asked for: only itself.  The control page's <img> is seen.
grep -qx 'http://192.0.2.1/x.png' requests-control || fail "a page's request is not seen (control): $(cat requests-control)"
got=$(grep -vxF "$url" requests-page)
[ -z "$got" ] || fail "the page asked for: $got"
echo "requests: none from the page but its own load (the control page's <img> is seen)"

# The npm package flamegraph on the same folded stacks (it reads a
# cpuprofile: the folded lines as a call tree with their counts).
oracle=yes
if command -v flamegraph >/dev/null && flamegraph --help 2>&1 | grep -q inputtype; then
    python3 - report.folded >report.cpuprofile <<'PY'
import json, sys
head = {'functionName': '', 'url': '', 'lineNumber': 0, 'hitCount': 0, 'children': []}
for line in open(sys.argv[1]):
    stack, _, n = line.rstrip('\n').rpartition(' ')
    node = head
    for f in stack.split(';'):
        kid = next((c for c in node['children'] if c['functionName'] == f), None)
        if kid is None:
            kid = {'functionName': f, 'url': '', 'lineNumber': 0, 'hitCount': 0, 'children': []}
            node['children'].append(kid)
        node = kid
    node['hitCount'] += int(n)
json.dump({'head': head, 'startTime': 0, 'endTime': 1, 'samples': [], 'timestamps': []}, sys.stdout)
PY
    flamegraph --minwidth 0 --countname bytes <report.cpuprofile >oracle.svg 2>flamegraph.err ||
        fail "flamegraph failed: $(cat flamegraph.err)"
    python3 "$MT_ROOT/selftest/tests/report_html_check.py" oracle dom-inuse.html report.folded oracle.svg ||
        fail "the flame graph differs from flamegraph's"
else
    oracle=
fi

python3 - dom-console.html "$in_use" "$lost" <<'PY' || fail "the console's page is wrong"
import re, sys
dom, in_use = open(sys.argv[1]).read(), int(sys.argv[2])
lost = [int(x) for x in sys.argv[3].split(',')]
page = [int(re.search(r'<th>%s</th><td class="num" data-bytes="(\d+)"' % k, dom).group(1))
        for k in ('definitely lost', 'still reachable')]
assert page == lost, ('leak summary: definitely lost, still reachable', page, lost)
assert 'data-drawn="yes"' in dom, 'not drawn'
root = re.search(r'<g class="fr" data-name="all" data-depth="0" data-value="(\d+)" id="mt-flame-root"', dom)
last = re.search(r'<circle id="mt-chart-last"[^>]* data-bytes="(\d+)"', dom)
assert root and int(root.group(1)) == in_use, ('flame graph root', root and root.group(1), in_use)
assert last and int(last.group(1)) == in_use, ('chart end', last and last.group(1), in_use)
print('console page: flame graph and chart end at %d bytes in use, as status says; '
      'definitely lost %d and still reachable %d bytes, as scan says' % (in_use, lost[0], lost[1]))
PY

python3 - report-html.png <<'PY' || fail "the screenshot is not a 1280x1180 PNG"
import struct, sys
b = open(sys.argv[1], 'rb').read()
assert b[:8] == b'\x89PNG\r\n\x1a\n' and struct.unpack('>II', b[16:24]) == (1280, 1180), b[:24]
PY
end=$(date +%s%N)
echo "screenshot: $(stat -c %s report-html.png) bytes; the test took $(((end - start) / 1000000)) ms"
if [ "${MT_UPDATE_SCREENSHOT:-0}" = 1 ]; then
    cp report-html.png "$MT_ROOT/docs/report-html.png" || fail "cannot write docs/report-html.png"
    echo "wrote docs/report-html.png"
fi
[ -n "$oracle" ] || skip "missing tool: flamegraph (npm package flamegraph, installed by tools/install-deps.sh)"
exit 0
