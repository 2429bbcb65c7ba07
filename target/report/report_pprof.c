#include "target/report/report_internal.h"
int report_write_pprof(FILE *out, const struct report_source *src)
{
    (void)out; (void)src;
    return -1;
}
