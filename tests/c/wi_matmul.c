/* A 64 x 64 matrix product of doubles in ijk order: the inner loop walks B
 * down a column, one element an iteration, and the (j, k) nest runs again
 * for each i. Built with -DIKJ the two inner loops are swapped by hand, so
 * B and C are walked along their rows: the pair advise's loop interchange
 * of a nest inside a third loop is tested on. */
#include <stdio.h>
#include "gleipnir.h"

#define N 64

static double A[N][N] __attribute__((aligned(64)));
static double B[N][N] __attribute__((aligned(64)));
static double C[N][N] __attribute__((aligned(64)));

int main(void)
{
    int i, j, k;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++) {
            A[i][j] = i + j;
            B[i][j] = i - j;
        }
    GL_START;
#ifdef IKJ
    for (i = 0; i < N; i++)
        for (k = 0; k < N; k++)
            for (j = 0; j < N; j++)
                C[i][j] += A[i][k] * B[k][j];
#else
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            for (k = 0; k < N; k++)
                C[i][j] += A[i][k] * B[k][j];
#endif
    GL_STOP;
    printf("%g\n", C[1][2]);
    return 0;
}
