/* Arrays declared through function-like macros from a header (found only
   through set_src_path), allocated by a wrapper in another file. */
#include <stdlib.h>
#include "gleipnir.h"
#include "nm_arrays.h"
#define NI 6
#define NK 5
int main(void)
{
    int i, j, k;
    ARRAY_2D_DECL(A, double, NI, NK);
    MAT_DECL(B, NK, NI);
    ARRAY_3D_DECL(C, float, 2, 3, 4);
    ARRAY_1D_DECL(v, int, NI);
    GL_START;
    for (i = 0; i < NI; i++)
        for (j = 0; j < NK; j++)
            A[i][j] = i + j;            /* A: 30 stores of 8 bytes */
    for (j = 0; j < NK; j++)
        for (i = 0; i < NI; i++)
            B[j][i] = A[i][j];          /* B: 30 stores, A: 30 loads */
    for (i = 0; i < 2; i++)
        for (j = 0; j < 3; j++)
            for (k = 0; k < 4; k++)
                C[i][j][k] = 1.0f;      /* C: 24 stores of 4 bytes */
    for (i = 0; i < NI; i++)
        v[i] = i;                       /* v: 6 stores of 4 bytes */
    GL_STOP;
    free(A);
    free(B);
    free(C);
    free(v);
    return 0;
}
