/* A 2D array of doubles read column by column: the pair what_if transpose
 * is tested on. Built plain, A is R x C and the walk strides a row per
 * access; with -DTRANSPOSED, A is declared C x R with the indices swapped,
 * so the same walk is sequential. Both read every element once, in the
 * same order. */
#include <stdio.h>
#include "gleipnir.h"

#define R 48
#define C 64

#ifdef TRANSPOSED
static double A[C][R];
#define AT(i, j) A[j][i]
#else
static double A[R][C];
#define AT(i, j) A[i][j]
#endif

int main(void)
{
    int i, j;
    double s = 0;
    for (i = 0; i < R; i++)
        for (j = 0; j < C; j++)
            AT(i, j) = i + j;
    GL_START;
    for (j = 0; j < C; j++)
        for (i = 0; i < R; i++)
            s += AT(i, j);
    GL_STOP;
    printf("%g\n", s);
    return 0;
}
