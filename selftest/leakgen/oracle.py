#!/usr/bin/env python3
"""Runs generated leak programs under memcheck, LeakSanitizer and memtrace -a
and compares the leak figures.

oracle.py --memtrace BIN --out DIR [--seeds A-B] [--scenarios N] [--opts 0,1,2]
          [--jobs 2] [--budget SECONDS] [--attach]

For each seed: gen.py writes a program of N scenarios, compiled once per -O
level (plain, and with -fsanitize=leak); each (seed, scenario, level) is one
program of the corpus.  Rules:
  - memcheck (valgrind --leak-check=full) and LSan agree when their lost
    totals are equal: memcheck's definitely + indirectly lost bytes and
    blocks against LSan's direct + indirect leaks (LSan has no "possibly
    lost": memcheck's possibly lost blocks are reachable for it).  Programs
    where they disagree are recorded and not counted.
  - where they agree, memtrace's definitely lost bytes and blocks must equal
    memcheck's (a failure), and its indirectly and possibly lost figures are
    compared (a rate; every difference is listed).
--attach instead starts each program, attaches memtrace -p while the
program waits mid-run, scans, and counts leaks that memcheck sees at exit
but the attached scan misses (measurement, never a failure).
The last line is "N passed, N failed"."""
import argparse
import concurrent.futures as cf
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def sh(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, **kw)


def memcheck(prog, k):
    r = sh(['valgrind', '--leak-check=full', '--run-libc-freeres=no',
            '--run-cxx-freeres=no', prog, str(k)], timeout=120)
    t = r.stderr
    i = t.find('LEAK SUMMARY')
    if i < 0:
        if 'All heap blocks were freed' in t:
            return [0] * 8
        raise RuntimeError('memcheck: no LEAK SUMMARY\n' + t[-2000:])
    t = t[i:]
    out = []
    for label in ('definitely lost', 'indirectly lost', 'possibly lost', 'still reachable'):
        m = re.search(label + r': ([\d,]+) bytes in ([\d,]+) blocks', t)
        out += [int(m.group(1).replace(',', '')), int(m.group(2).replace(',', ''))] if m else [0, 0]
    return out


def lsan(prog, k):
    env = dict(os.environ)
    env['LSAN_OPTIONS'] = 'exitcode=0:report_objects=0'
    r = sh([prog, str(k)], env=env, timeout=120)
    direct = [0, 0]
    indirect = [0, 0]
    for m in re.finditer(r'(Direct|Indirect) leak of (\d+) byte\(s\) in (\d+) object', r.stderr):
        d = direct if m.group(1) == 'Direct' else indirect
        d[0] += int(m.group(2))
        d[1] += int(m.group(3))
    if 'ERROR: LeakSanitizer' in r.stderr and 'detected memory leaks' not in r.stderr:
        raise RuntimeError('lsan failed\n' + r.stderr[-2000:])
    return direct + indirect


def memtrace(mt, prog, k, tmp):
    out = os.path.join(tmp, 'mt-%s-%d.json' % (os.path.basename(prog), k))
    r = sh([mt, '-q', '-a', '-j', '-o', out, prog, str(k)], timeout=120)
    if r.returncode != 0:
        raise RuntimeError('memtrace failed (%d)\n%s' % (r.returncode, r.stderr[-2000:]))
    with open(out) as f:
        l = json.load(f)['leaks']
    os.unlink(out)
    return [l[x] for x in ('definitely_lost_bytes', 'definitely_lost_blocks',
                           'indirectly_lost_bytes', 'indirectly_lost_blocks',
                           'possibly_lost_bytes', 'possibly_lost_blocks',
                           'reachable_bytes', 'reachable_blocks')]


def memcheck_phase2(prog, k):
    """Lost blocks and bytes (definitely + indirectly) that memcheck finds
    among the blocks scenario K made, the program run as under --attach."""
    env = dict(os.environ)
    env['LEAKGEN_ATTACH'] = '1'
    r = sh(['valgrind', '--leak-check=full', '--show-leak-kinds=all', '--run-libc-freeres=no',
            '--run-cxx-freeres=no', prog, str(k)], env=env, input='go\n', timeout=120)
    lost = [0, 0]
    recs = re.split(r'\n==\d+== \n', r.stderr)
    want = ' scenario_%d (' % k
    for rec in recs:
        m = re.search(r'([\d,]+)(?: \([\d,]+ direct, [\d,]+ indirect\))? bytes in ([\d,]+) blocks '
                      r'are (definitely|indirectly) lost', rec)
        if not m or want not in rec:
            continue
        direct = re.search(r'\(([\d,]+) direct', rec)
        lost[0] += int((direct.group(1) if direct else m.group(1)).replace(',', ''))
        lost[1] += int(m.group(2).replace(',', ''))
    return lost


