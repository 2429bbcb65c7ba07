#!/usr/bin/env python3
"""Random leak programs for the leak-scan oracle test (selftest/leakgen).

gen.py SEED SCENARIOS > prog.c writes one C program with SCENARIOS random
heap graphs; `prog K` builds graph K and returns from main (the exit path
every checker sees).  Each graph mixes:
  - sizes from 1 byte up, odd ones included (malloc, calloc, realloc);
  - shapes: single blocks, lists, trees, cycles, random cross links, start
    and interior pointers (any offset);
  - roots: start or interior pointers in globals, in a thread's stack, in a
    thread's register (r12/x19, nowhere in memory), XOR-hidden, none;
  - random orders of allocation, with filler blocks freed at random points
    (free chunks, tcache and bins full of stale pointers), some of them
    holding pointers to the graph before they are freed.
Nothing here knows which checker will run it: the test compares them."""
import random
import sys

KEY = 0x5A5A5A5A5A5A5A5A


def sizes(rng, need_slots):
    """A block size with room for need_slots pointers (8 bytes each)."""
    lo = 8 * need_slots if need_slots else 1
    r = rng.random()
    if r < 0.55:
        s = rng.randint(1, 72)
    elif r < 0.9:
        s = rng.randint(1, 300)
    elif r < 0.97:
        s = rng.randint(300, 3000)
    else:
        s = rng.randint(3000, 40000)
    return max(s, lo)


