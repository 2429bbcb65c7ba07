/* cgroup_mem_parse on trees this test writes (a host may have no cgroup v2
 * memory controller to try it on): the limit is the smallest memory.max
 * on the way up ("max" is none), the events are memory.events' high and
 * oom summed over the way up (not max, low or oom_kill); without v2's
 * files, v1's memory.limit_in_bytes (its "no limit" figure ignored), and
 * no events; a path with ".." or no memory line is refused. */
#include "target/heap/cgroup_mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "selftest/unit/test.h"

static char root[64];

static void put(const char *rel, const char *text)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL, "%s", path);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void dir(const char *rel)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    CHECK(mkdir(path, 0700) == 0, "%s", path);
}

int main(void)
{
    snprintf(root, sizeof(root), "/tmp/test_cgroup_mem.XXXXXX");
    CHECK(mkdtemp(root) != NULL);
    dir("v2");
    dir("v2/a");
    dir("v2/a/b");
    put("v2/a/memory.max", "50331648\n");
    put("v2/a/memory.events", "low 0\nhigh 2\nmax 9\noom 0\noom_kill 0\n");
    put("v2/a/b/memory.max", "max\n");
    put("v2/a/b/memory.events", "low 4\nhigh 3\nmax 7\noom 1\noom_kill 1\noom_group_kill 0\n");
    dir("v1");
    dir("v1/x");
    put("v1/memory.limit_in_bytes", "9223372036854771712\n");
    put("v1/x/memory.limit_in_bytes", "33554432\n");
    char v2[128], v1[128];
    snprintf(v2, sizeof(v2), "%s/v2", root);
    snprintf(v1, sizeof(v1), "%s/v1", root);

    struct cgroup_mem m;
    CHECK(cgroup_mem_parse("4:memory:/x\n0::/a/b\n", v2, v1, &m) == 0);
    CHECK(!m.v1 && m.limit == 50331648 && m.events == 6 && !strcmp(m.path, "/a/b"),
          "v1 %d limit %llu events %llu path %s", m.v1, (unsigned long long)m.limit,
          (unsigned long long)m.events, m.path);
    /* no limit on the way up: 0, the events still */
    CHECK(cgroup_mem_parse("0::/a/b\n", v2, NULL, &m) == 0);
    put("v2/a/memory.max", "max\n");
    CHECK(cgroup_mem_parse("0::/a/b\n", v2, NULL, &m) == 0 && m.limit == 0 && m.events == 6,
          "limit %llu", (unsigned long long)m.limit);
    /* v2 without memory files (a hybrid host): v1's limit, no events */
    CHECK(cgroup_mem_parse("4:memory:/x\n0::/\n", v2, v1, &m) == 0);
    CHECK(m.v1 && m.limit == 33554432 && m.events == 0 && !strcmp(m.path, "/x"),
          "v1 %d limit %llu", m.v1, (unsigned long long)m.limit);
    /* refused: a way out of the mount, no memory line, nothing mounted */
    CHECK(cgroup_mem_parse("0::/a/../../etc\n", v2, NULL, &m) < 0);
    CHECK(cgroup_mem_parse("1:cpu:/x\n", v2, v1, &m) < 0);
    CHECK(cgroup_mem_parse("0::/a/b\n", NULL, NULL, &m) < 0);

    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    CHECK(system(cmd) == 0);
    return test_end("cgroup_mem");
}
