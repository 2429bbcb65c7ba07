# Helpers of the leak_*.sh tests (sourced after lib.bash).

# The figures of the first LEAK SUMMARY in valgrind's log $1 (or memtrace's
# text) as "definite_bytes definite_blocks indirect_bytes indirect_blocks
# possible_bytes possible_blocks reachable_bytes reachable_blocks
# suppressed_bytes suppressed_blocks".
leak_summary_of_text() {
    python3 - "$1" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
i = t.find('LEAK SUMMARY')
if i < 0:
    sys.exit('no LEAK SUMMARY in ' + sys.argv[1])
t = t[i:]
out = []
for label in ('definitely lost', 'indirectly lost', 'possibly lost', 'still reachable', 'suppressed'):
    m = re.search(label + r': ([\d,]+) bytes in ([\d,]+) blocks', t)
    if not m:
        sys.exit('no "%s" line in %s' % (label, sys.argv[1]))
    out += [m.group(1).replace(',', ''), m.group(2).replace(',', '')]
print(' '.join(out))
PY
}

# The same figures from memtrace's JSON report $1.
leak_summary_of_json() {
    python3 - "$1" <<'PY'
import json, sys
l = json.load(open(sys.argv[1]))['leaks']
print(' '.join(str(l[k]) for k in (
    'definitely_lost_bytes', 'definitely_lost_blocks', 'indirectly_lost_bytes',
    'indirectly_lost_blocks', 'possibly_lost_bytes', 'possibly_lost_blocks',
    'reachable_bytes', 'reachable_blocks', 'suppressed_bytes', 'suppressed_blocks')))
PY
}

# valgrind --leak-check=full on a program; its log in $VG_LOG.
valgrind_leaks() {
    VG_LOG=$(mktemp "$MT_TMP/vg.XXXXXX")
    valgrind --leak-check=full --run-libc-freeres=no --log-file="$VG_LOG" "$@" >/dev/null 2>&1
}

# The first six figures (definite, indirect, possible) of a summary line.
lost_part() { echo "$1" | cut -d' ' -f1-6; }
