/* step() is called five times, call k (1..5) adding 1 to the first
 * 10 * k ints of a: at -O0 one 4-byte load and one 4-byte store per
 * element. Call 3 alone: 30 loads and 30 stores of a; calls 2-3: 50 of
 * each; all five: 150. */
#include <stdio.h>

static int a[64];

static void step(int *p, int k)
{
    int i;
    for (i = 0; i < 10 * k; i++)
        p[i] += 1;
}

int main(void)
{
    int k;
    for (k = 1; k <= 5; k++)
        step(a, k);
    printf("%d\n", a[0]);
    return 0;
}
