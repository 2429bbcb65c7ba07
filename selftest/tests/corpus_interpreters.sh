#!/usr/bin/env bash
# The corpus (corpus_common.bash): Debian's interpreters on tiny scripts,
# under both engines, against valgrind's HEAP SUMMARY in the same
# environment: python3 with its own small-object allocator (pymalloc: only
# its arenas and large objects reach malloc) and with PYTHONMALLOC=malloc
# (every object does), perl.  Their string hashes are seeded at random
# unless told a seed, and the layout of their tables with them: each is
# told one (PYTHONHASHSEED, PERL_HASH_SEED), the same for every run.
set -u
. "$MT_ROOT/selftest/tests/corpus_common.bash"
corpus_need /usr/bin/python3 python3
corpus_need perl perl
py='import json; d = {str(i): [i] * 3 for i in range(200)}; print(len(json.dumps(d)))'
corpus_case python3_pymalloc PYTHONHASHSEED=0 -- /usr/bin/python3 -B -c "$py"
# README, Known limitations: every int object is malloc'd, and those of
# the thread's identifier (_thread.get_ident(), 124 in the imports) are
# 32 bytes natively and 28 under valgrind, whose thread control block lies
# below 2^30 (engine_valgrind_layout): 496 bytes more than valgrind's run.
# The ids of heap objects have one 30-bit digit in both runs only while the
# native heap lies below 2^30 too, as it does without address
# randomization (randomized, brk may start up to 1 GiB higher).
CORPUS_KNOWN_BYTES=(python3_malloc=496)
CORPUS_WRAP=(setarch -R)
corpus_case python3_malloc PYTHONHASHSEED=0 PYTHONMALLOC=malloc -- /usr/bin/python3 -B -c "$py"
CORPUS_WRAP=()
corpus_case perl PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0 -- /usr/bin/perl -e 'my %h; $h{$_} = [($_) x 3] for 1 .. 200; print scalar(keys %h), "\n"'
corpus_end
