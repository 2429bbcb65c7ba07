/* What the x86 agents (agent_x86_64.c, agent_i386.c) share: the clock,
 * the copy and the poll, included after each defines sys3 and SYS_poll. */
#ifndef MT_AGENT_PAYLOAD_AGENT_X86_H
#define MT_AGENT_PAYLOAD_AGENT_X86_H

/* Time stamps that order calls across threads: an allocation's after the
 * function returned, a release's before it ran (the invariant TSC is the
 * same on every CPU).  The lfence before: the stamp is read after every
 * earlier load is done (the one that found the block free, or that got the
 * pointer passed to free).  None after: rdtsc retires before any later
 * store, and a store becomes visible only after it retires, so nothing the
 * call does later is seen by another thread before the stamp was taken. */
static inline uint64_t now(void)
{
    uint32_t lo, hi;
    __asm__ volatile("lfence\n\trdtsc" : "=a"(lo), "=d"(hi)::"memory");
    return ((uint64_t)hi << 32) | lo;
}

static inline void copy(void *dst, const void *src, unsigned long n)
{
    __asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n)::"memory");
}

/* Is fd readable now (poll, no wait)? */
static int fd_readable(int fd)
{
    struct {
        int fd;
        short events, revents;
    } p = {fd, 1 /* POLLIN */, 0};
    return sys3(SYS_poll, (long)&p, 1, 0) == 1 && p.revents;
}

#endif
