/* Loops inside the region until interrupted; prints when it is running. */
#include <stdio.h>
#include <stdlib.h>
#include "gleipnir.h"
int main(void)
{
    long i = 0;
    int *arr = (int *) malloc(1024 * sizeof(int));
    GL_START;
    for (;;) {
        arr[i % 1024] = (int) i;
        if (++i == 100000) { printf("running\n"); fflush(stdout); }
    }
    GL_STOP;
    return 0;
}
