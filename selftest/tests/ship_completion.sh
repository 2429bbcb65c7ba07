#!/usr/bin/env bash
# bash completion (dist/bash-completion/memtrace), driven through COMP_WORDS
# and COMP_CWORD in a bash that loaded it the way bash-completion does (the
# file named after the command in a completions folder):
# - every option offered is accepted by the binary's own option parser and
#   documented in its manual page, and the two sets are equal;
# - -p offers the process ids ps lists, each with the command name ps gives;
# - --format offers what memtrace accepts; an option's argument and the
#   traced program's own arguments are not taken for memtrace options.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
cd "$MT_TMP" || exit 1
bc=/usr/share/bash-completion/bash_completion
[ -r $bc ] || skip "bash-completion is not installed (tools/install-deps.sh)"
mkdir -p bin comp/completions
ln -s "$MEMTRACE" bin/memtrace
ln -s "$MEMTRACE_FS" bin/memtrace-fs
cp "$MT_ROOT/dist/bash-completion/memtrace" comp/completions/memtrace
cp "$MT_ROOT/dist/bash-completion/memtrace" comp/completions/memtrace-fs
export PATH=$MT_TMP/bin:$PATH

# complete WORD...: the candidates bash-completion's loader finds for the
# command line WORD... (the last word being completed), one per line.
complete_words() {
    BASH_COMPLETION_USER_DIR=$MT_TMP/comp bash --norc --noprofile -c '
        . '"$bc"'
        _completion_loader "$1" >/dev/null 2>&1
        spec=$(complete -p "$1" 2>/dev/null) || { echo "NO-COMPLETION-FOR $1"; exit 1; }
        fn=$(sed -n "s/.*-F \([^ ]*\) .*/\1/p" <<<"$spec")
        COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
        COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
        "$fn" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
        printf "%s\n" "${COMPREPLY[@]}"' bash "$@"
}

bad=0
for prog in memtrace memtrace-fs; do
    offered=$(complete_words "$prog" -) || fail "$prog: $offered"
    [ -n "$offered" ] || fail "$prog: no option offered"
    for opt in $offered; do
        err=$(timeout 10 "$prog" "$opt" </dev/null 2>&1 >/dev/null)
        if grep -qE 'unrecognized option|invalid option' <<<"$err"; then
            echo "$prog: offers $opt, which it rejects: $err"; bad=1
        fi
    done
    # The manual page's OPTIONS, read by the drift test's own reader.
    documented=$(python3 -c '
import sys; sys.path.insert(0, sys.argv[1])
from options_diff import man_entries
print("\n".join(sorted({t for e in man_entries(open(sys.argv[2]).read()) for t in e})))' \
        "$MT_ROOT/dist/tools" "$MT_ROOT/dist/man/$prog.1")
    diff <(sort -u <<<"$offered") <(echo "$documented") >opts.diff ||
        { echo "$prog: offered (<) and documented (>) options differ:"; cat opts.diff; bad=1; }
    echo "$prog: $(wc -w <<<"$offered") options offered, each accepted and documented"
done

# --format: the values memtrace accepts (it parses --format before -h).
formats=$(complete_words memtrace --format '')
[ "$(sort <<<"$formats" | tr '\n' ' ')" = "folded heaptrack html json massif pprof text " ] || { echo "--format offers: $formats"; bad=1; }
for f in $formats; do memtrace --format "$f" -h >/dev/null 2>&1 || { echo "--format $f refused"; bad=1; }; done
memtrace --format bogus -h >/dev/null 2>&1 && { echo "memtrace accepts --format bogus: this check cannot fail"; bad=1; }

# Arguments are skipped: 3 is -d's, and after the program ls, "-" is its own.
complete_words memtrace -d 3 -q - | grep -qx -- --pid || { echo "'-d 3 -q -' does not offer --pid"; bad=1; }
[ -z "$(complete_words memtrace -d 3 ls -)" ] || { echo "'-d 3 ls -' offers memtrace options to ls"; bad=1; }
[ -z "$(complete_words memtrace -- ls -l -)" ] || { echo "'-- ls -l -' offers memtrace options"; bad=1; }

# -p: process ids with their command names, against ps.  Only processes
# alive before and after the completion are compared; a candidate must
# have existed at one of the two moments.
# ps_pids PREFIX: "PID COMMAND" of the processes whose id starts with
# PREFIX, kernel threads left out (workqueue workers rename themselves as
# they go: they are offered, but no two looks agree on their names).
ps_pids() {
    ps -e -o pid=,ppid=,comm= | awk -v p="$1" 'index($1, p) == 1 && $1 != 2 && $2 != 2' |
        sed -E 's/^ *([0-9]+) +[0-9]+ /\1 /' | sort
}
sleep 300 &
sleeper=$!
trap 'kill $sleeper 2>/dev/null' EXIT
for prefix in "" "${sleeper:0:1}" "$sleeper"; do
    before=$(ps_pids "$prefix")
    got=$(complete_words memtrace -p "$prefix")
    after=$(ps_pids "$prefix")
    both=$(comm -12 <(echo "$before") <(echo "$after"))
    either=$(sort -u <(echo "$before") <(echo "$after"))
    # One candidate is inserted bare; several are listed as "PID (COMMAND)".
    if [ "$(wc -l <<<"$got")" = 1 ] && [[ $got =~ ^[0-9]+$ ]]; then
        norm=$(awk -v p="$got" '$1 == p' <<<"$either")
        [ "$(wc -l <<<"$both")" -le 1 ] || { echo "-p '$prefix': one candidate, ps lists: $both"; bad=1; }
    else
        norm=$(sed -E 's/^([0-9]+) \((.*)\)$/\1 \2/' <<<"$got" | sort)
    fi
    # Alive before and after: offered, under the name ps gives.  A process
    # born and gone during the completion (others run on this machine)
    # cannot be checked, nor one that exec'd meanwhile; one ps listed
    # under the same name before and after, offered under another, is wrong.
    missing=$(comm -23 <(echo "$both") <(echo "$norm"))
    [ -z "$missing" ] || { echo "-p '$prefix': ps lists, completion misses: $missing"; bad=1; }
    unseen=$(comm -13 <(echo "$either") <(echo "$norm"))
    renamed=$(awk 'NR == FNR {seen[$1] = 1; next} ($1 in seen)' <(echo "$both") <(echo "$unseen"))
    [ -z "$renamed" ] || { echo "-p '$prefix': offered under a name ps never gave: $renamed"; bad=1; }
    grep -q "^$sleeper sleep$" <<<"$norm" || { echo "-p '$prefix': sleep ($sleeper) not offered: $got"; bad=1; }
    echo "-p '$prefix': $(wc -l <<<"$norm") candidates, $(wc -l <<<"$both") alive throughout and offered as ps lists them"
done
[ $bad = 0 ] || fail "completion (lines above)"
