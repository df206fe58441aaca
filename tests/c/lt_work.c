/* The other unit of lt_main.c: works on the caller's arena. */
#include "lt_work.h"

__attribute__((noinline)) double fill(struct arena *a, const double *t, int n) {
    double *b = a->base;
    for (int i = 0; i < n; i++)
        b[i] = t[i] + i;
    a->used = n;
    double s = 0;
    for (int i = 0; i < n; i++)
        s += b[i];
    return s;
}
