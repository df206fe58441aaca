/* A 64x64 int matrix written row by row, then read column by column, R
 * times over: 2 R accesses per element, R x 4096 stores and as many loads
 * of `mat` (the loop counters and `sum` are on the stack), far above a
 * small point budget. */
#include "gleipnir.h"
#define M 64
#define R 64
static int mat[M][M];
int main(void)
{
    int i, j, r;
    long sum = 0;
    GL_START;
    for (r = 0; r < R; r++) {
        for (i = 0; i < M; i++)
            for (j = 0; j < M; j++)
                mat[i][j] = i + j + r; /* store line */
        for (j = 0; j < M; j++)
            for (i = 0; i < M; i++)
                sum += mat[i][j]; /* load line */
    }
    GL_STOP;
    return sum == 42;
}
