/* Allocation helpers in a header, as HPC codes write them. */
#ifndef IDIOM_ALLOC_H
#define IDIOM_ALLOC_H
#include <stdlib.h>

template <typename T> T *Allocate(size_t n)
{
   return static_cast<T *>(malloc(n * sizeof(T)));
}

static inline double *alloc_doubles(size_t n)
{
   double *p = (double *)malloc(n * sizeof *p);
   return p;
}
#endif
