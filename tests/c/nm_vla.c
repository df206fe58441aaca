/* Arrays made on the stack at run time: a variable-length array, a
   two-dimensional one with a constant inner dimension, and an alloca
   block held by a pointer. The consumer is not inlined, so -O2 keeps
   every array. */
#include <alloca.h>
#include <stdlib.h>
#include "gleipnir.h"

__attribute__((noinline)) static double total(const double *a, int n)
{
   double s = 0;
   for (int i = 0; i < n; i++) s += a[i];
   return s;
}

__attribute__((noinline)) static double work(int n)
{
   double v[n];                              /* VLA */
   float grid[n][4];                         /* VLA2 */
   double *p = alloca(n * sizeof(double));   /* ALLOCA */
   GL_START;
   for (int i = 0; i < n; i++) v[i] = i;
   for (int i = 0; i < n; i++)
      for (int j = 0; j < 4; j++) grid[i][j] = (float)(i + j);
   for (int i = 0; i < n; i++) p[i] = v[i] * 2 + grid[i][1];
   double s = total(p, n);
   GL_STOP;
   return s;
}

int main(int argc, char **argv)
{
   int n = argc > 1 ? atoi(argv[1]) : 64;
   return (int)work(n) & 1;
}
