# gdb's count of a program's heap calls: the oracle of a run in the
# program's own, native layout (corpus_compilers.sh).  Sourced by
#   gdb -batch -nx -ex 'set pagination off' -x gdb_heap_count.py --args PROG...
# it breaks on the entry of every allocation function memtrace intercepts
# (libc's and the C++ operators, in whichever module defines them), counts
# valgrind's way (tracing.md, "Counting rules": only the outermost call,
# realloc as a free and an alloc, failed calls nothing), and prints at the
# program's exit
#   gdb_heap_count: ALLOCS FREES BYTES IN_USE_BYTES IN_USE_BLOCKS
# gdb disables address randomization itself (the native layout of setarch
# -R).  x86_64 only: arguments and results are read from its registers.
import os
import subprocess

import gdb

# MT_GDB_HEAP_LOG=FILE: each counted allocation's size, in order (to align
# a run with another call by call).
log = open(os.environ['MT_GDB_HEAP_LOG'], 'w') if os.environ.get('MT_GDB_HEAP_LOG') else None

live = {}          # block address -> size
totals = {'allocs': 0, 'frees': 0, 'bytes': 0}
depth = {}         # thread -> (stack pointer after its return, its booking)
pending = []       # return addresses that have no breakpoint yet
returns = {}       # return address -> its breakpoint
skip_free = {}     # thread -> the free(p) a counted delete(p) makes


def reg(name):
    return int(gdb.parse_and_eval('$' + name)) & 0xffffffffffffffff


def tid():
    return gdb.selected_thread().ptid[1]


def book_free(p):
    if p and p in live:
        del live[p]
        totals['frees'] += 1


def book_alloc(p, size):
    if p and log:
        log.write('%d\n' % size)
    if p:
        live[p] = size
        totals['allocs'] += 1
        totals['bytes'] += size


def book_realloc(r, p, n):
    """realloc(p, n) returning r, as valgrind books it: from NULL an
    allocation, to size 0 a release, else a release and an allocation
    when it succeeded."""
    if p == 0:
        book_alloc(r, n)
    elif n == 0:
        book_free(p)
    elif r:
        book_free(p)
        book_alloc(r, n)


class Return(gdb.Breakpoint):
    """A counted call's return address: its result, then its booking."""

    def __init__(self, addr):
        super().__init__('*%d' % addr, internal=True)

    def stop(self):
        t = tid()
        call = depth.get(t)
        if call and call[0] == reg('rsp'):
            depth[t] = None
            call[1](reg('rax'))
        return False


class Entry(gdb.Breakpoint):
    def __init__(self, name, kind):
        super().__init__(name, internal=True)
        self.kind = kind

    def stop(self):
        t = tid()
        if depth.get(t):
            return False
        k = self.kind
        a0, a1 = reg('rdi'), reg('rsi')
        if k in ('free', 'delete'):
            if k == 'free' and skip_free.get(t) == a0:
                skip_free[t] = None
                return False
            book_free(a0)
            if k == 'delete':
                skip_free[t] = a0
            return False
        if k == 'malloc':
            book = lambda r, n=a0: book_alloc(r, n)
        elif k == 'calloc':
            book = lambda r, n=(a0 * a1) & 0xffffffffffffffff: book_alloc(r, n)
        elif k == 'realloc':
            book = lambda r, p=a0, n=a1: book_realloc(r, p, n)
        elif k == 'reallocarray':
            book = lambda r, p=a0, n=(a1 * reg('rdx')) & 0xffffffffffffffff: book_realloc(r, p, n)
        elif k == 'memalign':   # memalign(align, n), aligned_alloc(align, n)
            book = lambda r, n=a1: book_alloc(r, n)
        elif k == 'valloc':
            book = lambda r, n=a0: book_alloc(r, n)
        elif k == 'pvalloc':
            book = lambda r, n=max(4096, (a0 + 4095) & ~4095): book_alloc(r, n)
        elif k == 'posix_memalign':
            def book(r, slot=a0, n=reg('rdx')):
                if r == 0:
                    p = int(gdb.selected_inferior().read_memory(slot, 8).cast('Q')[0])
                    book_alloc(p, n)
        else:
            return False
        ret = int(gdb.selected_inferior().read_memory(reg('rsp'), 8).cast('Q')[0])
        depth[t] = (reg('rsp') + 8, book)
        if ret in returns:
            return False
        pending.append(ret)
        return True


