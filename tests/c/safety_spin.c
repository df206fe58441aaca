/* Runs long inside the region and says how far it got: after each round
   of 16384 stores to a it prints "round N" (N from 1), flushed, and
   sleeps 2 ms, so a test can kill it and compare the trace with what it
   had done. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "gleipnir.h"
#define N 16384
int main(void)
{
    int i, round, *a = (int *) malloc(N * sizeof(int));
    GL_START;
    for (round = 1; round <= 2000; round++) {
        for (i = 0; i < N; i++) a[i] = i + round;
        printf("round %d\n", round);
        fflush(stdout);
        usleep(2000);
    }
    GL_STOP;
    free(a);
    return 0;
}
