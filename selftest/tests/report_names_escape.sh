#!/usr/bin/env bash
# Names with terminal escapes, from a traced program
# (selftest/programs/names_escape.c: functions whose names hold ESC [31m,
# BEL, CR, a C1 CSI and a byte that is not UTF-8, a source file name with
# BEL, CR and ESC [2J) run from a directory whose name holds an OSC title
# sequence: the text report, the live log, --replay's text and
# --replay --diff (text and folded), folded, massif (and ms_print's reading
# of it) and heaptrack (and heaptrack_print's reading of it) hold no raw
# control character but tab and LF, and no C1 control (grep -P and python3
# as the oracles; the text report is shown through cat -v), and show each
# name with its escapes spelled \x1b, \x07, \x0d...
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
[ -x "$MT_PROGS/names_escape" ] || fail "$MT_PROGS/names_escape is not built"
cd "$MT_TMP" || fail "no scratch directory"
dir="$MT_TMP/bin$(printf '\033]0;owned\007')"
mkdir -p "$dir" && cp "$MT_PROGS/names_escape" "$dir/names_escape" || fail "cannot copy the program"
prog="$dir/names_escape"

no_controls() {
    if LC_ALL=C grep -naP '[\x00-\x08\x0b-\x1f\x7f]' "$1" >ctl.hits; then
        cat -v ctl.hits | head -5 >&2
        fail "$1 holds raw control characters (cat -v above)"
    fi
    python3 - "$1" <<'PY' || fail "$1 is not clean UTF-8 text"
import sys
t = open(sys.argv[1], 'rb').read().decode('utf-8')  # raises on bad UTF-8
bad = [hex(ord(c)) for c in t if 0x80 <= ord(c) < 0xa0]
assert not bad, '%s: C1 controls %s' % (sys.argv[1], bad)
PY
}
# The escaped names, as every text format spells them.
evil='evil\x1b[31mname\x07'
csi='csi\xc2\x9b2Jname\x0d\xff'
file='names\x07\x0dfile\x1b[2J.c'
shows() {
    local f=$1; shift
    for want in "$@"; do
        grep -qF -- "$want" "$f" || fail "$f does not show $want: $(cat -v "$f" | head -20)"
    done
}

"$MEMTRACE" -q --record rec.mt --record-interval 1 "$prog" >live.txt 2>live.err || fail "memtrace failed: $(cat -v live.err)"
echo "the text report, through cat -v:"
cat -v live.txt | sed -n '1,8p'
"$MEMTRACE" --replay rec.mt >replay.txt || fail "--replay failed"
"$MEMTRACE" --replay rec.mt --diff 0 1000 >diff.txt 2>diff.err || fail "--replay --diff failed"
"$MEMTRACE" --replay rec.mt --diff 0 1000 --format folded >diff.folded 2>>diff.err ||
    fail "--replay --diff --format folded failed"
"$MEMTRACE" -q --format folded -o report.folded "$prog" || fail "--format folded failed"
"$MEMTRACE" -q --format massif -o report.massif "$prog" || fail "--format massif failed"
"$MEMTRACE" -q --format heaptrack -o report.heaptrack.gz "$prog" || fail "--format heaptrack failed"
gzip -dc report.heaptrack.gz >report.heaptrack || fail "the heaptrack export is not gzip"

for f in live.txt live.err replay.txt diff.txt diff.err diff.folded report.folded report.massif report.heaptrack; do
    no_controls "$f"
done
shows live.txt "$evil" "$csi" "$file"
shows replay.txt "$evil" "$csi" "$file"
shows diff.txt "$evil" "$csi" "$file"
shows diff.folded "$evil" "$csi"
shows report.folded "$evil" "$csi"
shows report.massif "$evil" "$csi" "$file" 'cmd: '"$MT_TMP"'/bin\x1b]0;owned\x07/names_escape'
shows report.heaptrack "$evil" "$csi" "$file" 'X '"$MT_TMP"'/bin\x1b]0;owned\x07/names_escape'

# The readers: what ms_print and heaptrack_print print of them.
readers=
if command -v ms_print >/dev/null; then
    ms_print report.massif >ms_print.txt 2>ms_print.err || fail "ms_print cannot read the file: $(cat ms_print.err)"
    no_controls ms_print.txt
    shows ms_print.txt "$evil"
    readers+=" ms_print"
fi
if command -v heaptrack_print >/dev/null; then
    heaptrack_print -f report.heaptrack.gz >hp.txt 2>hp.err ||
        fail "heaptrack_print cannot read the file: $(cat hp.err)"
    no_controls hp.txt
    shows hp.txt "$evil"
    readers+=" heaptrack_print"
fi
echo "no raw control character in the text report, the log, --replay, --diff (text, folded)," \
     "folded, massif, heaptrack${readers:+, nor in what$readers printed}"
command -v ms_print >/dev/null || skip "missing tool: ms_print (valgrind)"
command -v heaptrack_print >/dev/null || skip "missing tool: heaptrack_print (heaptrack)"
exit 0
