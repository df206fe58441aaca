/* ijk matrix multiplication of 128x128 doubles; the region is the whole
 * program, so cachegrind's per-line counts compare with mapvis's. */
#include "gleipnir.h"
#define N 128
static double A[N][N] __attribute__((aligned(64)));
static double B[N][N] __attribute__((aligned(64)));
static double C[N][N] __attribute__((aligned(64)));
int main(void)
{
    int i, j, k;
    GL_START;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++) {
            A[i][j] = i + j;
            B[i][j] = i - j;
        }
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            for (k = 0; k < N; k++)
                C[i][j] += A[i][k] * B[k][j]; /* multiply line */
    GL_STOP;
    return C[1][1] > 0;
}
