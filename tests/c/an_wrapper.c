/* An allocation through a wrapper: the caller's variable names the block. */
#include <stdlib.h>
#include "gleipnir.h"
static void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (p == NULL)
        abort();
    return p;
}
int main(void)
{
    int i;
    double *w = (double *) xmalloc(6 * sizeof(double));
    GL_START;
    for (i = 0; i < 6; i++) w[i] = i;             /* w: 6 stores of 8 bytes */
    GL_STOP;
    free(w);
    return 0;
}
