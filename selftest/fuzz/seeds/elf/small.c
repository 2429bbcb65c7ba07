#include <stdio.h>
static int twice(int x) { return 2 * x; }
int exported_function(int x) { return twice(x) + 1; }
int main(void) { printf("%d\n", exported_function(3)); return 0; }
