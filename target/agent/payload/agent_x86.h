/* What the x86 agents (agent_x86_64.c, agent_i386.c) share: the copy
 * and the poll, included after each defines sys3 and SYS_poll. */
#ifndef MT_AGENT_PAYLOAD_AGENT_X86_H
#define MT_AGENT_PAYLOAD_AGENT_X86_H

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
