#!/usr/bin/env bash
# The corpus (corpus_common.bash): Debian's command-line tools on tiny
# inputs, under both engines, against valgrind's HEAP SUMMARY in the same
# environment: git log of a three-commit repository, sqlite3 on a table in
# memory, xz compressing and decompressing.
set -u
. "$MT_ROOT/selftest/tests/corpus_common.bash"
corpus_need git git
corpus_need sqlite3 sqlite3
corpus_need xz xz-utils
# The repository, made untraced (no system or user configuration).
export GIT_CONFIG_NOSYSTEM=1 HOME=$MT_TMP
git init -q repo || fail "git init"
for i in 1 2 3; do
    seq "$i" 300 >"repo/f$i" && git -C repo add "f$i" &&
        git -C repo -c user.name=corpus -c user.email=corpus@example.org commit -q -m "commit $i" ||
        fail "git commit $i"
done
corpus_case git_log GIT_CONFIG_NOSYSTEM=1 -- /usr/bin/git -C repo log --stat
corpus_case sqlite3 -- /usr/bin/sqlite3 :memory: \
    'create table t(k integer primary key, v text); with recursive n(i) as (select 1 union all select i + 1 from n where i < 300) insert into t select i, printf("row %d", i) from n; create index tv on t(v); select count(*), sum(length(v)) from t where v like "row 1%";'
seq 1 5000 >data.txt
corpus_case xz_compress -- /usr/bin/xz -3 -c data.txt
xz -3 -c data.txt >data.txt.xz
corpus_case xz_decompress -- /usr/bin/xz -d -c data.txt.xz
corpus_end
