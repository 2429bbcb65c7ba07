/* Sampling by bytes (--sample BYTES), as heapprofd, tcmalloc and jemalloc
 * sample: the bytes allocated form one stream per thread, and points fall
 * on it as a Poisson process of mean spacing BYTES; an allocation is
 * sampled (its stack kept) when a point falls inside its bytes.  Each
 * thread keeps the bytes left until its next point, a fresh exponential
 * draw after every sample (memorylessness makes the draw's remainder after
 * an unsampled allocation exponential again).  A block of s bytes is then
 * sampled with probability 1 - exp(-s/BYTES).
 *
 * Included by the freestanding agent too (target/agent/payload/): only
 * integer arithmetic (the agent touches no FPU registers) and no division
 * (i386 has no libgcc there). */
#ifndef MT_HEAP_SAMPLE_DRAW_H
#define MT_HEAP_SAMPLE_DRAW_H

#include <stdint.h>

/* Largest --sample mean: keeps the fixed-point draw inside 64 bits. */
#define SAMPLE_BYTES_MAX (1ull << 40)

/* The one frame of the pseudo-stack that holds the blocks whose
 * allocation was not sampled: not a pc any process can have (not
 * canonical on x86_64 and aarch64, above 4 GiB on 32-bit CPUs); the
 * reports name it SAMPLE_UNSAMPLED_NAME. */
#define SAMPLE_UNSAMPLED_PC 0x7ffffffffffff5a0ull
#define SAMPLE_UNSAMPLED_NAME "[not sampled: no stack kept under --sample]"

/* One thread's sampler. */
struct sample_state {
    uint64_t rng;   /* splitmix64 state */
    uint64_t left;  /* bytes until the next sample point */
    uint64_t mean;  /* the mean left was drawn with (0: not drawn yet) */
};

/* The seed of a thread's stream: the session's seed and the thread's own
 * number (a slot, a thread id), mixed so that near numbers give far
 * streams. */
static inline uint64_t sample_seed_for(uint64_t seed, uint64_t who)
{
    uint64_t z = seed ^ (who * 0x9e3779b97f4a7c15ull) ^ 0x5851f42d4c957f2dull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    return z ^ (z >> 31);
}

static inline uint64_t sample_next_u64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* -log2(u / 2^64) in 16.16 fixed point, for u != 0: the integer part from
 * the leading zeros, the fraction bit by bit by squaring the mantissa. */
static inline uint64_t sample_neglog2_q16(uint64_t u)
{
    unsigned z = (unsigned)__builtin_clzll(u);
    uint64_t x = (u << z) >> 32; /* the mantissa in [1, 2), 31 fraction bits */
    uint32_t frac = 0;
    for (int i = 0; i < 16; i++) {
        x = (x * x) >> 31;
        frac <<= 1;
        if (x >= (1ull << 32)) {
            x >>= 1;
            frac |= 1;
        }
    }
    return ((uint64_t)(z + 1) << 16) - frac;
}

/* An exponential draw of mean `mean` bytes (mean <= SAMPLE_BYTES_MAX). */
static inline uint64_t sample_draw(uint64_t *rng, uint64_t mean)
{
    uint64_t u = sample_next_u64(rng) | 1;
    uint64_t t = (mean * sample_neglog2_q16(u)) >> 16; /* mean * -log2(u): < 2^47 */
    return (t * 45426u) >> 16;                          /* times ln 2 (0.693147 in 16.16) */
}

/* Is an allocation of size bytes sampled?  Advances the thread's stream. */
static inline int sample_take(struct sample_state *st, uint64_t mean, uint64_t size)
{
    if (st->mean != mean) {
        st->mean = mean;
        st->left = sample_draw(&st->rng, mean);
    }
    if (size < st->left) {
        st->left -= size;
        return 0;
    }
    st->left = sample_draw(&st->rng, mean);
    return 1;
}

#endif
