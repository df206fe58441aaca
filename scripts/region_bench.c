/* region_bench.c: the program of scripts/bench_region.sh. STEPS steps of
 * a loop with loads and stores before and after one call of kernel() (a
 * 256 x 256 transpose), the region: with the pins around the call, or
 * built with -DGL_NOPINS and traced with set_region function kernel. */
#include <stdio.h>
#include <stdlib.h>
#include "gleipnir.h"
#define N 256
static double A[N][N], B[N][N];
__attribute__((noinline)) static void kernel(void)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            B[j][i] = A[i][j];
}
int main(int argc, char **argv)
{
    long steps = argc > 1 ? atol(argv[1]) : 30000000;
    double *v = malloc(4096 * sizeof *v);
    for (int i = 0; i < 4096; i++) v[i] = i;
    double s = 0;
    for (long t = 0; t < steps; t++) {   /* outside: memory traffic too */
        s += v[t & 4095] * 0.5;
        v[(t * 7) & 4095] = s;
    }
    GL_START;
    kernel();
    GL_STOP;
    for (long t = 0; t < steps; t++) {
        s += v[t & 4095] * 0.5;
        v[(t * 7) & 4095] = s;
    }
    printf("%f %f\n", s, B[3][4]);
    return 0;
}
