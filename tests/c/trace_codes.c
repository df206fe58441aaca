/*
 * trace_codes.c: a region that first runs 128 memory operations once each
 * (so they are the trace's first 128 sites), then a loop of N stores whose
 * sites are defined after them. tests/trace_size.rs checks that the loop's
 * accesses still take about one byte each in the trace (format 5 gives the
 * hottest sites the one-byte codes) and that every access decodes where it
 * was made.
 */
#include "gleipnir.h"

#define N 100000

static double warm[128];
static double a[N];

#define W(k) warm[k] = (k);
#define W4(k) W(k) W((k) + 1) W((k) + 2) W((k) + 3)
#define W16(k) W4(k) W4((k) + 4) W4((k) + 8) W4((k) + 12)
#define W64(k) W16(k) W16((k) + 16) W16((k) + 32) W16((k) + 48)

int main(void)
{
   GL_START;
   W64(0)
   W64(64)
   for (long i = 0; i < N; i++)
      a[i] = 3.0 * i;
   GL_STOP;
   return a[N - 1] > 0 ? 0 : 1;
}
