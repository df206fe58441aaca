/* Library routines writing into the caller's stack arrays: memset fills a
 * table, memcpy copies one local array into another, and a helper of our
 * own passes its caller's array to memset. Only the region's own loop
 * touches the table otherwise. */
#include <string.h>
#include "gleipnir.h"

static void clear(double *p, size_t n)
{
    memset(p, 0, n * sizeof *p);
}

int main(void)
{
    char table[4096];
    double src[64], dst[64];
    int i;
    long sum = 0;
    for (i = 0; i < 64; i++)
        src[i] = i;
    GL_START;
    memset(table, 1, sizeof table);
    memcpy(dst, src, sizeof dst);
    clear(src, 64);
    for (i = 0; i < 4096; i += 512)
        sum += table[i]; /* table loop */
    GL_STOP;
    return (int)(sum + dst[5] + src[3]);
}
