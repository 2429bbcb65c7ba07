# Helpers for memtrace's integration tests (sourced).

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "$*"; exit 77; }

# The HEAP SUMMARY of valgrind as "allocs frees bytes_allocated in_use_bytes
# in_use_blocks".  libc's exit-time freeing (__libc_freeres) is off: it is
# valgrind's own call, which a real run never makes.
valgrind_summary() {
    local log
    log=$(mktemp "$MT_TMP/vg.XXXXXX")
    valgrind --run-libc-freeres=no --log-file="$log" "$@" >/dev/null 2>&1
    python3 - "$log" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
num = lambda s: int(s.replace(',', ''))
m = re.search(r'in use at exit: ([\d,]+) bytes in ([\d,]+) blocks', text)
t = re.search(r'total heap usage: ([\d,]+) allocs, ([\d,]+) frees, ([\d,]+) bytes allocated', text)
if not m or not t:
    sys.exit('no HEAP SUMMARY in valgrind output')
print(num(t.group(1)), num(t.group(2)), num(t.group(3)), num(m.group(1)), num(m.group(2)))
PY
}

# The same five figures from memtrace's JSON report.
memtrace_summary() {
    local json
    json=$(mktemp "$MT_TMP/mt.XXXXXX")
    "$MEMTRACE" -q -j -o "$json" "$@" >/dev/null || return 1
    python3 - "$json" <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))['heap']
print(h['allocs'], h['frees'], h['bytes_allocated'], h['in_use_bytes'], h['in_use_blocks'])
PY
}

# Checks that memtrace and valgrind agree on a program run.
compare_with_valgrind() {
    local vg mt
    vg=$(valgrind_summary "$@") || fail "valgrind failed on $*"
    mt=$(memtrace_summary "$@") || fail "memtrace failed on $*"
    echo "valgrind: $vg | memtrace: $mt | $*"
    [ "$vg" = "$mt" ] || fail "figures differ for $* (allocs frees bytes in_use_bytes in_use_blocks)"
}
