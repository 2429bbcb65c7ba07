#!/usr/bin/env bash
# What memtrace prints, shown in full: the text report of a small program
# and the console's answer to `report` while it runs, each compared with
# the expected text written out below (as elfutils' run-addr2line-i-test.sh
# does).  The program brings its own malloc, so every frame is its own and
# the text does not change with the C library's version; -d 4 keeps the
# stacks above main.  Only the peak's time, the engine's name and the C
# library's path vary and are masked.  The allocators line names both
# modules that define malloc: the program's, which took every call
# (10 + 1 mallocs, 4 frees), and libc's, which took none.  Run under both engines (selftest/run-tests.sh's TWICE): the
# two must print the same text.  The figures agree with the program's
# arithmetic: 10 names of 32 bytes, 4 freed, then one block of 1000.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
cd "$MT_TMP"

cat > golden.c <<'SRC'
#include <stddef.h>
#include <unistd.h>
/* An allocator of the program's own: every frame is the program's. */
static char arena[1 << 16];
static size_t used;
__attribute__((noinline)) void *malloc(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (used + n > sizeof(arena))
        return NULL;
    used += n;
    return arena + used - n;
}
__attribute__((noinline)) void free(void *p) { (void)p; }
__attribute__((noinline)) void *calloc(size_t a, size_t b) { return malloc(a * b); }
__attribute__((noinline)) void *realloc(void *p, size_t n) { (void)p; return malloc(n); }
__attribute__((noinline)) static char *make_name(int i) { char *s = malloc(32); s[0] = (char)('a' + i); return s; }
__attribute__((noinline)) static void fill_table(void **t, int n) { for (int i = 0; i < n; i++) t[i] = make_name(i); }
__attribute__((noinline)) static void *grab(size_t n) { return malloc(n); }
__attribute__((noinline)) static void *keep_big(void) { return grab(1000); }
__attribute__((noinline)) static void run(void)
{
    void *t[10];
    fill_table(t, 10);
    for (int i = 0; i < 4; i++)
        free(t[i]);
    keep_big();
}
int main(int argc, char **argv)
{
    run();
    /* With a file named: wait until it exists (the console's turn). */
    while (argc > 1 && access(argv[1], F_OK) != 0)
        usleep(10000);
    return 0;
}
SRC
gcc ${MT_TARGET_CFLAGS:-} -g -O0 -fno-builtin -o golden golden.c || fail "cannot build golden.c"

# Masks what may differ from run to run, and the scratch directory.
masked() {
    sed -E -e "s|$MT_TMP/|DIR/|g" -e 's/^memtrace engine: (agent|ptrace)$/memtrace engine: E/' \
        -e 's|/[^ ]*/libc\.so\.6 |LIBC |g' \
        -e 's/^(    peak heap: [0-9]+ bytes in [0-9]+ blocks at )[0-9]+\.[0-9]+ s$/\1T s/'
}

cat > stacks.expected <<'TXT'
1000 bytes in 1 blocks were not free
    #0 malloc() in DIR/golden.c:7
    #1 grab() in DIR/golden.c:19
    #2 keep_big() in DIR/golden.c:20
    #3 run() in DIR/golden.c:27

192 bytes in 6 blocks were not free
    #0 malloc() in DIR/golden.c:7
    #1 make_name() in DIR/golden.c:17
    #2 fill_table() in DIR/golden.c:18
    #3 run() in DIR/golden.c:24

HEAP SUMMARY
    in use: 1192 bytes in 7 blocks
    total heap usage: 11 allocs, 4 frees, 1320 bytes allocated
TXT
{
    echo 'memtrace engine: E'
    echo 'memtrace allocators: DIR/golden (15 calls), LIBC (0 calls)'
    echo
    cat stacks.expected
    cat <<'TXT'

PEAK
    peak heap: 1192 bytes in 7 blocks at T s

1000 bytes in 1 blocks at the peak
    #0 malloc() in DIR/golden.c:7
    #1 grab() in DIR/golden.c:19
    #2 keep_big() in DIR/golden.c:20
    #3 run() in DIR/golden.c:27

192 bytes in 6 blocks at the peak
    #0 malloc() in DIR/golden.c:7
    #1 make_name() in DIR/golden.c:17
    #2 fill_table() in DIR/golden.c:18
    #3 run() in DIR/golden.c:24

TEMPORARY ALLOCATIONS
    0 of 11 allocations were freed with no other allocation or free on their thread in between
TXT
} > report.expected

"$MEMTRACE" -q -d 4 -o report.raw "$MT_TMP/golden" 2> report.err || fail "memtrace failed: $(cat report.err)"
masked < report.raw > report.txt
diff -u report.expected report.txt || fail "the text report differs from the expected text (above)"
echo "text report: as expected ($(wc -l < report.txt) lines)"

# The console, on the same program while it waits: `report` answers with
# the stacks and the summary, as the final report would have them now.
console_open console.out -q -d 4 -C "$MT_TMP/golden" "$MT_TMP/go"
trap 'touch "$MT_TMP/go"; exec 3>&-; wait "$CONSOLE_PID" 2>/dev/null' EXIT
for _ in $(seq 200); do
    console_cmd status
    grep -q 'total heap usage: 11 allocs' <<< "$CONSOLE_REPLY" && break
    sleep 0.05
done
grep -q 'total heap usage: 11 allocs' <<< "$CONSOLE_REPLY" || fail "the program never reached its wait: $CONSOLE_REPLY"
console_cmd report
printf '%s\n' "$CONSOLE_REPLY" | masked | sed -n '/^1000 bytes/,/allocated$/{p;/allocated$/q}' > console.txt
diff -u stacks.expected console.txt || fail "the console's report differs from the expected text (above)"
echo "console report: as expected"
printf 'quit\n' >&3
exec 3>&-
wait "$CONSOLE_PID" || fail "memtrace exited $? after quit"
touch "$MT_TMP/go"
trap - EXIT
