/* The leak scan in reports: memcheck's wording, so that people and scripts
 * used to valgrind read it at once. */
#include "target/report/report_internal.h"

#include <inttypes.h>

static const char *const kind_phrase[REPORT_LEAK_KINDS] = {
    "definitely lost", "indirectly lost", "possibly lost", "still reachable"};

void report_write_leaks_text(FILE *out, const struct report_source *src,
                             const struct report_leaks *l)
{
    fprintf(out, "LEAK SCAN: %" PRIu64 " bytes scanned (%" PRIu64 " of roots, %u threads), %" PRIu64
                 " blocks checked in %.3f ms\n\n",
            l->bytes_scanned, l->root_bytes, l->threads, l->blocks_checked, l->seconds * 1e3);
    for (size_t g = 0; g < l->ngroups; g++) {
        const struct report_leak_group *grp = &l->groups[g];
        if (grp->suppressed || grp->kind >= REPORT_LEAK_REACHABLE)
            continue;
        fprintf(out, "%" PRIu64 " bytes in %" PRIu64 " blocks are %s\n", grp->bytes, grp->blocks,
                kind_phrase[grp->kind]);
        report_write_frames_text(out, src, grp->stack_id);
        fputc('\n', out);
    }
    fputs("LEAK SUMMARY\n", out);
    static const char *const label[REPORT_LEAK_KINDS] = {
        "    definitely lost", "    indirectly lost", "      possibly lost", "    still reachable"};
    for (unsigned k = 0; k < REPORT_LEAK_KINDS; k++)
        fprintf(out, "%s: %" PRIu64 " bytes in %" PRIu64 " blocks\n", label[k], l->bytes[k],
                l->blocks[k]);
    fprintf(out, "         suppressed: %" PRIu64 " bytes in %" PRIu64 " blocks\n",
            l->suppressed_bytes, l->suppressed_blocks);
}
