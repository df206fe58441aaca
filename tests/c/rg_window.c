/* A run of just under 10^8 accesses: 49 950 000 steps of one load and one
 * store of a heap array (the loader and libc add some 45 000 more). Under
 * set_region window 0 1000000 10000000 it holds exactly 10 windows of
 * 10^6 accesses, at the run's accesses 0, 10^7, ..., 9 x 10^7. */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    volatile long *v = malloc(1024 * sizeof *v);
    long t;
    for (t = 0; t < 1024; t++)
        v[t] = t;
    for (t = 0; t < 49950000; t++)
        v[t & 1023] = v[(t + 1) & 1023] + 1;
    printf("%ld\n", v[5]);
    return 0;
}