FUNCTIONS = [
    ('malloc', 'malloc'), ('calloc', 'calloc'), ('realloc', 'realloc'),
    ('reallocarray', 'reallocarray'), ('free', 'free'),
    ('posix_memalign', 'posix_memalign'), ('aligned_alloc', 'memalign'),
    ('memalign', 'memalign'), ('valloc', 'valloc'), ('pvalloc', 'pvalloc'),
    # operator new and new[]: plain, nothrow, aligned, aligned nothrow
    ('_Znwm', 'malloc'), ('_Znam', 'malloc'),
    ('_ZnwmRKSt9nothrow_t', 'malloc'), ('_ZnamRKSt9nothrow_t', 'malloc'),
    ('_ZnwmSt11align_val_t', 'malloc'), ('_ZnamSt11align_val_t', 'malloc'),
    ('_ZnwmSt11align_val_tRKSt9nothrow_t', 'malloc'),
    ('_ZnamSt11align_val_tRKSt9nothrow_t', 'malloc'),
    # operator delete and delete[]: plain, sized, aligned, nothrow
    ('_ZdlPv', 'delete'), ('_ZdaPv', 'delete'), ('_ZdlPvm', 'delete'), ('_ZdaPvm', 'delete'),
    ('_ZdlPvSt11align_val_t', 'delete'), ('_ZdaPvSt11align_val_t', 'delete'),
    ('_ZdlPvmSt11align_val_t', 'delete'), ('_ZdaPvmSt11align_val_t', 'delete'),
    ('_ZdlPvRKSt9nothrow_t', 'delete'), ('_ZdaPvRKSt9nothrow_t', 'delete'),
]


KINDS = dict(FUNCTIONS)
armed = set()      # files whose functions have their breakpoints
symbols = {}       # file -> [(link address, name)] of the functions above


def file_functions(path):
    """The functions of FUNCTIONS a file defines, from its dynamic symbols."""
    if path not in symbols:
        out = subprocess.run(['nm', '-D', '--defined-only', path], capture_output=True,
                             text=True).stdout
        found = []
        for line in out.splitlines():
            f = line.split()
            if len(f) == 3 and f[1] in 'TWi':
                name = f[2].split('@')[0]
                if name in KINDS:
                    found.append((int(f[0], 16), name))
        symbols[path] = found
    return symbols[path]


def arm():
    """Breakpoints on the exact entry (no prologue skipped: the arguments
    and the return address are read there) of each function of FUNCTIONS
    in every file the process has mapped, the dynamic linker's aside (its
    own minimal malloc).  Called at each stop: the dynamic linker stops
    gdb (stop-on-solib-events) after mapping libraries, before running
    their constructors."""
    pid = gdb.selected_inferior().pid
    if not pid:
        return
    bases = {}
    with open('/proc/%d/maps' % pid) as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) == 6 and parts[5].startswith('/') and int(parts[2], 16) == 0:
                path = parts[5].strip()
                bases.setdefault(path, int(parts[0].split('-')[0], 16))
    for path, base in bases.items():
        if path in armed or 'ld-linux' in path:
            continue
        armed.add(path)
        try:
            with open(path, 'rb') as elf:
                head = elf.read(18)
        except OSError:
            continue
        if head[:4] != b'\x7fELF':
            continue
        bias = 0 if head[16] == 2 else base   # ET_EXEC: linked where it runs
        for addr, name in file_functions(path):
            Entry('*%d' % (bias + addr), KINDS[name])


gdb.execute('set confirm off')
gdb.execute('unset environment LINES')
gdb.execute('unset environment COLUMNS')
# No shell between gdb and the program: a shell would add PWD (cc1's
# getpwd() mallocs a getcwd() buffer without it), SHLVL and _.
gdb.execute('set startup-with-shell off')
gdb.execute('set stop-on-solib-events 1')
# A counted call from a call site not seen before stops, for a breakpoint
# at its return address; there, the booking of its result (nested calls
# it makes are not counted: depth).
gdb.execute('starti', to_string=True)
while gdb.selected_inferior().pid:
    arm()
    while pending:
        ret = pending.pop()
        if ret not in returns:
            returns[ret] = Return(ret)
    gdb.execute('continue', to_string=True)
if log:
    log.close()
print('gdb_heap_count: %d %d %d %d %d' % (totals['allocs'], totals['frees'], totals['bytes'],
                                          sum(live.values()), len(live)))