def memtrace_attached(mt, prog, k, tmp):
    """Runs scenario K+1, attaches memtrace -p -a, runs scenario K, exits:
    memtrace's lost blocks and bytes (definitely + indirectly), all of them
    scenario K's (it saw no other block made)."""
    env = dict(os.environ)
    env['LEAKGEN_ATTACH'] = '1'
    out = os.path.join(tmp, 'mta-%s-%d.json' % (os.path.basename(prog), k))
    p = subprocess.Popen([prog, str(k)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, env=env)
    m = None
    try:
        if not p.stdout.readline().startswith(b'ready'):
            raise RuntimeError('attach: the program did not get ready')
        m = subprocess.Popen([mt, '-q', '-a', '-j', '-o', out, '-p', str(p.pid)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL)
        m.stdin.write(b'status\n')
        m.stdin.flush()
        if not m.stdout.readline():      # the console answers: attached
            raise RuntimeError('attach: memtrace gave no status')
        p.stdin.write(b'go\n')
        p.stdin.flush()
        p.wait(timeout=60)
        m.stdin.close()
        m.wait(timeout=60)
        with open(out) as f:
            l = json.load(f)['leaks']
        os.unlink(out)
        return [l['definitely_lost_bytes'] + l['indirectly_lost_bytes'],
                l['definitely_lost_blocks'] + l['indirectly_lost_blocks']]
    finally:
        for q in (p, m):
            if q and q.poll() is None:
                q.kill()
                q.wait()


def attach_one(mt, plain, k, tmp):
    return memcheck_phase2(plain, k), memtrace_attached(mt, plain, k, tmp)


def generate(seed, scenarios, tmp):
    src = os.path.join(tmp, 'g%d.c' % seed)
    if not os.path.exists(src):
        with open(src + '.tmp', 'w') as f:
            subprocess.run([sys.executable, os.path.join(HERE, 'gen.py'), str(seed),
                            str(scenarios)], stdout=f, check=True)
        os.rename(src + '.tmp', src)


def build(seed, scenarios, opt, tmp):
    src = os.path.join(tmp, 'g%d.c' % seed)
    plain = os.path.join(tmp, 'g%d-O%s' % (seed, opt))
    sanit = plain + '-lsan'
    for exe, extra in ((plain, []), (sanit, ['-fsanitize=leak'])):
        if not os.path.exists(exe):
            subprocess.run(['gcc', '-std=gnu11', '-g', '-O%s' % opt, '-pthread'] + extra +
                           ['-o', exe, src], check=True)
    return plain, sanit


def one(mt, plain, sanit, k, tmp):
    # The oracles' figures depend only on the program: kept next to it, so a
    # second run over the same folder (before/after a change) reruns memtrace.
    cache = os.path.join(tmp, 'oracles-%s-%d.json' % (os.path.basename(plain), k))
    if os.path.exists(cache):
        with open(cache) as f:
            vg, ls = json.load(f)
    else:
        vg = memcheck(plain, k)
        ls = lsan(sanit, k)
        with open(cache, 'w') as f:
            json.dump([vg, ls], f)
    mtr = memtrace(mt, plain, k, tmp)
    return vg, ls, mtr


def report_attach(results, secs):
    progs = hid_progs = errors = 0
    truth = [0, 0]
    seen = [0, 0]
    for (s, o, k), r in sorted(results.items()):
        if isinstance(r, Exception):
            errors += 1
            print('ERROR seed %d -O%s scenario %d: %s' % (s, o, k, str(r).splitlines()[0]))
            continue
        vg, mt = r
        progs += 1
        truth[0] += vg[0]
        truth[1] += vg[1]
        seen[0] += min(mt[0], vg[0])
        seen[1] += min(mt[1], vg[1])
        if mt[1] < vg[1]:
            hid_progs += 1
            print('HIDDEN seed %d -O%s scenario %d: memcheck %d B in %d lost, memtrace -p %d B in %d'
                  % (s, o, k, vg[0], vg[1], mt[0], mt[1]))
    print('attach: %d programs, %d errors, %.0f s' % (progs, errors, secs))
    if truth[1]:
        print('attach: memcheck finds %d lost blocks (%d B) made after the attach; memtrace -p '
              'finds %d (%d B): %d blocks (%.1f%%) hidden, in %d programs' %
              (truth[1], truth[0], seen[1], seen[0], truth[1] - seen[1],
               100.0 * (truth[1] - seen[1]) / truth[1], hid_progs))
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--memtrace', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--seeds', default='1-4')
    ap.add_argument('--scenarios', type=int, default=25)
    ap.add_argument('--opts', default='0,1,2')
    ap.add_argument('--jobs', type=int, default=2)
    ap.add_argument('--json', help='write every result here')
    ap.add_argument('--attach', action='store_true',
                    help='measure memtrace -p on programs attached mid-run')
    ap.add_argument('--min-rate', type=float, default=0.0,
                    help='fail when indirectly or possibly lost agree on fewer %% of programs')
    ap.add_argument('--min-counted', type=int, default=0,
                    help='fail when the oracles agree on fewer programs (a corpus too weak '
                         'to judge anything)')
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    lo, _, hi = a.seeds.partition('-')
    seeds = range(int(lo), int(hi or lo) + 1)
    opts = a.opts.split(',')
    t0 = time.time()
    for s in seeds:
        generate(s, a.scenarios, a.out)
    with cf.ThreadPoolExecutor(a.jobs) as ex:
        builds = {(s, o): ex.submit(build, s, a.scenarios, o, a.out) for s in seeds for o in opts}
        jobs = {}
        for (s, o), fut in builds.items():
            plain, sanit = fut.result()
            for k in range(a.scenarios):
                if a.attach:
                    jobs[(s, o, k)] = ex.submit(attach_one, a.memtrace, plain, k, a.out)
                else:
                    jobs[(s, o, k)] = ex.submit(one, a.memtrace, plain, sanit, k, a.out)
        results = {}
        for key, fut in jobs.items():
            try:
                results[key] = fut.result()
            except Exception as e:   # noqa: BLE001 (reported as a failure below)
                results[key] = e
    if a.attach:
        return report_attach(results, time.time() - t0)
    counted = disagree = failed = errors = 0
    ind_ok = pos_ok = 0
    rows = []
    for (s, o, k), r in sorted(results.items()):
        name = 'seed %d -O%s scenario %d' % (s, o, k)
        if isinstance(r, Exception):
            errors += 1
            print('ERROR %s: %s' % (name, str(r).splitlines()[0]))
            rows.append({'seed': s, 'opt': o, 'k': k, 'error': str(r)})
            continue
        vg, ls, mtr = r
        rows.append({'seed': s, 'opt': o, 'k': k, 'memcheck': vg, 'lsan': ls, 'memtrace': mtr})
        vg_lost = [vg[0] + vg[2], vg[1] + vg[3]]
        ls_lost = [ls[0] + ls[2], ls[1] + ls[3]]
        if vg_lost != ls_lost:
            disagree += 1
            print('UNCOUNTED %s: memcheck lost %d B in %d, LSan %d B in %d' %
                  (name, vg_lost[0], vg_lost[1], ls_lost[0], ls_lost[1]))
            continue
        counted += 1
        if vg[0:2] != mtr[0:2]:
            failed += 1
            print('FAIL %s: definitely lost memcheck %d B in %d, memtrace %d B in %d '
                  '(memcheck %s, memtrace %s)' % (name, vg[0], vg[1], mtr[0], mtr[1], vg, mtr))
        if vg[2:4] == mtr[2:4]:
            ind_ok += 1
        else:
            print('DIFF indirect %s: memcheck %s memtrace %s' % (name, vg, mtr))
        if vg[4:6] == mtr[4:6]:
            pos_ok += 1
        else:
            print('DIFF possible %s: memcheck %s memtrace %s' % (name, vg, mtr))
    total = len(results)
    print('corpus %d programs (%d seeds x %d -O levels x %d scenarios), %.0f s' %
          (total, len(seeds), len(opts), a.scenarios, time.time() - t0))
    print('memcheck and LSan agree on %d, disagree on %d (uncounted), errors %d' %
          (counted, disagree, errors))
    if counted:
        print('definitely lost equal on %d/%d (%.1f%%); indirectly %d/%d (%.1f%%); '
              'possibly %d/%d (%.1f%%)' % (counted - failed, counted, 100.0 * (counted - failed) / counted,
                                          ind_ok, counted, 100.0 * ind_ok / counted,
                                          pos_ok, counted, 100.0 * pos_ok / counted))
    if a.json:
        with open(a.json, 'w') as f:
            json.dump(rows, f)
    bad = failed + errors
    if counted < a.min_counted:
        print('FAIL: memcheck and LSan agree on %d programs only, fewer than %d' %
              (counted, a.min_counted))
        bad += 1
    for what, ok in (('indirectly', ind_ok), ('possibly', pos_ok)):
        if counted and 100.0 * ok / counted < a.min_rate:
            print('FAIL: %s lost equal on %.1f%% of the programs, under %.1f%%' %
                  (what, 100.0 * ok / counted, a.min_rate))
            bad += 1
    print('%d passed, %d failed' % (counted - failed, bad))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
