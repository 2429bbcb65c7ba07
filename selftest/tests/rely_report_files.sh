#!/usr/bin/env bash
# Report files written by memtrace running as root (issue 21): in a
# directory another user (nobody) can write, that user plants a symlink to a
# root-owned file and a file of their own.  `report > FILE` and -o FILE must
# refuse both with a one-line error and leave them as they were, still write
# a file of our own, and still write to /dev/null and through a symlink of
# our own.
set -u
. "$(dirname "$0")/lib.bash"
[ "$(id -u)" = 0 ] || skip "needs root (writes as root, plants files as nobody)"
id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null || skip "no user nobody or no setpriv"
dir=$(mktemp -d /tmp/mt-report-files.XXXXXX)
trap 'rm -rf "$dir"' EXIT
chmod 755 "$dir"
mkdir "$dir/shared" && chown nobody "$dir/shared"
echo "precious root data" >"$dir/victim"
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
as_nobody ln -s "$dir/victim" "$dir/shared/report.txt" || fail "planting the symlink"
as_nobody sh -c "echo 'nobody wrote this' >'$dir/shared/theirs.txt'" || fail "planting the file"
ln -s "$dir/ours.txt" "$dir/our-link.txt"
before_victim=$(md5sum <"$dir/victim")
before_theirs=$(md5sum <"$dir/shared/theirs.txt")

printf '%s\n' "report > $dir/shared/report.txt" "report > $dir/shared/theirs.txt" \
    "report > $dir/shared/mine.txt" "report > /dev/null" "report -n 1 > $dir/our-link.txt" "quit" |
    "$MEMTRACE" -C -o "$dir/shared/theirs.txt" /bin/sleep 3 >"$MT_TMP/out" 2>"$MT_TMP/err"
rc=$?
cat "$MT_TMP/out" "$MT_TMP/err"
[ "$(md5sum <"$dir/victim")" = "$before_victim" ] || fail "the symlink redirected root's write into $dir/victim"
[ "$(md5sum <"$dir/shared/theirs.txt")" = "$before_theirs" ] || fail "another user's file was replaced"
[ "$(stat -c %U "$dir/shared/theirs.txt")" = nobody ] || fail "another user's file changed owner"
grep -q "HEAP SUMMARY" "$dir/shared/mine.txt" || fail "a file of our own was not written"
grep -q "report.txt: a symlink of another user; not followed" "$MT_TMP/out" ||
    fail "no one-line refusal for the symlink"
grep -q "theirs.txt: the file belongs to another user; not replaced" "$MT_TMP/out" ||
    fail "no one-line refusal for the other user's file"
grep -q "report written to /dev/null" "$MT_TMP/out" || fail "/dev/null refused"
grep -q "HEAP SUMMARY" "$dir/ours.txt" || fail "a symlink of our own was not followed"
grep -q "error: report: cannot open .*theirs.txt: the file belongs to another user" "$MT_TMP/err" ||
    fail "-o: no one-line refusal"
[ $rc -eq 1 ] || fail "memtrace exited $rc after -o was refused (1 expected)"
echo "rely_report_files: ok"
