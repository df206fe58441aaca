/* Definitions chosen by conditional directives, some depending on what the
   including file defined before including this header. */
#ifndef NM_COND_H
#define NM_COND_H
#define WIDE 1
#if ROWS_FIRST
#define ALLOC_ROWS(v, n) double (*v)[M] = malloc((n) * (M) * sizeof(double))
#else
#define ALLOC_ROWS(v, n) double *v = malloc(sizeof(double))
#endif
#endif
