#include <stddef.h>
struct arena {
    double *base;
    size_t used, cap;
};
double fill(struct arena *a, const double *t, int n);
