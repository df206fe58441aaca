/* The program of tests/hostile.rs's walk over every path mapvis writes:
   a heap matrix A of 32 x 32 doubles walked column by column (strided),
   then a row sweep, between the pins, and a few small allocations for the
   heap commands. */
#include <stdlib.h>
#include "gleipnir.h"
#define N 32
int main(void)
{
    double *A = malloc(N * N * sizeof *A);
    char *small[8];
    double sum = 0;
    int i, j;
    for (i = 0; i < 8; i++)
        small[i] = malloc(16 + i);
    GL_START;
    for (j = 0; j < N; j++)
        for (i = 0; i < N; i++)
            A[i * N + j] = i + j;
    for (i = 0; i < N * N; i++)
        sum += A[i];
    GL_STOP;
    for (i = 0; i < 8; i++)
        free(small[i]);
    free(A);
    return sum < 0;
}
