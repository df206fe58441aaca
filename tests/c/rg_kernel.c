/* A kernel called once between the pins, on two heap arrays, a global
 * array and a heap structure: 64 loads of x and glob and 64 stores of y
 * (8 bytes each); the structure's two members read and written once per
 * element (volatile: without the pins' memory barrier the compiler would
 * otherwise keep them in registers across the call, outside it). At -O2
 * the kernel is inlined into main. Built with -DGL_NOPINS the pins are empty, and
 * `set_region function kernel` or `set_region lines rg_kernel.c:36-36`
 * (the call) trace the same accesses of x, y, glob and s. */
#include <stdio.h>
#include <stdlib.h>
#include "gleipnir.h"

#define N 64

struct stats { volatile long count; volatile double sum; };
static double glob[N];

static void kernel(const double *x, double *y, struct stats *s, int n)
{
    for (int i = 0; i < n; i++) {
        y[i] = 2.0 * x[i] + glob[i];
        s->sum += y[i];
        s->count++;
    }
}

int main(int argc, char **argv)
{
    double *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    struct stats *s = calloc(1, sizeof *s);
    for (int i = 0; i < N; i++) {
        x[i] = i;
        glob[i] = argc;
    }
    GL_START;
    kernel(x, y, s, N);
    GL_STOP;
    printf("%f %ld\n", s->sum, s->count);
    free(x);
    free(y);
    free(s);
    return 0;
}
