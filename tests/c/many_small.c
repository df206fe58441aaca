/* 20000 allocations of 16 bytes and one of 1 MiB, all freed: the size
 * histogram's two size classes have 20000 and 1 allocations, and
 * 320000 and 1048576 bytes. */
#include <stdlib.h>

static void *small[20000];

int main(void)
{
    for (int i = 0; i < 20000; i++)
        small[i] = malloc(16);
    void *big = malloc(1 << 20);
    free(big);
    for (int i = 0; i < 20000; i++)
        free(small[i]);
    return 0;
}
