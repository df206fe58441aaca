/* The x of every point summed: the pair what_if soa is tested on. Built
 * plain, the points are an array of structures of four doubles, so each
 * line fetched holds two x; with -DSOA, the fields are four arrays and a
 * line holds eight x. Both read x[i] once for each i, in order. */
#include <stdio.h>
#include "gleipnir.h"

#define N 1024

#ifdef SOA
static double x[N], y[N], z[N], w[N];
#define X(i) x[i]
#define SET(i, v) (x[i] = (v), y[i] = (v), z[i] = (v), w[i] = (v))
#else
struct P {
    double x, y, z, w;
};
static struct P p[N];
#define X(i) p[i].x
#define SET(i, v) (p[i].x = (v), p[i].y = (v), p[i].z = (v), p[i].w = (v))
#endif

int main(void)
{
    int i;
    double s = 0;
    for (i = 0; i < N; i++)
        SET(i, i);
    GL_START;
    for (i = 0; i < N; i++)
        s += X(i);
    GL_STOP;
    printf("%g\n", s);
    return 0;
}
