/* N ints written once between the pins; reads and writes outside them. */
#include <stdlib.h>
#include "gleipnir.h"
#define N 100
int main(void)
{
    int i;
    int *arr = (int *) malloc(N * sizeof(int));
    for (i = 0; i < N; i++) arr[i] = -1;      /* outside: not recorded */
    GL_START;
    for (i = 0; i < N; i++) arr[i] = i;
    GL_STOP;
    for (i = 0; i < N; i++) arr[i] += 1;      /* outside: not recorded */
    free(arr);
    return 0;
}
