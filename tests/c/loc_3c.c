/* The 3C model's cases, worked by hand in tests/locality_cache.rs: a
   column walk over a global 128 x 1024 array of doubles (rows 8 KiB
   apart, so a column's 128 lines share one set of a 32 KiB 8-way L1), then
   two sweeps over a 64 KiB array (twice a 32 KiB L1). Both arrays are
   aligned to 64 bytes, so every line is whole. */
#include "gleipnir.h"
#define R 128
#define C 1024
#define B 8192
double grid[R][C] __attribute__((aligned(64)));
double big[B] __attribute__((aligned(64)));
int main(void)
{
    double s = 0;
    int i, j, k;
    GL_START;
    for (j = 0; j < C; j++)
        for (i = 0; i < R; i++)
            s += grid[i][j];
    for (k = 0; k < 2; k++)
        for (i = 0; i < B; i++)
            s += big[i];
    GL_STOP;
    return s != 0;
}
