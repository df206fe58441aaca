/* A 200 x 200 transpose of doubles, then the result summed along its rows:
 * the pair advise's tiling is tested on. The transpose writes B column by
 * column, a line per element; built with -DTILE=T the nest is tiled by hand
 * in blocks of T x T, so each line of A and B is used whole while in L1.
 * The row-wise sum after it makes storing B transposed no help. */
#include <stdio.h>
#include "gleipnir.h"

#define N 200

static double A[N][N] __attribute__((aligned(64)));
static double B[N][N] __attribute__((aligned(64)));

int main(void)
{
    int i, j;
    double s = 0;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            A[i][j] = i * N + j;
    GL_START;
#ifdef TILE
    int ii, jj;
    for (ii = 0; ii < N; ii += TILE)
        for (jj = 0; jj < N; jj += TILE)
            for (i = ii; i < ii + TILE && i < N; i++)
                for (j = jj; j < jj + TILE && j < N; j++)
                    B[j][i] = A[i][j];
#else
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            B[j][i] = A[i][j];
#endif
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            s += B[i][j];
    GL_STOP;
    printf("%g\n", s);
    return 0;
}
