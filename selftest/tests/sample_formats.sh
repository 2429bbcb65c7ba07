#!/usr/bin/env bash
# Every output format says when its figures come from --sample, and at
# what rate: the text header, JSON's "sample_bytes", the folded stacks'
# weightless first line, massif's desc (read by ms_print), heaptrack's
# command line (read by heaptrack_print), pprof's period and comment, the
# HTML page, and a recording's replay.  An exact run says sample_bytes 0 and none of the rest.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
cd "$MT_TMP"
export MEMTRACE_SAMPLE_SEED=7
PROG=$MT_PROGS/leak_kinds
R=256

for fmt in text json folded massif html; do
    "$MEMTRACE" -q --sample $R --format $fmt -o "out.$fmt" "$PROG" >/dev/null || fail "--format $fmt failed"
done
grep -q "^memtrace sample: .*one per $R bytes on average (--sample $R)" out.text || fail "text: no sample line"
python3 -c "import json,sys; d=json.load(open('out.json')); sys.exit(d['sample_bytes'] != $R)" ||
    fail "JSON: sample_bytes is not $R"
head -1 out.folded | grep -qx "\[memtrace_--sample_$R:_estimated_bytes\] 0" || fail "folded: no sample line"
grep -q "^desc: (memtrace) --sample $R:" out.massif || fail "massif: desc does not say sampled"
grep -q "class=\"sampled\".*--sample $R" out.html || fail "HTML: the page does not say sampled"
if command -v ms_print >/dev/null; then
    ms_print out.massif >ms.txt 2>&1 || fail "ms_print refuses the sampled massif file: $(tail -3 ms.txt)"
    grep -q -- "--sample $R" ms.txt || fail "ms_print does not show the sampled desc"
fi
"$MEMTRACE" -q --sample $R --format heaptrack -o ht.gz "$PROG" >/dev/null || fail "--format heaptrack failed"
zcat ht.gz | grep -q "^X .*\[memtrace --sample $R: estimated" || fail "heaptrack: command line does not say sampled"
if command -v heaptrack_print >/dev/null; then
    heaptrack_print ht.gz >hp.txt 2>&1 || fail "heaptrack_print refuses the file"
    grep -q "Debuggee command was: .*--sample $R" hp.txt || fail "heaptrack_print does not show it"
fi
if "$MEMTRACE" --help | grep -q 'pprof (profile.proto'; then
    "$MEMTRACE" -q --sample $R --format pprof -o prof.pb.gz "$PROG" >/dev/null || fail "--format pprof failed"
    # profile.proto: period (12) and the comment (13) are indexes into the
    # string table (6); a minimal decoder of the top-level fields.
    python3 - prof.pb.gz $R <<'PY' || fail "pprof: period or comment wrong"
import gzip, sys
b = gzip.open(sys.argv[1]).read()
def varint(i):
    v = s = 0
    while True:
        c = b[i]; i += 1; v |= (c & 0x7f) << s; s += 7
        if c < 0x80: return v, i
i, strings, period, comments = 0, [], None, []
while i < len(b):
    key, i = varint(i)
    f, w = key >> 3, key & 7
    if w == 0:
        v, i = varint(i)
        if f == 12: period = v
        if f == 13: comments.append(v)
    elif w == 2:
        n, i = varint(i)
        data = b[i:i + n]; i += n
        if f == 6: strings.append(data.decode())
        if f == 13:   # packed
            j = 0
            while j < len(data):
                c = 0; s = 0
                while True:
                    x = data[j]; j += 1; c |= (x & 0x7f) << s; s += 7
                    if x < 0x80: break
                comments.append(c)
    else:
        sys.exit('unexpected wire type %d' % w)
print('period', period, 'comments', [strings[c] for c in comments])
if period != int(sys.argv[2]) or not any('--sample' in strings[c] for c in comments):
    sys.exit(1)
PY
fi

# A recording keeps the rate: its replay says sampled too.
"$MEMTRACE" -q --sample $R --record rec.mt -o /dev/null "$PROG" >/dev/null || fail "--record failed"
"$MEMTRACE" -q --replay rec.mt -j -o replay.json || fail "--replay failed"
python3 -c "import json,sys; sys.exit(json.load(open('replay.json'))['sample_bytes'] != $R)" ||
    fail "replay: sample_bytes is not $R"

"$MEMTRACE" -q -j -o exact.json "$PROG" >/dev/null || fail "exact run failed"
"$MEMTRACE" -q -o exact.text "$PROG" >/dev/null || fail "exact run failed"
python3 -c "import json,sys; sys.exit(json.load(open('exact.json'))['sample_bytes'] != 0)" ||
    fail "exact JSON: sample_bytes is not 0"
! grep -q "^memtrace sample:" exact.text || fail "the exact text report says sampled"
echo "every format says it is sampled"
