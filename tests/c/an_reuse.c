/* A block is freed and a new block reuses its address: the accesses belong
   to the block that was live when they happened. */
#include <stdlib.h>
#include <stdio.h>
#include "gleipnir.h"
int main(void)
{
    int i;
    int *first = (int *) malloc(16 * sizeof(int));
    int *second;
    GL_START;
    for (i = 0; i < 16; i++) first[i] = i;        /* first: 16 stores */
    GL_STOP;
    free(first);
    second = (int *) malloc(16 * sizeof(int));
    GL_START;
    for (i = 0; i < 8; i++) second[i] = i;        /* second: 8 stores */
    GL_STOP;
    printf("%s\n", (void *) first == (void *) second ? "same address" : "new address");
    free(second);
    return 0;
}
