#!/usr/bin/env bash
# A recording is made to be passed around: one crafted by someone else
# (selftest/tests/craft_recording.py: an engine name in the 'H' and 'E'
# records, a program path, function, file and module names holding
# <img src=x onerror=...>, </script><script>..., quotes, backslashes,
# terminal escapes, BEL, CR, LF, DEL, a C1 CSI, U+2028 and a byte that is not
# UTF-8) is replayed in every format, and
#   - the HTML page, opened by Debian's Chromium (headless, in a network
#     namespace of its own, chromium_pages.py), runs no script of the
#     payload: the title stays memtrace's, no console message, no uncaught
#     exception, no <img>/<svg> element of the payload in the DOM, no CSP
#     refusal (the page's own script and style are the only ones, and they
#     run: the chart and the flame graph are drawn); the payload shows as
#     text in the header;
#   - the JSON reports (--replay, --at, --diff) are valid for python3's json
#     and give back the program, engine, function and file names exactly;
#   - text, --diff (text and folded), folded, massif, heaptrack (gunzipped)
#     and pprof (gunzipped) hold no control character but tab and LF and
#     are valid UTF-8 with no C1 control (grep -P and python3 as the
#     oracles; cat -v of the text in the log).
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
cd "$MT_TMP" || fail "no scratch directory"

# Raw control characters (no tab or LF), or C1 ones, or bad UTF-8 in a file.
no_controls() {
    if LC_ALL=C grep -naP '[\x00-\x08\x0b-\x1f\x7f]' "$1" >ctl.hits; then
        cat -v ctl.hits | head -5 >&2
        fail "$2 holds raw control characters (cat -v above)"
    fi
    python3 - "$1" "$2" <<'PY' || fail "$2 is not clean UTF-8 text"
import sys
t = open(sys.argv[1], 'rb').read().decode('utf-8')  # raises on bad UTF-8
bad = [hex(ord(c)) for c in t if 0x80 <= ord(c) < 0xa0]
assert not bad, '%s: C1 controls %s' % (sys.argv[2], bad)
PY
}

for mode in h e; do
    python3 "$MT_ROOT/selftest/tests/craft_recording.py" $mode.mt $mode.strings.json $mode ||
        fail "craft_recording.py failed"
    "$MEMTRACE" --replay $mode.mt --format html -o $mode.html || fail "--replay --format html failed"
    "$MEMTRACE" --replay $mode.mt -j -o $mode.json || fail "--replay -j failed"
    "$MEMTRACE" --replay $mode.mt --at 0.001 -j -o $mode.at.json || fail "--replay --at -j failed"
    "$MEMTRACE" --replay $mode.mt --diff 0 0.002 -j -o $mode.diff.json || fail "--replay --diff -j failed"
    "$MEMTRACE" --replay $mode.mt >$mode.txt || fail "--replay (text) failed"
    "$MEMTRACE" --replay $mode.mt --diff 0 0.002 >$mode.diff.txt || fail "--replay --diff failed"
    "$MEMTRACE" --replay $mode.mt --diff 0 0.002 --format folded >$mode.diff.folded ||
        fail "--replay --diff --format folded failed"
    "$MEMTRACE" --replay $mode.mt --format folded >$mode.folded || fail "--replay --format folded failed"
    "$MEMTRACE" --replay $mode.mt --format massif -o $mode.massif || fail "--replay --format massif failed"
    "$MEMTRACE" --replay $mode.mt --format heaptrack -o $mode.heaptrack.gz || fail "--format heaptrack failed"
    gzip -dc $mode.heaptrack.gz >$mode.heaptrack || fail "the heaptrack export is not gzip"
    if "$MEMTRACE" --help 2>&1 | grep -q pprof; then
        "$MEMTRACE" --replay $mode.mt --format pprof -o $mode.pb.gz || fail "--format pprof failed"
        gzip -dc $mode.pb.gz >$mode.pb || fail "the pprof export is not gzip"
    fi
done
echo "the text report of the crafted recording, through cat -v:"
cat -v e.txt | head -12

for f in h.txt e.txt h.diff.txt e.diff.txt h.diff.folded h.folded e.folded h.massif e.massif \
         h.heaptrack e.heaptrack; do
    no_controls "$f" "$f"
done
grep -qF 'memtrace engine: agent<svg' e.txt || fail "the text report lost the 'E' record's engine"
grep -qF '\x1b[31m' e.txt || fail "the text report does not show ESC as \\x1b"

# pprof: every string of the string table (field 6) clean UTF-8.
if [ -f h.pb ]; then
    python3 - h.pb <<'PY' || fail "the pprof string table is not clean UTF-8"
