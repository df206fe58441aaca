/* A block libc allocates for itself inside the region: the first printf
 * to a piped stdout allocates its buffer. The program's own array is
 * named as usual. */
#include <stdio.h>
#include <stdlib.h>
#include "gleipnir.h"
int main(void)
{
    int i;
    int *own = malloc(8 * sizeof(int));
    GL_START;
    for (i = 0; i < 8; i++)
        own[i] = i;
    printf("own[3] = %d\n", own[3]); /* libc's buffer */
    GL_STOP;
    free(own);
    return 0;
}
