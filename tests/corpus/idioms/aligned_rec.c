/* Item: an over-aligned local in a recursive function. Each level's
   `tile` is in its own realigned frame; every level's accesses are
   `tile`, none in a frame row. */
#include "corpus.h"

#define DEPTH 5
static double *tiles[DEPTH + 1];

static double depth_sum(int d, double *out)
{
   double tile[64] __attribute__((aligned(64)));
   tiles[d] = tile;
   for (int i = 0; i < 64; i++)
      tile[i] = d + i * 0.5;
   double s = 0;
   if (d > 0)
      s += depth_sum(d - 1, out);
   for (int i = 0; i < 64; i++)
      s += tile[i];
   out[d] = s;
   return s;
}

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   double *out = malloc(8 * sizeof *out);
   corpus_array("out", out, 8 * sizeof *out);
   CORPUS_START;
   double s = depth_sum(DEPTH, out);
   CORPUS_STOP;
   for (int d = 0; d <= DEPTH; d++)
      corpus_array("tile", tiles[d], 64 * sizeof(double));
   corpus_close();
   printf("%g\n", s);
   return 0;
}
