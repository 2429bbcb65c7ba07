#!/usr/bin/env bash
# The manual pages memtrace(1) and memtrace-fs(1) (dist/man/) against the
# built programs: every option of `--help` is documented under OPTIONS and
# every documented option is in `--help` (a new flag needs one tagged
# paragraph; the message names the option and the side it is missing from);
# mandoc -T lint and groff -ww find nothing; the pages carry the release of
# VERSION, as --version does.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
command -v mandoc >/dev/null || skip "mandoc is not installed (tools/install-deps.sh)"
command -v groff >/dev/null || skip "groff is not installed (tools/install-deps.sh)"
cd "$MT_TMP" || exit 1
release=$(cat "$MT_ROOT/VERSION")
bad=0
for prog in memtrace memtrace-fs; do
    case $prog in memtrace) bin=$MEMTRACE ;; *) bin=$MEMTRACE_FS ;; esac
    page=$MT_ROOT/dist/man/$prog.1
    "$bin" --help >"$prog.help" 2>&1 || fail "$prog --help exited $?"
    python3 "$MT_ROOT/dist/tools/options_diff.py" "$prog" "$prog.help" "$page" || bad=1

    # mandoc's lint at warning level and groff's every warning: no output.
    lint=$(mandoc -T lint -W warning "$page" 2>&1)
    [ -z "$lint" ] || { echo "mandoc -T lint $page:"; echo "$lint"; bad=1; }
    warn=$(LC_ALL=C.UTF-8 groff -ww -man -z -Tutf8 "$page" 2>&1)
    [ -z "$warn" ] || { echo "groff -ww $page:"; echo "$warn"; bad=1; }
    # man -l renders it (what a user sees) without a warning either.
    if command -v man >/dev/null; then
        out=$(MANWIDTH=80 man -l "$page" 2>&1 >/dev/null)
        [ -z "$out" ] || { echo "man -l $page: $out"; bad=1; }
    fi

    th=$(sed -n 's/^\.TH .*"memtrace \([^"]*\)".*/\1/p' "$page")
    [ "$th" = "$release" ] || { echo "$page: .TH names release '$th', VERSION says $release"; bad=1; }
    first=$("$bin" --version | head -n 1)
    [[ $first == "$prog $release "* ]] || { echo "$prog --version: '$first', VERSION says $release"; bad=1; }
done
[ $bad = 0 ] || fail "manual pages and --help differ (lines above)"
echo "manual pages match --help, lint clean"
