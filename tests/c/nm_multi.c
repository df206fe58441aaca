/* Several allocations in one statement, told apart by the columns of gcc's
   line table. */
#include <stdlib.h>
#include "gleipnir.h"
struct pair {
    double *x;
    double *y;
};
int main(void)
{
    int i, n = 8;
    double *X = malloc(n * sizeof(double)), *Y = malloc(n * sizeof(double)), *Z = calloc(n, sizeof(double));
    double *a, *b;
    a = malloc(4 * sizeof(double)); b = malloc(4 * sizeof(double));
    struct pair pp, *p = &pp;
    p->x = malloc(2 * sizeof(double)), p->y = malloc(2 * sizeof(double));
    GL_START;
    for (i = 0; i < n; i++) X[i] = i;           /* X: 8 stores of 8 bytes */
    for (i = 0; i < n; i++) Y[i] = X[i];        /* Y: 8 stores, X: 8 loads */
    for (i = 0; i < n; i++) Z[i] += Y[i];       /* Z: 8 loads and 8 stores, Y: 8 loads */
    for (i = 0; i < 4; i++) a[i] = 1;           /* a: 4 stores */
    for (i = 0; i < 4; i++) b[i] = a[i];        /* b: 4 stores, a: 4 loads */
    p->x[0] = 1;                                /* p->x: 1 store */
    p->y[1] = 2;                                /* p->y: 1 store */
    GL_STOP;
    free(X); free(Y); free(Z); free(a); free(b); free(p->x); free(p->y);
    return 0;
}
