/* vfork children that are not followed (issue 29): one calls exit() (which
 * POSIX allows only _exit, but programs do it), running its exit handlers,
 * which allocate, in its parent's memory; one execs.  The parent prints
 * each child's wait status: the untraced run's output is the oracle. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void child_handler(void)
{
    char *p = malloc(32);
    strcpy(p, "child: exit handler\n");
    if (write(1, p, strlen(p)) < 0)
        _exit(3);
    free(p);
}

int main(void)
{
    void *keep = malloc(100);
    fflush(stdout);
    pid_t pid = vfork();
    if (pid == 0) {
        atexit(child_handler);
        char *volatile q = malloc(10);
        (void)q;
        exit(7);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        return 1;
    printf("exit child: status %#x\n", st);
    fflush(stdout);
    pid = vfork();
    if (pid == 0) {
        execl("/bin/echo", "echo", "exec child: ran", (char *)NULL);
        _exit(127);
    }
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        return 1;
    printf("exec child: status %#x\n", st);
    free(keep);
    return 0;
}
