/* Loops inside the region until interrupted; prints when it is running.
   After the first 100000 iterations it slows down (1 ms per iteration), so
   the trace an interrupt leaves stays small however late the signal comes. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "gleipnir.h"
int main(void)
{
    long i = 0;
    int *arr = (int *) malloc(1024 * sizeof(int));
    GL_START;
    for (;;) {
        arr[i % 1024] = (int) i;
        if (++i == 100000) { printf("running\n"); fflush(stdout); }
        if (i > 100000) usleep(1000);
    }
    GL_STOP;
    return 0;
}
