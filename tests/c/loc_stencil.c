/* A 5-point stencil over a 256x256 double grid, four sweeps. */
#include "gleipnir.h"
#define N 256
static double u[N][N] __attribute__((aligned(64)));
static double v[N][N] __attribute__((aligned(64)));
int main(void)
{
    int i, j, t;
    GL_START;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            u[i][j] = (i * 7 + j) % 13;
    for (t = 0; t < 4; t++)
        for (i = 1; i < N - 1; i++)
            for (j = 1; j < N - 1; j++)
                v[i][j] = 0.2 * (u[i][j] + u[i - 1][j] + u[i + 1][j] + u[i][j - 1] + u[i][j + 1]); /* stencil line */
    GL_STOP;
    return v[5][5] > 0;
}
