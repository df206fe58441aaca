/*
 * footprint.c: the footprint benchmark of scripts/bench.sh footprint (and
 * tests/footprint.rs): a naive transpose of an N x N matrix of doubles on
 * the heap, N from the first argument (default 3000). X is filled before
 * the pins; between them Y[j][i] = X[i][j] reads X row by row and writes
 * Y column by column, so each of the 2 N^2 elements is touched once: N =
 * 3000 gives 18 M distinct heap addresses (144 MB of arrays), N = 8000
 * gives 128 M (1 GB). Compiled -O0, the loop counters are traced too
 * (about 10 accesses an element with set_mem_alloc all).
 */
#include <stdio.h>
#include <stdlib.h>
#include "gleipnir.h"

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 3000;
    double *X = malloc(sizeof(double) * n * n);
    double *Y = malloc(sizeof(double) * n * n);
    if (!X || !Y)
        return 1;
    for (long k = 0; k < n * n; k++)
        X[k] = (double)k;
    GL_START;
    for (long i = 0; i < n; i++)
        for (long j = 0; j < n; j++)
            Y[j * n + i] = X[i * n + j];
    GL_STOP;
    printf("%g\n", Y[n * n - 1]);
    free(X);
    free(Y);
    return 0;
}
