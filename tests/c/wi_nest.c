/* A 256 x 256 array of doubles summed column by column: the pair advise's
 * loop interchange is tested on. A column's 256 lines are more than a small
 * L1 holds, so every read misses however the rows are padded. Built with
 * -DINTERCHANGED the loops are swapped by hand and the walk runs along the
 * rows. With -DPAIRS each iteration reads two elements of the column (a
 * stencil), so an iteration is not one element and no interchange can be
 * predicted from the trace. */
#include <stdio.h>
#include "gleipnir.h"

#define N 256

static double A[N][N] __attribute__((aligned(64)));

int main(void)
{
    int i, j;
    double s = 0;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            A[i][j] = i - j;
    GL_START;
#if defined(INTERCHANGED)
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            s += A[i][j];
#elif defined(PAIRS)
    for (j = 0; j < N; j++)
        for (i = 0; i < N - 1; i++)
            s += A[i][j] * A[i + 1][j];
#else
    for (j = 0; j < N; j++)
        for (i = 0; i < N; i++)
            s += A[i][j];
#endif
    GL_STOP;
    printf("%g\n", s);
    return 0;
}
