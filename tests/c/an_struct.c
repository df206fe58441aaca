/* Allocations assigned to struct members, through . and ->. */
#include <stdlib.h>
#include "gleipnir.h"
struct hist { int nbins; double *counts; };
struct buffer { char *buf; int len; };
int main(void)
{
    int i;
    struct hist h;
    struct buffer *s = (struct buffer *) malloc(sizeof(struct buffer));
    h.nbins = 8;
    h.counts = calloc(h.nbins, sizeof(double));
    s->len = 32;
    s->buf = (char *) malloc(s->len);
    GL_START;
    for (i = 0; i < 8; i++) h.counts[i] = i;      /* h.counts: 8 stores of 8 bytes */
    for (i = 0; i < 32; i++) s->buf[i] = 'x';     /* s->buf: 32 stores of 1 byte */
    GL_STOP;
    free(s->buf); free(h.counts); free(s);
    return 0;
}
