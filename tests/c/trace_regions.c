/* Two regions, a stop without a start, and a modify (i++ at -O0). */
#include <stdlib.h>
#include "gleipnir.h"
int main(void)
{
    int i, *a = (int *) malloc(8 * sizeof(int));
    GL_STOP;                                  /* no region open: reported */
    GL_START;
    for (i = 0; i < 8; i++) a[i] = i;         /* region 1: 8 stores */
    GL_STOP;
    GL_START;
    for (i = 0; i < 8; i++) a[i] += 2;        /* region 2: 8 loads + 8 stores, or M */
    GL_STOP;
    free(a);
    return 0;
}
