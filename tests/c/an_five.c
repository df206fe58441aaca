/* Five heap arrays of int and double, each named by its allocation line. */
#include <stdlib.h>
#include "gleipnir.h"
#define N 10
int main(void)
{
    int i;
    int *a = (int *) malloc(N * sizeof(int));
    double *b = malloc(N * sizeof(double));
    int *c;
    c = (int *) calloc(N, sizeof(int));
    double *d = (double *) malloc(2 * N * sizeof(double));
    int *e = malloc(sizeof(int) * N);
    for (i = 0; i < N; i++) e[i] = 1;
    GL_START;
    for (i = 0; i < N; i++) {
        a[i] = i;                 /* a: 10 stores */
        b[i] = a[i] * 2.0;        /* a: 10 loads, b: 10 stores */
    }
    for (i = 0; i < N; i++) {
        c[i] = a[i] + 1;          /* a: 10 loads, c: 10 stores */
        d[2 * i] = b[i];          /* b: 10 loads, d: 10 stores */
        d[2 * i + 1] = b[i];      /* b: 10 loads, d: 10 stores */
    }
    for (i = 0; i < N; i++)
        e[i] = e[i] + c[i];       /* e: 10 loads + 10 stores, c: 10 loads */
    GL_STOP;
    free(a); free(b); free(c); free(d); free(e);
    return 0;
}
