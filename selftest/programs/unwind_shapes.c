/* Function shapes whose CFI differs: leaf, frame pointer, variable-size
 * frames, many callee-saved registers, recursion, early returns.  No
 * headers, so the same file also compiles freestanding for other CPUs
 * (selftest/tests/unwind_readelf.sh cross-compiles it with clang and lld
 * and checks the CFI tables against readelf). */
volatile long shapes_sink;

__attribute__((noinline)) long shapes_leaf(long a) { return a * 3 + 1; }

__attribute__((noinline)) long shapes_vla(int n)
{
    volatile char buf[n + 1];
    for (int i = 0; i <= n; i++)
        buf[i] = (char)i;
    return buf[n / 2] + shapes_leaf(n);
}

__attribute__((noinline)) long shapes_saved(long a, long b, long c, long d)
{
    long x[8];
    for (int i = 0; i < 8; i++)
        x[i] = shapes_leaf(a + i) ^ shapes_leaf(b - i);
    long s = 0;
    for (int i = 0; i < 8; i++)
        s += x[i] * (c | d) + shapes_vla((int)(i & 7));
    return s;
}

__attribute__((noinline)) long shapes_recurse(int depth)
{
    if (depth <= 0)
        return shapes_saved(depth, 2, 3, 4);
    if (depth == 3)
        shapes_sink = depth;
    return shapes_recurse(depth - 1) + depth;
}

int main(void)
{
    shapes_sink = shapes_recurse(5);
    return 0;
}
