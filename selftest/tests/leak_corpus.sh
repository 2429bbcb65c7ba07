#!/bin/bash
# The leak scan at exit (-a) on generated programs (selftest/leakgen): 3
# seeds x 25 scenarios x -O0/-O1/-O2 = 225 programs (150 under the agent,
# 75 under the breakpoint engine), each run under memcheck
# (valgrind --leak-check=full), LeakSanitizer (gcc -fsanitize=leak) and
# memtrace -a.  Where memcheck and LSan agree on what is lost, memtrace's
# definitely lost bytes and blocks must equal memcheck's; indirectly and
# possibly lost must equal memcheck's on at least 99% of them, and every
# difference is listed in the log.  Programs where the two oracles disagree
# are listed and not counted.  More seeds: make fuzz (selftest/leakgen/fuzz.sh).
. "$MT_ROOT/selftest/tests/lib.bash"
command -v valgrind >/dev/null || skip "valgrind not installed"
command -v python3 >/dev/null || skip "python3 not installed"
[ -z "${MT_TARGET_CFLAGS:-}" ] || skip "generated programs are built for the host CPU only"
echo 'int main(void){return 0;}' > "$MT_TMP/t.c"
gcc -fsanitize=leak -o "$MT_TMP/t" "$MT_TMP/t.c" 2>/dev/null || skip "gcc -fsanitize=leak does not link (liblsan0)"

# The generated programs and their oracles' figures are kept in
# MT_ORACLE_CACHE for the run (LEAK_CORPUS_SEEDS=1-3 twice: the second
# reruns only memtrace).
corpus=${MT_ORACLE_CACHE:-$MT_TMP}/leak_corpus
# The scan itself is the same code under both engines; what the breakpoint
# engine adds is how the blocks were booked.  The two engines share the
# corpus out: seeds 1-2 under the agent, seed 3 under breakpoints, so that
# each program and its oracles run once (either engine on all of them:
# LEAK_CORPUS_SEEDS=1-3).
seeds=1-2
[ "${MEMTRACE_ENGINE:-}" = ptrace ] && seeds=3
seeds=${LEAK_CORPUS_SEEDS:-$seeds}
lo=${seeds%-*} hi=${seeds#*-}
python3 "$MT_ROOT/selftest/leakgen/oracle.py" --memtrace "$MEMTRACE" --out "$corpus" \
    --seeds "$seeds" --scenarios 25 --jobs 2 --min-rate 99 \
    --min-counted $((30 * (hi - lo + 1))) | tee "$MT_TMP/corpus.log"
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] || fail "leak figures differ from memcheck's (see the FAIL/DIFF lines above)"
echo "leak figures agree with memcheck's"
