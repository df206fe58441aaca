/* realloc: the accesses before and after belong to two instances of v. */
#include <stdlib.h>
#include "gleipnir.h"
int main(void)
{
    int i;
    int *v = (int *) malloc(4 * sizeof(int));
    int *pad = (int *) malloc(64);          /* keeps realloc from growing in place */
    GL_START;
    for (i = 0; i < 4; i++) v[i] = i;       /* v#1: 4 stores */
    GL_STOP;
    v = (int *) realloc(v, 1000 * sizeof(int));
    GL_START;
    for (i = 0; i < 8; i++) v[i] = v[i] + 1; /* v#2: 8 loads + 8 stores */
    GL_STOP;
    free(v);
    free(pad);
    return 0;
}
