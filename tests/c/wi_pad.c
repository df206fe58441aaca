/* A 64 x 64 array of doubles read column by column: the pair what_if pad
 * is tested on. With COLS 64 each row is 512 bytes, so the 64 rows of a
 * column fall in a few cache sets and conflict; with -DCOLS=72 each row is
 * padded by 64 bytes (the walk still reads columns 0 to 63) and the rows
 * spread over every set. */
#include <stdio.h>
#include "gleipnir.h"

#ifndef COLS
#define COLS 64
#endif

static double A[64][COLS];

int main(void)
{
    int i, j;
    double s = 0;
    for (i = 0; i < 64; i++)
        for (j = 0; j < COLS; j++)
            A[i][j] = i + j;
    GL_START;
    for (j = 0; j < 64; j++)
        for (i = 0; i < 64; i++)
            s += A[i][j];
    GL_STOP;
    printf("%g\n", s);
    return 0;
}
