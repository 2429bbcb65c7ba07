#!/usr/bin/env bash
# The HTML page draws the recorded RSS above the heap, on the chart of
# memory over time.  The recording is rss_common.bash's (rss_steps at three
# steps, each step's RSS record checked there against the kernel's VmRSS
# and smaps_rollup that the program read itself); memtrace --replay
# --format html draws it, and Debian's Chromium, headless, in a network
# namespace of its own, runs the page (chromium_pages.py).  In the DOM
# after the page's script ran:
#   - the RSS line (#mt-chart-rss) has exactly the recording's RSS records,
#     as record_samples.py (a reader apart from memtrace's) reads them:
#     their values and times, and each vertex is drawn where the chart's
#     axes (data-ymax, data-tmax, data-plot) put that value and time;
#   - the three samples checked against the kernel are among them;
#   - at each RSS record the RSS is above the heap line's bytes then;
#   - the script threw nothing and the CSP refused nothing.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
. "$MT_ROOT/selftest/tests/rss_common.bash"
need_tool chromium chromium
need_tool unshare util-linux
[ "$(id -u)" = 0 ] || skip "needs root: Chromium runs in a network namespace of its own"
cd "$MT_TMP"
declare -a heap at
rss_steps_record

"$MEMTRACE" --replay rec.mt --format html -o page.html || fail "replay --format html failed"
python3 "$MT_ROOT/selftest/tests/record_samples.py" rec.mt > samples.json || fail "record_samples.py failed"
unshare -n timeout 120 python3 "$MT_ROOT/selftest/tests/chromium_pages.py" "$(mktemp -d "$MT_TMP/chromium.XXXXXX")" \
    "watch:file://$MT_TMP/page.html:page.watch" ||
    fail "chromium failed: $(tail -3 chromium.*/chromium.log)"
python3 - page.watch samples.json sample.1 sample.2 sample.3 <<'PY' || fail "the page's RSS line differs from the recording"
import html.parser, json, sys
w = json.load(open(sys.argv[1]))
assert not w['exceptions'], ('exceptions', w['exceptions'])
csp = [e for e in w['log'] if 'Content Security Policy' in e['text']]
assert not csp, ('CSP refusals', csp)
assert w['drawn'] == 'yes', 'the page script did not run'

class Chart(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.svg = self.rss = self.heap = None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get('id') == 'mt-chart':
            self.svg = a
        elif a.get('id') == 'mt-chart-rss':
            self.rss = a
        elif a.get('id') == 'mt-chart-line':
            self.heap = a
c = Chart()
c.feed(w['dom'])
assert c.svg and c.heap, 'no chart'
assert c.rss, 'no RSS line on the chart'
samples = json.load(open(sys.argv[2]))
want = [(s['us'] / 1e6, s['rss'][0], s['in_use_bytes']) for s in samples if s['rss']]
values = [int(v) for v in c.rss['data-values'].split(',')]
seconds = [float(t) for t in c.rss['data-seconds'].split(',')]
assert values == [v for _, v, _ in want], ('values', values, want)
assert all(abs(a - b) < 1e-6 for a, b in zip(seconds, [t for t, _, _ in want])), ('times', seconds)
# Each vertex where the axes put it (the page rounds to 0.01 px).
L, T, pw, ph = map(float, c.svg['data-plot'].split())
ymax, tmax = float(c.svg['data-ymax']), float(c.svg['data-tmax'])
pts = [tuple(map(float, p.split(','))) for p in c.rss['points'].split()]
assert len(pts) == len(want), (len(pts), len(want))
for (x, y), (t, v, _) in zip(pts, want):
    assert abs(x - (L + t / tmax * pw)) <= 0.006 and abs(y - (T + ph - v / ymax * ph)) <= 0.006, ((x, y), (t, v))
# The samples checked against the kernel are on the line.
for path in sys.argv[3:6]:
    s = json.load(open(path))
    assert any(abs(t - s['us'] / 1e6) < 1e-6 and v == s['rss'][0] for t, v, _ in want), ('kernel-checked', s)
# Above the heap: the RSS holds the heap's live blocks and more.
assert all(v > heap for _, v, heap in want[1:]), [(v, heap) for _, v, heap in want]
print('RSS line: %d points, the recording\'s, up to %d bytes; heap line %s points; no exception, no CSP refusal'
      % (len(values), max(values), c.heap['data-points']))
PY
echo "PASS"
