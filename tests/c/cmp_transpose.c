/* A transpose of N x N doubles, naive or (with -DBLOCK=B) in B x B tiles:
 * the pair of versions compare_runs is tested on. X is read and Y written
 * once per element in both versions (N*N loads and N*N stores); only the
 * order differs. */
#include <stdio.h>
#include "gleipnir.h"

#ifndef N
#define N 64
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
    printf("%g\n", Y[1][0]);
    return 0;
}
