/* Loops as real code writes them, for the pattern labels: updates in place
 * (load and store of one element per iteration), read-modify-write of a
 * field, 3D loops, a vectorizable copy, tiles and an accumulating sum.
 * Built at -O0 and -O2; at -O2 gcc turns the contiguous loops into 16-byte
 * vector accesses. The markers are the comments on the loops' lines. */
#include <stdio.h>
#include <stdlib.h>
#include "gleipnir.h"
#define N 64
#define G 16
#define T 8
struct particle { double x, y, z; };
static double g[N][N];
static double grid[G][G][G];
static double out[G][G][G];
static double acc[N];

int main(int argc, char **argv)
{
    int i, j, k, bi, bj;
    double x = argc + 0.5;
    double *a = malloc(sizeof(double) * 1024);
    double *v = malloc(sizeof(double) * 1024);
    double *src = malloc(sizeof(double) * 1024);
    double *dst = malloc(sizeof(double) * 1024);
    struct particle *ps = malloc(sizeof(struct particle) * 256);
    (void)argv;
    for (i = 0; i < 1024; i++)
        a[i] = v[i] = src[i] = i;
    for (i = 0; i < 256; i++)
        ps[i].x = ps[i].y = ps[i].z = i;
    GL_START;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            g[i][j] += 1.0; /* row update */
    for (j = 0; j < N; j++)
        for (i = 0; i < N; i++)
            g[i][j] += 1.0; /* column update */
    for (i = 0; i < 1024; i++)
        a[i] += x; /* add in place */
    for (i = 0; i < 256; i++)
        ps[i].x += x; /* field update */
    for (i = 0; i < G; i++)
        for (j = 0; j < G; j++)
            for (k = 0; k < G; k++)
                grid[i][j][k] += 1.0; /* grid update */
    for (k = 0; k < 1024; k++)
        v[k] = v[k] * 0.5; /* scale in place */
    for (i = 0; i < 1024; i++)
        dst[i] = 2.0 * src[i]; /* scaled copy */
    for (i = 1; i < G - 1; i++)
        for (j = 1; j < G - 1; j++)
            for (k = 1; k < G - 1; k++)
                out[i][j][k] = grid[i - 1][j][k] + grid[i + 1][j][k] + grid[i][j - 1][k] + grid[i][j + 1][k] + grid[i][j][k - 1] + grid[i][j][k + 1]; /* stencil */
    for (bi = 0; bi < N; bi += T)
        for (bj = 0; bj < N; bj += T)
            for (i = bi; i < bi + T; i++)
                for (j = bj; j < bj + T; j++)
                    g[i][j] += 1.0; /* tiled update */
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            acc[i] += g[i][j]; /* accumulate */
    GL_STOP;
    printf("%g %g %g %g %g %g\n", a[5], v[7], dst[9], ps[3].x, out[3][4][5], acc[9]);
    free(a); free(v); free(src); free(dst); free(ps);
    return 0;
}
