/* A stack array and a heap array walked together in a loop, for the
 * reproducibility of counts: with a small cache, how many lines each array
 * spans and which sets they share depend on their addresses, so a stack
 * that moves with the working folder or the environment changes the
 * misses. The program prints both addresses, to compare runs without
 * mapvis. */
#include <stdio.h>
#include <stdlib.h>
#include "gleipnir.h"
#define N 200
static double walk(const double *on_stack, const double *on_heap)
{
    double sum = 0;
    for (int r = 0; r < 4; r++)
        for (int i = 0; i < N; i += 2)
            sum += on_stack[i] * on_heap[(i * 7) % N];
    return sum;
}
int main(void)
{
    double on_stack[N];
    double *on_heap = malloc(N * sizeof *on_heap);
    for (int i = 0; i < N; i++) {
        on_stack[i] = i;
        on_heap[i] = N - i;
    }
    printf("on_stack %p on_heap %p\n", (void *)on_stack, (void *)on_heap);
    GL_START;
    double s = walk(on_stack, on_heap);
    GL_STOP;
    free(on_heap);
    return s < 0;
}
