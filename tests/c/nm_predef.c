/* Array sizes picked by the compiler's own predefined macros, compiled
 * with plain -g (no macro information in the debug info). */
#include <stdlib.h>
#include "gleipnir.h"
#if defined(__GNUC__) && __STDC_VERSION__ >= 199901L
#define N 12
#else
#define N 99
#endif
#ifdef __OPTIMIZE__
#define M 3
#else
#define M 5
#endif
int main(void)
{
    int i;
    int *a = malloc(N * sizeof(int));
    int *b = malloc(M * sizeof(int));
    GL_START;
    for (i = 0; i < N; i++)
        a[i] = i;
    for (i = 0; i < M; i++)
        b[i] = i;
    GL_STOP;
    i = a[N - 1] + b[M - 1];
    free(a);
    free(b);
    return i == 0;
}
