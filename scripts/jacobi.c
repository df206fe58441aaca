/* jacobi.c: a 1-D Jacobi relaxation, a program with no pins in it (the
 * README's "Tracing a program you cannot edit"). relax() is called once
 * per sweep; residual() once at the end. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 4096

static void relax(const double *u, double *v, int n)
{
    for (int i = 1; i < n - 1; i++)
        v[i] = 0.5 * (u[i - 1] + u[i + 1]);
}

static double residual(const double *u, const double *v, int n)
{
    double r = 0;
    for (int i = 0; i < n; i++)
        r += (u[i] - v[i]) * (u[i] - v[i]);
    return r;
}

int main(int argc, char **argv)
{
    int sweeps = argc > 1 ? atoi(argv[1]) : 10;
    double *u = calloc(N, sizeof *u);
    double *v = calloc(N, sizeof *v);
    u[N / 2] = v[N / 2] = 1.0;
    for (int s = 0; s < sweeps; s++) {
        relax(u, v, N);
        memcpy(u, v, N * sizeof *u);
    }
    printf("%g\n", residual(u, v, N) + u[N / 2]);
    free(u);
    free(v);
    return 0;
}
