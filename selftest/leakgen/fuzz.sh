#!/bin/bash
# make fuzz: generated leak programs with fresh seeds, batch after batch,
# for about SECONDS seconds (memcheck, LSan and memtrace -a, as in
# selftest/tests/leak_corpus.sh).  Exit 1 if any program where memcheck and
# LSan agree gets other definitely lost figures from memtrace.
#   selftest/leakgen/fuzz.sh MEMTRACE [SECONDS]
set -u
mt=$1
secs=${2:-60}
out=$(mktemp -d /tmp/leakgen-fuzz.XXXXXX)
trap 'rm -rf "$out"' EXIT
base=$(( ($(date +%s) % 100000) * 100 + 1000 ))
end=$((SECONDS + secs))
rc=0
seed=$base
while [ $SECONDS -lt $end ]; do
    python3 "$(dirname "$0")/oracle.py" --memtrace "$mt" --out "$out/$seed" --seeds "$seed" \
        --scenarios 25 --jobs 2 > "$out/log" 2>&1 || rc=1
    grep -E '^(FAIL|DIFF|ERROR)' "$out/log"
    tail -3 "$out/log" | head -2 | sed "s/^/seed $seed: /"
    rm -rf "${out:?}/$seed"
    seed=$((seed + 1))
done
echo "leakgen: seeds $base-$((seed - 1)) ($(( (seed - base) * 75 )) programs)"
exit $rc
