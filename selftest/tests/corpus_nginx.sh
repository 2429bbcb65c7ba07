#!/usr/bin/env bash
# The corpus (corpus_common.bash): Debian's nginx, a master and 2 workers
# under memtrace -f (each engine) on loopback, serving curl: the untraced
# server's pages; a report per process, the workers forked by the master
# and their books their own (each worker's count goes on from the master's
# at the fork; the worker that served more requests counted more); no
# misuse error in any process; after SIGTERM to memtrace (a detach) nginx
# keeps serving.
set -u
. "$MT_ROOT/selftest/tests/corpus_common.bash"
cd "$MT_TMP" || fail "no scratch directory"
corpus_need nginx nginx
corpus_need curl curl

npid='' nginx_master=''
trap 'kill "${npid:-}" "${nginx_master:-}" 2>/dev/null' EXIT
# A free loopback port (the kernel's choice, then released).
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p www logs
for i in 1 2 3 4 5 6 7 8; do seq "$i" $((i * 500)) >"www/page$i.txt"; done
cat >nginx.conf <<EOF
user root;
daemon off;
master_process on;
worker_processes 2;
pid $MT_TMP/nginx.pid;
error_log $MT_TMP/logs/error.log;
events { worker_connections 64; }
http {
    log_format served '\$pid \$request_uri';
    access_log $MT_TMP/logs/access.log served;
    client_body_temp_path $MT_TMP/body;
    proxy_temp_path $MT_TMP/proxy;
    fastcgi_temp_path $MT_TMP/fastcgi;
    uwsgi_temp_path $MT_TMP/uwsgi;
    scgi_temp_path $MT_TMP/scgi;
    server {
        listen 127.0.0.1:$port;
        root $MT_TMP/www;
    }
}
EOF
# fetch_all TAG: every page, each on a new connection, compared with the file.
fetch_all() {
    local i
    for i in 1 2 3 4 5 6 7 8; do
        curl -s --max-time 10 -o "got.$1.$i" "http://127.0.0.1:$port/page$i.txt" ||
            { echo "curl page$i: status $?"; return 1; }
        cmp -s "got.$1.$i" "www/page$i.txt" || { echo "page$i differs"; return 1; }
    done
}
# workers PID: the pids of master PID's children.
nginx_workers() { pgrep -P "$1" | sort -n; }

# nginx_books JSON ACCESS_LOG WORKERS: the workers' reports, one line.
nginx_books() {
    python3 - "$@" <<'PY'
import collections, json, sys
d = json.load(open(sys.argv[1]))
served = collections.Counter(l.split()[0] for l in open(sys.argv[2]) if l.strip())
workers = sorted(int(p) for p in sys.argv[3].split())
kids = {c['pid']: c for c in d.get('children') or []}
def fail(why):
    print(why)
    sys.exit(1)
# Each worker has its report, forked by the master (the report's first
# process), and none else is there.
ws = [kids.get(w) for w in workers]
if None in ws or any(c.get('ppid') != d['pid'] for c in ws):
    fail('workers %s, reports of %s' % (workers, [(c['pid'], c.get('ppid')) for c in kids.values()]))
m = d['heap']['allocs']
out = ['master %d allocs' % m]
for w, c in zip(workers, ws):
    out.append('worker %d: %d requests, %d allocs' % (w, served[str(w)], c['heap']['allocs']))
    if c['heap']['allocs'] <= m:
        fail('worker %d counted nothing of its own (%d allocs, the master %d)' % (w, c['heap']['allocs'], m))
(a, ca), (b, cb) = [(served[str(w)], c['heap']['allocs']) for w, c in zip(workers, ws)]
if a != b and (a > b) != (ca > cb):
    fail('the worker that served more counted less: ' + ', '.join(out))
print(', '.join(out))
PY
}

for e in "${CORPUS_ENGINES[@]}"; do
    : >logs/access.log
    "$MEMTRACE" -q --engine "$e" -f -j -o "nginx.$e.json" nginx -p "$MT_TMP" -e "$MT_TMP/logs/error.log" -c "$MT_TMP/nginx.conf" \
        >"nginx.$e.out" 2>"nginx.$e.err" &
    npid=$!
    wait_until 30 "nginx on port $port" tcp_listening "$port"
    wait_until 30 "nginx's pid file" test -s nginx.pid
    nginx_master=$(cat nginx.pid)
    wait_until 30 "2 nginx workers" test "$(nginx_workers "$nginx_master" | wc -l)" = 2
    why=$(fetch_all "$e.traced") || { corpus_verdict "nginx_$e" "FAIL: traced nginx: $why"; break; }
    workers=$(nginx_workers "$nginx_master" | paste -sd' ')
    cp logs/access.log "served.$e"   # the requests served while traced
    kill -TERM "$npid"
    wait "$npid"
    st=$?
    npid=
    [ $st = 0 ] || { corpus_verdict "nginx_$e" "FAIL: memtrace ended with status $st after SIGTERM: $(tail -n 2 "nginx.$e.err")"; break; }
    why=$(fetch_all "$e.detached") || { corpus_verdict "nginx_$e" "FAIL: nginx after memtrace's SIGTERM: $why"; break; }
    kill -QUIT "$nginx_master"
    wait_until 30 "nginx to end" bash -c "! kill -0 $nginx_master 2>/dev/null"
    nginx_master=
    verdict=ok
    figures=$(nginx_books "nginx.$e.json" "served.$e" "$workers") || verdict="FAIL: $figures"
    corpus_no_errors "nginx.$e.json" || verdict="FAIL: misuse errors"
    corpus_verdict "nginx_$e" "$verdict" "$figures; served after SIGTERM to memtrace"
done
corpus_end
