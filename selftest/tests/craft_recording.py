#!/usr/bin/env python3
"""Writes a memtrace recording (target/record/record.h's format) whose
strings are hostile: markup that would run a script if a page took it for
HTML, a </script> that would end the page's script, quotes, backslashes,
terminal escapes and other control characters, a C1 CSI, U+2028 and a byte
that is not UTF-8.

    craft_recording.py OUT.mt STRINGS.json [e]

The header's program and engine are hostile; with "e", an 'E' record
(the engine taken over later) names another hostile engine.  Two stacks,
named by hostile functions, files and modules, allocate in two samples
(1 ms and 2 ms), so --at, --diff 0 0.002 and every format have them to
show.  STRINGS.json gets the strings that are valid UTF-8, as the JSON
report must give them back: {"program", "engine", "functions", "files"}."""
import json
import sys

MAGIC = b'MTREC1\r\n'
PAYLOAD = '<img src=x onerror="document.title=\'PWNED img\';console.log(\'PWNED img\')">'
SCRIPT = '</script><script>document.title="PWNED script";console.log("PWNED script")</script>'


def var(n):
    out = bytearray()
    while True:
        b = n & 0x7f
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def zz(n):
    return var((n << 1) ^ (n >> 63) if n < 0 else n << 1)


def record(tag, payload):
    return tag.encode() + var(len(payload)) + payload


def string(s):
    b = s if isinstance(s, bytes) else s.encode()
    return var(len(b)) + b


def main():
    out, strings_out = sys.argv[1], sys.argv[2]
    later_engine = len(sys.argv) > 3 and sys.argv[3] == 'e'
    program = '/tmp/' + PAYLOAD + '/prog\x1b]0;title\x07'
    engine = 'ptrace' + PAYLOAD + SCRIPT + '"\'\\\x1b[2J\x07\r\n\u2028'
    engine2 = 'agent<svg onload="document.title=\'PWNED svg\'">' + SCRIPT + '\x1b[31m\x9b'
    functions = [PAYLOAD, SCRIPT + '\x1b[31mred\x07\rcr\nnl\x7f\u2028\u0085"\'\\', 'toString',
                 'c1\xc2\x9b' + '2J']
    files = ['/src/' + PAYLOAD + '.c', '/src/\x1b[2Jfile\r.c']
    raw_strings = [f.encode() for f in functions[:3]] + [b'c1\xc2\x9b2J\xffbad'] + \
        [f.encode() for f in files] + [b'/lib/' + PAYLOAD.encode() + b'\x1b.so', b'malloc']
    data = bytearray(MAGIC)
    data += record('H', var(1) + var(1) + var(4242) + var(16) + string(program) + string(engine))
    if later_engine:
        data += record('E', engine2.encode())
    for s in raw_strings:
        data += record('T', s)
    mod, malloc_fn = 7, 8
    # frames: pc, module, offset, function, file, line, flags
    frames = [(0x1000, mod, 0x10, malloc_fn, 0, 0, 0),
              (0x2000, mod, 0x20, 1, 5, 11, 0),      # PAYLOAD in PAYLOAD.c
              (0x3000, mod, 0x30, 2, 6, 12, 0),      # SCRIPT + controls in the control file
              (0x4000, mod, 0x40, 3, 5, 13, 1),      # toString, inlined
              (0x5000, mod, 0x50, 4, 0, 0, 0),       # C1 and a bad byte, no file
              (0x6000, mod, 0x60, 0, 0, 0, 0)]       # nothing but the module
    for f in frames:
        data += record('F', b''.join(var(x) for x in f))
    data += record('K', var(1) + var(4) + var(1) + var(2) + var(4) + var(6))
    data += record('K', var(2) + var(4) + var(1) + var(3) + var(5) + var(6))

    def sample(dt, totals, stack_deltas):
        p = var(dt) + var(10) + b''.join(zz(t) for t in totals) + var(len(stack_deltas))
        prev = 0
        for sid, d in stack_deltas:
            p += var(sid - prev) + b''.join(zz(x) for x in d)
            prev = sid
        return record('S', p)
    # totals: in use bytes, blocks, allocs, frees, bytes allocated, mapped
    # bytes, regions, maps recorded, replaced, temporary; per stack: bytes
    # in use, blocks in use, allocs, bytes allocated, temporary
    data += sample(1000, [100, 1, 1, 0, 100, 0, 0, 0, 0, 0], [(1, [100, 1, 1, 100, 0])])
    data += record('P', var(100) + var(1) + var(1000) + var(1) + var(1) + zz(100) + zz(1))
    data += sample(1000, [200, 1, 1, 0, 200, 0, 0, 0, 0, 0], [(2, [200, 1, 1, 200, 0])])
    data += record('P', var(300) + var(2) + var(2000) + var(1) + var(2) + zz(200) + zz(1))
    open(out, 'wb').write(data)
    json.dump({'program': program, 'engine': engine2 if later_engine else engine,
               'functions': functions[:3], 'files': files}, open(strings_out, 'w'))


if __name__ == '__main__':
    main()
