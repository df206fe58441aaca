/*
 * matmul.c: Z = X * Y for N x N matrices on the heap, in one of three loop
 * orders, so their access patterns can be compared.
 *
 *   matmul [ijk|jik|blocked] [N]     default: ijk 16
 *
 * Compile with -DTYPE=double for doubles (the benchmark does).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gleipnir.h"

#ifndef TYPE
#define TYPE int
#endif
#define BLOCK 4

int main(int argc, char **argv)
{
    const char *order = argc > 1 ? argv[1] : "ijk";
    int N = argc > 2 ? atoi(argv[2]) : 16;
    int i, j, k, ii, jj, kk;
    TYPE tmp;
    TYPE *X = (TYPE *) malloc(N * N * sizeof(TYPE));
    TYPE *Y = (TYPE *) malloc(N * N * sizeof(TYPE));
    TYPE *Z = (TYPE *) malloc(N * N * sizeof(TYPE));
    if (!X || !Y || !Z || N <= 0)
        return 1;
    for (i = 0; i < N * N; i++) {
        X[i] = (TYPE) (i % 7);
        Y[i] = (TYPE) (i % 5);
        Z[i] = 0;
    }

    GL_START;
    if (strcmp(order, "jik") == 0) {            /* column by column */
        for (j = 0; j < N; j++)
            for (i = 0; i < N; i++) {
                tmp = 0;
                for (k = 0; k < N; k++)
                    tmp += X[i * N + k] * Y[k * N + j];
                Z[i * N + j] = tmp;
            }
    } else if (strcmp(order, "blocked") == 0) { /* BLOCK x BLOCK tiles */
        for (ii = 0; ii < N; ii += BLOCK)
            for (jj = 0; jj < N; jj += BLOCK)
                for (kk = 0; kk < N; kk += BLOCK)
                    for (i = ii; i < ii + BLOCK && i < N; i++)
                        for (j = jj; j < jj + BLOCK && j < N; j++) {
                            tmp = Z[i * N + j];
                            for (k = kk; k < kk + BLOCK && k < N; k++)
                                tmp += X[i * N + k] * Y[k * N + j];
                            Z[i * N + j] = tmp;
                        }
    } else {                                    /* row by row */
        for (i = 0; i < N; i++)
            for (j = 0; j < N; j++) {
                tmp = 0;
                for (k = 0; k < N; k++)
                    tmp += X[i * N + k] * Y[k * N + j];
                Z[i * N + j] = tmp;
            }
    }
    GL_STOP;

    printf("Z[0][0] = %g\n", (double) Z[0]);
    free(X);
    free(Y);
    free(Z);
    return 0;
}
