/* Array sizes picked by #if, #ifdef, #ifndef, #elif and #else, in this file
   and in a header; the branch the compiler took comes first or in the
   middle, never last, so taking the last definition of a name is wrong. */
#include <stdlib.h>
#include "gleipnir.h"
#define ROWS_FIRST 1
#define M_CHOICE 2
#include "nm_cond.h"
#ifndef BIG
#define N 10
#else
#define N 1000
#endif
#if defined(WIDE) && WIDE > 0 && M_CHOICE == 2
#define M 6
#elif 1
#define M 1000
#else
#define M 2000
#endif
#ifdef NM_COND_H
#define K 3
#else
#define K 99
#endif
#ifdef SCALE
#define S SCALE
#else
#define S 1
#endif
#if 0
#define T 50
#elif __has_include(<stdio.h>)
#define T 5
#else
#define T 7
#endif
#undef BIG
int main(void)
{
    int i, j;
    int *a = malloc(N * sizeof(int));
    ALLOC_ROWS(g, K);
    float *s = malloc(S * 2 * sizeof(float));
    float *t = malloc(T * sizeof(float));
    GL_START;
    for (i = 0; i < N; i++)
        a[i] = i;                       /* a: 10 stores of 4 bytes */
    for (i = 0; i < K; i++)
        for (j = 0; j < M; j++)
            g[i][j] = i + j;            /* g: 3 x 6 = 18 stores of 8 */
    for (i = 0; i < S * 2; i++)
        s[i] = i;                       /* s: 4 x 2 = 8 stores of 4 (-DSCALE=4) */
    for (i = 0; i < T; i++)
        t[i] = i;                       /* t: 5 stores of 4 */
    GL_STOP;
    free(a);
    free(g);
    free(s);
    free(t);
    return 0;
}
