/* Blocks whose addresses live only in registers at the region's start
   (built -O2): a caller keeps its buffer in a callee-saved register that
   the opener saves in its frame, and the opener holds only a pointer into
   the buffer. The helper returns through a conditional, so the statement
   reader alone names the buffer after the helper's local `p`. */
#include <stdio.h>
#include <stdlib.h>
#include "gleipnir.h"

static void *xbuf(size_t n)
{
   void *p = NULL;
   return posix_memalign(&p, 64, n) == 0 ? p : NULL;
}

__attribute__((noinline)) static double weight(size_t i)
{
   return 1.0 / (double)(i + 1);
}

__attribute__((noinline)) static double partial(const double *from, size_t len)
{
   double s = 0;
   size_t i;
   GL_START;
   for (i = 0; i < len; i++)
      s += weight(i) * from[i];
   GL_STOP;
   return s;
}

int main(int argc, char **argv)
{
   size_t n = 1000 + (size_t)argc, i;
   double *samples = xbuf(n * sizeof *samples);
   double *other = xbuf(n * sizeof *other);
   (void)argv;
   for (i = 0; i < n; i++)
      samples[i] = (double)i, other[i] = 2.0;
   double s = partial(samples + 10, 100);
   double t = partial(other, 50);
   printf("%g %g %g %g\n", s, t, samples[n - 1], other[3]);
   free(samples);
   free(other);
   return 0;
}
