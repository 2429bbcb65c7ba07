// A fork while an intercepted call is open on the forking thread's stack
// (proc_fork_open.sh): operator new[] fails for want of address space, and
// its new_handler, running inside operator new[], forks, then gives back a
// reserve so that operator new[] succeeds on its retry.  Parent and child
// both return from that same operator new[] frame: a tracer that displaced
// its return address must undo it (child let go) or know its return stubs
// in the child (child followed).  Each process prints a checksum line and
// the child's exit status is the parent's to report.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static void *reserve;
static pid_t child = -1;

static void give_back()
{
    if (child < 0)
        child = fork();
    std::free(reserve);
    reserve = nullptr;
    std::set_new_handler(nullptr);
}

static unsigned long work(const char *who)
{
    unsigned long sum = 0;
    for (int i = 0; i < 20; i++) {
        char *p = new char[32 + i];
        std::memset(p, i, 32 + i);
        sum += (unsigned char)p[i] + (unsigned long)std::strlen(who);
        delete[] p;
    }
    return sum;
}

static long vm_bytes()
{
    FILE *f = std::fopen("/proc/self/statm", "r");
    long pages = 0;
    if (!f || std::fscanf(f, "%ld", &pages) != 1)
        std::exit(2);
    std::fclose(f);
    return pages * sysconf(_SC_PAGESIZE);
}

int main()
{
    setvbuf(stdout, nullptr, _IONBF, 0);
    const size_t big = 64u << 20, want = 48u << 20;
    reserve = std::malloc(big);
    if (!reserve)
        return 2;
    std::memset(reserve, 1, 4096);
    // Room for what runs now, not for a second big block beside the reserve.
    struct rlimit lim;
    lim.rlim_cur = lim.rlim_max = (rlim_t)vm_bytes() + (16u << 20);
    if (setrlimit(RLIMIT_AS, &lim) < 0)
        return 2;
    std::set_new_handler(give_back);
    char *p = new char[want];
    std::memset(p, 2, 4096);
    const char *who = child == 0 ? "child" : "parent";
    unsigned long sum = work(who) + (unsigned char)p[100];
    delete[] p;
    std::printf("%s: %lu\n", who, sum);
    if (child == 0)
        return 7;
    int status = 0;
    if (child < 0 || waitpid(child, &status, 0) != child)
        return 3;
    std::printf("child exit: %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    return 0;
}
