/* A recursive function called twice from main: sum(10), then sum(20).
 * Each level stores a[n] and loads it back (8 bytes each, at -O0): the
 * first call 10 stores and 10 loads of a, the second 20 and 20. A region
 * by function is each outermost call, its inner calls inside it and not
 * counted: two entries. */
#include <stdio.h>

static long a[32];

static long sum(int n)
{
    if (n == 0)
        return 0;
    a[n] = n;
    return a[n] + sum(n - 1);
}

int main(void)
{
    long s = sum(10) + sum(20);
    printf("%ld\n", s);
    return 0;
}
