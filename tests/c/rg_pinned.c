/* 64 ints written, then read between the pins: 64 loads of a inside the
 * region, 64 stores and 64 loads in the whole run. The counter and the sum
 * live in registers, so a's are the program's only global accesses. Built
 * with -DGL_NOPINS the pins are empty. */
#include <stdio.h>
#include "gleipnir.h"

static int a[64];

int main(void)
{
    register int i, s = 0;
    for (i = 0; i < 64; i++)
        a[i] = i;
    GL_START;
    for (i = 0; i < 64; i++)
        s += a[i];
    GL_STOP;
    printf("%d\n", s);
    return 0;
}
