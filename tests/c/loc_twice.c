/* Reuse distance by hand: two unit-stride sweeps of a 1024-double array
 * (128 lines of 64 bytes). In the first sweep each line's first access is a
 * first touch; in the second, each line's first access comes after the
 * other 127 lines of the array and the loop's own stack lines. */
#include "gleipnir.h"
#define N 1024
static double twice[N] __attribute__((aligned(64)));
int main(void)
{
    int i;
    double sum = 0;
    GL_START;
    for (i = 0; i < N; i++)
        twice[i] = i; /* first sweep */
    for (i = 0; i < N; i++)
        sum += twice[i]; /* second sweep */
    GL_STOP;
    return sum < 0;
}
