/* realloc, free, and an allocation through a wrapper function. */
#include <stdlib.h>
#include <string.h>
#include "gleipnir.h"
static void *xmalloc(size_t n)
{
    void *p = malloc(n);                      /* MARK:wrapper-inner */
    if (!p) abort();
    return p;
}
int main(void)
{
    int *grow = (int *) malloc(16 * sizeof(int));
    double *w = (double *) xmalloc(10 * sizeof(double));  /* MARK:wrapper-call */
    grow = (int *) realloc(grow, 4096 * sizeof(int));
    GL_START;
    grow[4095] = 1;
    w[9] = 2.0;
    GL_STOP;
    free(w);
    free(grow);
    return 0;
}
