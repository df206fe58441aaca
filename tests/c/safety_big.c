/* Many accesses inside the region, quickly traced: ROUNDS (argv[1],
   default 4) passes of a[i] += r over 2^20 ints, about six accesses per
   iteration at -O0 (the loads of i, a and r, and the load and store of
   a[i]). For a test that needs an analysis that takes a while. */
#include <stdlib.h>
#include "gleipnir.h"
#define N (1 << 20)
int main(int argc, char **argv)
{
    int i, r, rounds = argc > 1 ? atoi(argv[1]) : 4;
    int *a = (int *) calloc(N, sizeof(int));
    GL_START;
    for (r = 0; r < rounds; r++)
        for (i = 0; i < N; i++)
            a[i] += r;
    GL_STOP;
    free(a);
    return 0;
}
