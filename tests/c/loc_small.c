/* Exact small cases for the cache model: a unit-stride sweep of a 32 KiB
 * array (one miss per 64-byte line), then a column walk of a 64x64 double
 * matrix (every access misses in a 4 KiB L1). Both arrays are line aligned. */
#include "gleipnir.h"
#define N 4096
#define M 64
static double sweep[N] __attribute__((aligned(64)));
static double grid[M][M] __attribute__((aligned(64)));
int main(void)
{
    int i, j;
    double sum = 0;
    GL_START;
    for (i = 0; i < N; i++)
        sum += sweep[i]; /* sweep line */
    for (j = 0; j < M; j++)
        for (i = 0; i < M; i++)
            sum += grid[i][j]; /* column line */
    GL_STOP;
    return sum > 0;
}
