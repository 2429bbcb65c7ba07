#!/bin/bash
# --leak-exitcode against valgrind's --error-exitcode with
# --errors-for-leak-kinds=definite (same programs, same exit statuses), and
# --suppressions against LeakSanitizer itself: the same suppression file on
# the same program built with -fsanitize=address must suppress the same
# bytes and blocks and leave the same bytes leaked (patterns chosen on
# blocks both tools call leaked; LeakSanitizer counts memcheck's "possibly
# lost" blocks as reachable).  Then file and module patterns, and a bad file
# (one-line error with FILE:LINE, program never started).
. "$MT_ROOT/selftest/tests/lib.bash"
. "$MT_ROOT/selftest/tests/leak_common.bash"
need_tool valgrind valgrind
PROG=$MT_PROGS/leak_kinds

# --- exit code ---------------------------------------------------------------
# phases frees what it allocates (valgrind's status below says so).
for prog in "$PROG" "$MT_PROGS/phases"; do
    valgrind -q --leak-check=full --run-libc-freeres=no --error-exitcode=42 \
        --errors-for-leak-kinds=definite "$prog" >/dev/null 2>&1
    vg=$?
    "$MEMTRACE" -q --leak-exitcode 42 -o /dev/null "$prog" >/dev/null 2>&1
    mt=$?
    echo "exit status with leak exit code 42: valgrind $vg, memtrace $mt ($prog)"
    [ "$vg" = "$mt" ] || fail "exit status differs on $prog"
done
[ "$mt" = 0 ] || fail "the clean program must exit 0 (valgrind: $vg)"
"$MEMTRACE" -q --leak-exitcode x "$PROG" >/dev/null 2>"$MT_TMP/err" && fail "--leak-exitcode x accepted"
[ "$(wc -l < "$MT_TMP/err")" = 1 ] || fail "bad --leak-exitcode: want one line: $(cat "$MT_TMP/err")"

# --- suppressions against LeakSanitizer --------------------------------------
# LeakSanitizer is the oracle on 64-bit only: its i386 scan classifies the
# same program's blocks differently (fewer suppressed), so there the file and
# module patterns below, checked against memtrace's own runs, remain.
if [ -z "$MT_TARGET_CFLAGS" ] && gcc -g -O0 -fsanitize=address -o "$MT_TMP/lk_asan" "$MT_ROOT/selftest/programs/leak_kinds.c" 2>/dev/null &&
    ASAN_OPTIONS=detect_leaks=1 "$MT_TMP/lk_asan" 2>&1 | grep -q 'SUMMARY: AddressSanitizer'; then
    i=0
    for body in 'leak:leak_list\nleak:^drop_one$' '# comment\n\n   leak:leak_*cle   \n' 'leak:list$' \
        'leak:nomatch\nleak:^dr*one$\nleak:^leak_l'; do
        i=$((i + 1))
        f=$MT_TMP/s$i.supp
        printf "$body\n" > "$f"
        ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS="suppressions=$f:print_suppressions=1" \
            "$MT_TMP/lk_asan" > "$MT_TMP/lsan.out" 2>&1
        lsan=$(python3 - "$MT_TMP/lsan.out" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
m = re.search(r'SUMMARY: AddressSanitizer: (\d+) byte\(s\) leaked in (\d+) allocation', t)
leaked = m.group(1) if m else '0'
sb = sn = 0
if 'Suppressions used:' in t:
    for line in t.split('Suppressions used:')[1].splitlines():
        m = re.match(r'\s+(\d+)\s+(\d+)\s+\S', line)
        if m:
            sn += int(m.group(1)); sb += int(m.group(2))
print(leaked, sb, sn)
PY
)
        "$MEMTRACE" -q -a --suppressions "$f" -j -o "$MT_TMP/mt.json" "$PROG" || fail "memtrace failed with $f"
        read -r db dn ib in pb pn rb rn sb sn <<<"$(leak_summary_of_json "$MT_TMP/mt.json")"
        mt="$((db + ib)) $sb $sn"
        echo "suppressions [$body]: LeakSanitizer leaked/suppressed bytes/blocks $lsan | memtrace $mt"
        [ "$lsan" = "$mt" ] || fail "suppression results differ for [$body]"
    done
else
    echo "note: LeakSanitizer unusable here (or a 32-bit target); its comparison left out"
fi

# --- file and module patterns: everything lost is suppressed ------------------
"$MEMTRACE" -q -a -j -o "$MT_TMP/all.json" "$PROG" || fail "memtrace -a failed"
read -r db dn ib in pb pn rb rn sb sn <<<"$(leak_summary_of_json "$MT_TMP/all.json")"
lost="$((db + ib + pb)) $((dn + in + pn))"
for pat in 'leak:leak_kinds.c' 'leak:*/libc.so*'; do
    printf '%s\n' "$pat" > "$MT_TMP/p.supp"
    "$MEMTRACE" -q -a --suppressions "$MT_TMP/p.supp" -j -o "$MT_TMP/p.json" "$PROG" || fail "memtrace failed with $pat"
    read -r db2 dn2 ib2 in2 pb2 pn2 rb2 rn2 sb2 sn2 <<<"$(leak_summary_of_json "$MT_TMP/p.json")"
    echo "$pat: suppressed $sb2 $sn2 (all lost: $lost), still reachable $rb2 $rn2"
    [ "$sb2 $sn2" = "$lost" ] && [ "$((db2 + ib2 + pb2))" = 0 ] || fail "$pat did not suppress every lost block"
    [ "$rb2 $rn2" = "$rb $rn" ] || fail "$pat changed the reachable figures"
done
grep -q '"leak_kind": "suppressed"' "$MT_TMP/p.json" || fail "no stack marked suppressed in JSON"

# --- bad files ------------------------------------------------------------------
printf 'leak:ok\n# fine\nrace:foo\n' > "$MT_TMP/bad.supp"
"$MEMTRACE" -q --suppressions "$MT_TMP/bad.supp" "$PROG" >"$MT_TMP/out" 2>"$MT_TMP/err" && fail "bad suppressions accepted"
echo "bad file: $(cat "$MT_TMP/err")"
[ "$(wc -l < "$MT_TMP/err")" = 1 ] && grep -q "bad.supp:3:" "$MT_TMP/err" || fail "want one line naming bad.supp:3"
[ -s "$MT_TMP/out" ] && fail "the program ran although the suppressions were bad"
"$MEMTRACE" -q --suppressions "$MT_TMP/none.supp" "$PROG" 2>"$MT_TMP/err" && fail "missing file accepted"
[ "$(wc -l < "$MT_TMP/err")" = 1 ] || fail "missing file: want one line: $(cat "$MT_TMP/err")"
echo "leak flags agree with valgrind and LeakSanitizer"
