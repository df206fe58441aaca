/*
 * transpose.c: the figure benchmark of scripts/bench.sh figures.  A global
 * N x N matrix of doubles X, filled before the pins, is copied transposed
 * into Y between them (X read row by row, Y written column by column).
 * Compiled -O0, the loop counters live on the stack and are traced too:
 * N=256 (the default; -DN=... for another) gives about 656 k accesses with
 * set_mem_alloc all.
 */
#include <stdio.h>
#include "gleipnir.h"

#ifndef N
#define N 256
#endif

static double X[N][N];
static double Y[N][N];

int main(void)
{
    int i, j;

    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            X[i][j] = i * N + j;
    GL_START;
#ifdef BLOCK
    /* -DBLOCK=B: the same copy in B x B tiles (README: "Did my change
     * help?"). */
    for (int ii = 0; ii < N; ii += BLOCK)
        for (int jj = 0; jj < N; jj += BLOCK)
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
