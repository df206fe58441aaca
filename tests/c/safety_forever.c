/* Runs inside the region until it is killed: a test can check that the
   traced run does not outlive the mapvis session that started it. */
#include <stdlib.h>
#include <unistd.h>
#include "gleipnir.h"
#define N 1024
int main(void)
{
    int i, *a = (int *) malloc(N * sizeof(int));
    GL_START;
    for (i = 0;; i++) {
        a[i % N] = i;
        if (i % N == 0) usleep(1000);
    }
    GL_STOP;
    free(a);
    return 0;
}
