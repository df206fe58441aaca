/* Calls the shared library's lib_fill three times, on 10, 20 and 30
 * elements of one heap array: under set_region function lib_fill 2 the
 * trace holds the second call alone, 20 stores of 8 bytes into a. */
#include <stdio.h>
#include <stdlib.h>

void lib_fill(double *p, int n);

int main(void)
{
    double *a = malloc(64 * sizeof *a);
    lib_fill(a, 10);
    lib_fill(a, 20);
    lib_fill(a, 30);
    printf("%g\n", a[5]);
    free(a);
    return 0;
}