import sys
b = open(sys.argv[1], 'rb').read()
def var(i):
    n = s = 0
    while True:
        c = b[i]; i += 1; n |= (c & 0x7f) << s; s += 7
        if c < 0x80: return n, i
i, strings = 0, []
while i < len(b):
    key, i = var(i)
    wt = key & 7
    if wt == 0: _, i = var(i)
    elif wt == 2:
        n, i = var(i)
        if key >> 3 == 6: strings.append(b[i:i + n])
        i += n
    elif wt == 1: i += 8
    elif wt == 5: i += 4
    else: raise SystemExit('wire type %d' % wt)
assert len(strings) > 10, strings
for s in strings:
    t = s.decode('utf-8')
    assert not any(ord(c) < 0x20 or 0x7f <= ord(c) < 0xa0 for c in t), t
print('pprof: %d strings, all valid UTF-8 without control characters' % len(strings))
PY
fi

# JSON: valid, and the names given back exactly.
python3 - <<'PY' || fail "a JSON report is wrong"
import json
for mode in ('h', 'e'):
    want = json.load(open(mode + '.strings.json'))
    for name in (mode + '.json', mode + '.at.json', mode + '.diff.json'):
        d = json.load(open(name))
        assert d['program'] == want['program'], (name, d['program'])
        if 'diff' not in d:
            assert d['engine'] == want['engine'], (name, d['engine'], want['engine'])
        fns = {f['function'] for s in d['stacks'] for f in s['frames']}
        files = {f['file'] for s in d['stacks'] for f in s['frames']}
        if '.at.' not in name:
            assert set(want['functions']) <= fns, (name, fns)
            assert set(want['files']) <= files, (name, files)
print('JSON: 6 reports valid, program, engine, function and file names given back exactly')
PY

need_tool chromium chromium
need_tool unshare util-linux
[ "$(id -u)" = 0 ] || skip "needs root: Chromium runs in a network namespace of its own"
unshare -n timeout 120 python3 "$MT_ROOT/selftest/tests/chromium_pages.py" "$(mktemp -d "$MT_TMP/chromium.XXXXXX")" \
    "watch:file://$MT_TMP/h.html:h.watch" "watch:file://$MT_TMP/e.html:e.watch" ||
    fail "chromium failed: $(tail -3 chromium.*/chromium.log)"
python3 - h.watch e.watch h.strings.json e.strings.json <<'PY' || fail "the page ran the recording's script"
import html.parser, json, sys
for watch, strings in ((sys.argv[1], sys.argv[3]), (sys.argv[2], sys.argv[4])):
    w, want = json.load(open(watch)), json.load(open(strings))
    # The payloads set the title to 'PWNED ...'; the program's path (which
    # holds them as text) is in memtrace's own title.
    assert w['title'].startswith('memtrace: /tmp/') and w['title'].endswith(' (pid 4242)'), ('title', w['title'])
    assert not w['console'], ('console', w['console'])
    assert not w['exceptions'], ('exceptions', w['exceptions'])
    csp = [e for e in w['log'] if 'Content Security Policy' in e['text']]
    assert not csp, ('CSP refusals', csp)
    assert w['drawn'] == 'yes', 'the page script did not run'

    class Tags(html.parser.HTMLParser):
        def __init__(self):
            super().__init__()
            self.tags, self.header, self.in_header, self.flame = [], '', False, []
        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            self.tags.append((tag, a))
            if tag == 'header':
                self.in_header = True
            if tag == 'g' and 'fr' in (a.get('class') or ''):
                self.flame.append(a.get('data-name'))
        def handle_endtag(self, tag):
            if tag == 'header':
                self.in_header = False
        def handle_data(self, data):
            if self.in_header:
                self.header += data
    p = Tags()
    p.feed(w['dom'])
    bad = [t for t in p.tags if t[0] in ('img', 'svg') and t[1].get('id') not in ('mt-chart', 'mt-flame')]
    assert not bad, ('payload elements in the DOM', bad)
    handlers = [t for t in p.tags if any(k.startswith('on') for k in t[1])]
    assert not handlers, ('event handler attributes', handlers)
    scripts = [t for t in p.tags if t[0] == 'script']
    assert len(scripts) == 2, ('script elements', scripts)
    engine = want['engine'].split('\x1b')[0]
    assert engine in p.header, ('the engine is not shown as text', p.header)
    assert 'id="mt-chart-line"' in w['dom'], 'no chart'
    names = set(p.flame)
    assert 'toString' in names and any('PWNED img' in n for n in names), ('flame graph', names)
print('Chromium: no script of the recording ran (title, console, exceptions, DOM), '
      'no CSP refusal; chart and flame graph drawn, the payload shown as text')
PY
exit 0
