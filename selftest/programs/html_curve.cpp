// A heap that moves over time, with C++ names full of '<', '>' and '&',
// for the HTML report's test (selftest/tests/report_html_chromium.sh):
//
//   ramp      8 steps 40 ms apart, each Pool<int, 1024>::grab() x 4
//             (4 x 4096 bytes): 131072 bytes in 32 blocks, two blocks a
//             step through Loader::read_chunk(int), two through
//             Index<std::pair<int, int> >::grow()
//   peak      Pool<char, 65536>::grab() x 4 (262144 bytes), freed at once:
//             the peak is the ramp + 262144 (+ what libstdc++ holds)
//   fall      half the ramp freed (16 blocks), 40 ms apart in 4 steps
//   leak      Bits::operator&(Bits const&) const allocates 3 x 100 bytes
//             that nothing points to any more (definitely lost under -a)
//
// The rest of the ramp stays in use at exit.  No stdio: its buffer would be
// one more allocation.
#include <cstdint>
#include <ctime>
#include <utility>

static void pause_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

template <typename T, int N> struct Pool {
    static __attribute__((noinline)) T *grab() { return new T[N]; }
};

struct Loader {
    static __attribute__((noinline)) int *read_chunk(int) { return Pool<int, 1024>::grab(); }
};

template <typename K> struct Index {
    static __attribute__((noinline)) int *grow() { return Pool<int, 1024>::grab(); }
};

struct Bits {
    std::uintptr_t v;
    __attribute__((noinline)) Bits operator&(const Bits &o) const
    {
        // A block whose address is dropped (only a bit of it is kept).
        char *p = new char[100];
        p[0] = 1;
        return Bits{(reinterpret_cast<std::uintptr_t>(p) ^ o.v) & 1u};
    }
};

static int *volatile kept[32];
static char *volatile sink;

int main()
{
    for (int step = 0; step < 8; step++) {
        for (int i = 0; i < 4; i++)
            kept[step * 4 + i] = i < 2 ? Loader::read_chunk(step) : Index<std::pair<int, int> >::grow();
        pause_ms(40);
    }
    char *big[4];
    for (int i = 0; i < 4; i++)
        big[i] = Pool<char, 65536>::grab();
    sink = big[3];
    for (int i = 0; i < 4; i++)
        delete[] big[i];
    pause_ms(40);
    for (int step = 0; step < 4; step++) {
        for (int i = 0; i < 4; i++) {
            delete[] kept[16 + step * 4 + i];
            kept[16 + step * 4 + i] = nullptr;
        }
        pause_ms(40);
    }
    Bits a{5}, b{3};
    std::uintptr_t acc = 0;
    for (int i = 0; i < 3; i++)
        acc += (a & b).v;
    return static_cast<int>(acc & 0);
}
