/* Writes 50 ints, then crashes inside the region. */
#include <stdlib.h>
#include "gleipnir.h"
int main(void)
{
    int i;
    int *arr = (int *) malloc(50 * sizeof(int));
    volatile int *bad = (int *) 0;
    GL_START;
    for (i = 0; i < 50; i++) arr[i] = i;
    *bad = 1;                                 /* SIGSEGV */
    GL_STOP;
    return 0;
}