def scenario(rng, k, out):
    nodes = []     # dict(size, slots used, alloc)
    structs = []   # list of node index lists, head first

    def new_node(slots):
        nodes.append({'size': sizes(rng, slots), 'out': [], 'alloc': rng.choice(
            ['malloc', 'malloc', 'calloc', 'realloc'])})
        return len(nodes) - 1

    def link(a, b, interior):
        """a's next free slot points to b (start or an interior offset)."""
        na = nodes[a]
        slot = len(na['out'])
        if 8 * (slot + 1) > na['size']:
            return False
        off = rng.randint(1, nodes[b]['size'] - 1) if interior and nodes[b]['size'] > 1 else 0
        na['out'].append((b, off))
        return True

    for _ in range(rng.randint(2, 7)):
        shape = rng.choice(['single', 'list', 'list', 'tree', 'cycle', 'cycle', 'mesh'])
        if shape == 'single':
            ids = [new_node(0)]
        elif shape == 'list':
            n = rng.randint(2, 8)
            ids = [new_node(1 if i < n - 1 else 0) for i in range(n)]
            for i in range(n - 1):
                link(ids[i], ids[i + 1], rng.random() < 0.1)
        elif shape == 'tree':
            n = rng.randint(3, 12)
            ids = [new_node(2) for _ in range(n)]
            for i in range(1, n):
                link(ids[(i - 1) // 2], ids[i], rng.random() < 0.1)
        elif shape == 'cycle':
            n = rng.randint(2, 6)
            ids = [new_node(1) for _ in range(n)]
            for i in range(n):
                link(ids[i], ids[(i + 1) % n], rng.random() < 0.1)
        else:
            n = rng.randint(3, 8)
            ids = [new_node(3) for _ in range(n)]
            for _ in range(n * 2):
                link(rng.choice(ids), rng.choice(ids), rng.random() < 0.3)
        structs.append(ids)
    # Cross links between structures.
    for _ in range(rng.randint(0, 3)):
        a, b = rng.randrange(len(nodes)), rng.randrange(len(nodes))
        link(a, b, rng.random() < 0.3)

    # Roots of each structure.
    roots = []     # (kind, node, offset)
    for ids in structs:
        kind = rng.choice(['global', 'global', 'interior', 'none', 'none', 'xor',
                           'stack', 'reg'])
        target = ids[0] if rng.random() < 0.8 else rng.choice(ids)
        off = 0
        if kind == 'interior' and nodes[target]['size'] > 1:
            off = rng.randint(1, nodes[target]['size'] - 1)
        roots.append((kind, target, off))

    # Order: every node allocated once, fillers in between, freed at random.
    events = [('node', i) for i in range(len(nodes))]
    nfill = rng.randint(0, 24)
    events += [('fill', j) for j in range(nfill)]
    rng.shuffle(events)
    fill_sizes = [sizes(rng, 0) for _ in range(nfill)]
    pending = []
    seq = []
    for ev in events:
        seq.append(ev)
        if ev[0] == 'fill':
            pending.append(ev[1])
        while pending and rng.random() < 0.4:
            seq.append(('free', pending.pop(rng.randrange(len(pending)))))
    late = [j for j in pending if rng.random() < 0.7]

    w = out.append
    w('static NOINLINE void scenario_%d(void)\n{\n' % k)
    w('    void *n[%d] = {0};\n' % max(len(nodes), 1))
    w('    void *f[%d] = {0};\n    (void)f;\n' % max(nfill, 1))
    for ev in seq:
        if ev[0] == 'node':
            i = ev[1]
            nd = nodes[i]
            if nd['alloc'] == 'calloc':
                w('    n[%d] = mk_calloc(%d);\n' % (i, nd['size']))
            elif nd['alloc'] == 'realloc':
                w('    n[%d] = mk_realloc(%d, %d);\n' % (i, rng.randint(1, 64), nd['size']))
            else:
                w('    n[%d] = mk_malloc(%d);\n' % (i, nd['size']))
        elif ev[0] == 'fill':
            j = ev[1]
            w('    f[%d] = mk_malloc(%d);\n' % (j, fill_sizes[j]))
            if fill_sizes[j] >= 8 and nodes and rng.random() < 0.5:
                # A stale pointer to some node (allocated or not yet: the
                # slot holds whatever n[] holds, zero-initialised below).
                w('    stale(f[%d], %d, n[%d]);\n' % (j, fill_sizes[j], rng.randrange(len(nodes))))
        else:
            w('    free(f[%d]);\n' % ev[1])
    for i, nd in enumerate(nodes):
        for slot, (b, off) in enumerate(nd['out']):
            w('    setp(n[%d], %d, (char *)n[%d] + %d);\n' % (i, slot * 8, b, off))
    gi = 0
    for kind, t, off in roots:
        if kind == 'global':
            w('    g_root[%d] = n[%d];\n' % (gi, t))
            gi += 1
        elif kind == 'interior':
            w('    g_root[%d] = (char *)n[%d] + %d;\n' % (gi, t, off))
            gi += 1
        elif kind == 'xor':
            w('    g_hidden[%d] = (uintptr_t)n[%d] ^ KEY;\n' % (gi, t))
            gi += 1
        elif kind == 'stack':
            w('    hold_on_stack(n[%d]);\n' % t)
        elif kind == 'reg':
            w('    hold_in_register(n[%d]);\n' % t)
    for j in late:
        w('    free(f[%d]);\n' % j)
    if rng.random() < 0.5:
        # Half the scenarios clear their array of pointers before they
        # return; the others leave it as stale words in a dead frame.
        w('    scrub(n, sizeof(n));\n    scrub(f, sizeof(f));\n')
    w('}\n\n')


PRELUDE = r'''/* Generated by selftest/leakgen/gen.py: do not edit. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define KEY ((uintptr_t)0x5A5A5A5A5A5A5A5Aull)

void *volatile g_root[64];
volatile uintptr_t g_hidden[64];
static volatile int g_ready;

static NOINLINE void *mk_malloc(size_t n)
{
    void *p = malloc(n);
    if (!p)
        abort();
    memset(p, 0, n);
    return p;
}

static NOINLINE void *mk_calloc(size_t n)
{
    void *p = calloc(1, n);
    if (!p)
        abort();
    return p;
}

static NOINLINE void *mk_realloc(size_t first, size_t n)
{
    void *p = malloc(first);
    if (!p)
        abort();
    p = realloc(p, n);
    if (!p)
        abort();
    memset(p, 0, n);
    return p;
}

static NOINLINE void setp(void *blk, size_t off, void *v)
{
    memcpy((char *)blk + off, &v, sizeof(v));
}

/* Fills a block about to be freed with copies of one pointer. */
static NOINLINE void stale(void *blk, size_t size, void *v)
{
    for (size_t off = 0; off + sizeof(v) <= size; off += sizeof(v))
        memcpy((char *)blk + off, &v, sizeof(v));
}

/* The scenario's own array of pointers goes, as a program's locals do
 * when they are overwritten. */
static NOINLINE void scrub(void *p, size_t n)
{
    memset(p, 0, n);
    __asm__ volatile("" ::"r"(p) : "memory");
}

static void wait_ready(int want)
{
    while (__atomic_load_n(&g_ready, __ATOMIC_ACQUIRE) < want)
        sched_yield();
}

static int g_threads;

/* A thread whose stack holds the pointer (the argument is XOR-hidden, so
 * the thread descriptor does not). */
static void *stack_holder(void *arg)
{
    void *volatile keep = (void *)((uintptr_t)arg ^ KEY);
    __atomic_add_fetch(&g_ready, 1, __ATOMIC_RELEASE);
    for (;;)
        pause();
    return keep;
}

/* A thread whose register alone holds the pointer. */
static void *reg_holder(void *arg)
{
#if defined(__x86_64__)
    uintptr_t x = (uintptr_t)arg;
    __asm__ volatile("xor %1, %0\n\t"
                     "mov %0, %%r12\n\t"
                     "xor %0, %0\n\t"
                     "lock addl $1, %2\n\t"
                     "1: mov $34, %%eax\n\t"
                     "syscall\n\t"
                     "jmp 1b\n\t"
                     : "+r"(x)
                     : "r"(KEY), "m"(g_ready)
                     : "r12", "rax", "rcx", "r11", "memory");
#else
    void *volatile keep = (void *)((uintptr_t)arg ^ KEY);
    __atomic_add_fetch(&g_ready, 1, __ATOMIC_RELEASE);
    for (;;)
        pause();
    return keep;
#endif
    return NULL;
}

static void spawn(void *(*fn)(void *), void *p)
{
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 65536);
    if (pthread_create(&t, &a, fn, (void *)((uintptr_t)p ^ KEY)))
        abort();
    pthread_attr_destroy(&a);
    wait_ready(++g_threads);
}

static NOINLINE void hold_on_stack(void *p) { spawn(stack_holder, p); }
static NOINLINE void hold_in_register(void *p) { spawn(reg_holder, p); }

'''


def main():
    seed = int(sys.argv[1])
    count = int(sys.argv[2])
    rng = random.Random(seed)
    out = [PRELUDE]
    for k in range(count):
        scenario(rng, k, out)
    out.append('typedef void (*scenario_fn)(void);\n')
    out.append('static scenario_fn const scenarios[] = {%s};\n\n' %
               ', '.join('scenario_%d' % k for k in range(count)))
    # LEAKGEN_ATTACH set: another scenario runs first (blocks a tracer that
    # attaches later never sees), then "ready" and a line on stdin before
    # scenario K runs (selftest/leakgen/oracle.py --attach).
    out.append('int main(int argc, char **argv)\n{\n'
               '    int k = argc > 1 ? atoi(argv[1]) : 0;\n'
               '    if (k < 0 || k >= %d)\n        return 2;\n'
               '    if (getenv("LEAKGEN_ATTACH")) {\n'
               '        char line[16];\n'
               '        scenarios[(k + 1) %% %d]();\n'
               '        if (write(1, "ready\\n", 6) != 6 || read(0, line, sizeof(line)) <= 0)\n'
               '            return 3;\n'
               '    }\n'
               '    scenarios[k]();\n    return 0;\n}\n' % (count, count))
    sys.stdout.write(''.join(out))


if __name__ == '__main__':
    main()
