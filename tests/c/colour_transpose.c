/* Transposed copy of a global 256 x 256 matrix of doubles, as
 * scripts/transpose.c: naive (X read row by row, Y written column by
 * column), or with -DBLOCK=8 in 8 x 8 tiles, so that each 64-byte line of
 * Y is written whole while it is cached. Under a 32 KiB 8-way L1 of
 * 64-byte lines the naive copy misses once per line of X (8192) and on
 * every write of Y (65536: its column's lines, 2 KiB apart, fall in two
 * sets); the tiled copy misses once per line of each (8192 + 8192). */
#include <stdio.h>
#include "gleipnir.h"
#define N 256
static double X[N][N] __attribute__((aligned(64)));
static double Y[N][N] __attribute__((aligned(64)));
int main(void)
{
    int i, j, k;
    for (k = 0; k < N * N; k++)
        X[k / N][k % N] = k;
    GL_START;
#ifdef BLOCK
    int ii, jj;
    for (ii = 0; ii < N; ii += BLOCK)
        for (jj = 0; jj < N; jj += BLOCK)
            for (i = ii; i < ii + BLOCK; i++)
                for (j = jj; j < jj + BLOCK; j++)
                    Y[j][i] = X[i][j];
#else
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            Y[j][i] = X[i][j];
#endif
    GL_STOP;
    printf("Y[1][0] = %g\n", Y[1][0]);
    return 0;
}
