/* A 5-point stencil over 2D stack arrays. */
#include "gleipnir.h"
#define N 12
int main(void)
{
    int i, j;
    double u[N][N], v[N][N];
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++) {
            u[i][j] = i + j;
            v[i][j] = 0;
        }
    GL_START;
    for (i = 1; i < N - 1; i++)
        for (j = 1; j < N - 1; j++)
            v[i][j] = (u[i - 1][j] + u[i + 1][j] + u[i][j - 1] + u[i][j + 1]) / 4;
    GL_STOP;
    return (int) v[5][5];
}
