int lib_add(int a, int b) { return a + b; }
static int hidden_mul(int a, int b) { return a * b; }
int lib_mul(int a, int b) { return hidden_mul(a, b); }
