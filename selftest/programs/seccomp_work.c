/* A process under a seccomp filter, for engine_seccomp.sh: the filter
 * refuses memfd_create (EPERM; every other system call is allowed), so an
 * agent cannot be injected into it.  It prints "ready", waits for SIGUSR1
 * (sent once a tracer is attached), then makes exactly 1000 allocations of
 * 100 bytes, frees 990 of them and exits: 10 blocks, 1000 bytes in use.
 * It prints its checksum last. */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define OUR_ARCH AUDIT_ARCH_X86_64
#elif defined(__i386__)
#define OUR_ARCH AUDIT_ARCH_I386
#elif defined(__aarch64__)
#define OUR_ARCH AUDIT_ARCH_AARCH64
#elif defined(__arm__)
#define OUR_ARCH AUDIT_ARCH_ARM
#endif

static volatile sig_atomic_t go;
static void on_usr1(int sig) { (void)sig; go = 1; }

int main(void)
{
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, OUR_ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_memfd_create, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {.len = sizeof(code) / sizeof(code[0]), .filter = code};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
        perror("seccomp");
        return 2;
    }
    signal(SIGUSR1, on_usr1);
    printf("ready\n");
    fflush(stdout);
    for (int i = 0; i < 3000 && !go; i++)
        usleep(10000);
    if (!go) {
        fprintf(stderr, "no SIGUSR1\n");
        return 3;
    }
    static char *p[1000];
    unsigned long sum = 0;
    for (int i = 0; i < 1000; i++) {
        p[i] = malloc(100);
        memset(p[i], i & 0xff, 100);
        sum += (unsigned char)p[i][50];
    }
    for (int i = 10; i < 1000; i++)
        free(p[i]);
    printf("sum %lu\n", sum);
    fflush(stdout);
    exit(0);
}
