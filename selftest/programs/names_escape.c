/* Names a traced program chooses, with terminal escapes in them: the
 * function names (asm labels) hold ESC sequences, BEL, CR, a C1 CSI
 * (U+009B) and a byte that is not UTF-8; the source file's name (#line, so
 * in DWARF) holds BEL, CR and ESC.  For selftest/tests/report_names_escape.sh:
 * no report, export or diff may pass one of them to the user raw. */
#line 1 "names\a\rfile\x1b[2J.c"
#include <stdlib.h>

void *colour(size_t n) __asm__("\"evil\x1b[31mname\a\"");
void *c1_csi(size_t n) __asm__("\"csi\xc2\x9b" "2Jname\r\xff\"");

static void *keep[4];

__attribute__((noinline)) void *colour(size_t n)
{
    return malloc(n);
}

__attribute__((noinline)) void *c1_csi(size_t n)
{
    return malloc(n);
}

int main(void)
{
    keep[0] = colour(1000);
    keep[1] = c1_csi(2000);
    keep[2] = colour(3000);
    keep[3] = c1_csi(4000);
    return 0;
}
