/* A shared library for the region tests: lib_fill(p, n) stores n doubles
 * into p (8 bytes each, at -O0 with no other access of p). */
__attribute__((noinline)) void lib_fill(double *p, int n)
{
    int i;
    for (i = 0; i < n; i++)
        p[i] = i;
}
