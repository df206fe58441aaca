/* Transposed copy of a 512x512 double matrix: the source is read row-wise,
 * the destination written column-wise. */
#include "gleipnir.h"
#define N 512
static double src[N][N] __attribute__((aligned(64)));
static double dst[N][N] __attribute__((aligned(64)));
int main(void)
{
    int i, j;
    GL_START;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            src[i][j] = i * N + j;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            dst[j][i] = src[i][j]; /* transpose line */
    GL_STOP;
    return dst[3][2] > 0;
}
