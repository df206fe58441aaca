/* A library wrapper in the style of polybench.c: the block is returned to
   the caller, through two levels. */
#include <stdio.h>
#include <stdlib.h>
static void *xmalloc(size_t alloc_sz)
{
    void *ret = NULL;
    int err = posix_memalign(&ret, 4096, alloc_sz);
    if (!ret || err) {
        fprintf(stderr, "cannot allocate memory\n");
        exit(1);
    }
    return ret;
}
void *alloc_data(unsigned long n, int elt_size)
{
    size_t val = n;
    val *= elt_size;
    void *ret = xmalloc(val);
    return ret;
}
