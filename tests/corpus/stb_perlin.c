/* stb_perlin (Debian's libstb-dev): a grid of noise values; the library's
 * own permutation tables are static arrays in the harness's unit. */
#include "corpus.h"
#define STB_PERLIN_IMPLEMENTATION
#include <stb/stb_perlin.h>

#define NX 12
#define NY 10

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   float *grid = malloc(NX * NY * sizeof *grid);
   corpus_array("grid", grid, NX * NY * sizeof *grid);
   corpus_array("stb__perlin_randtab", stb__perlin_randtab, sizeof stb__perlin_randtab);
   CORPUS_START;
   for (int y = 0; y < NY; y++)
      for (int x = 0; x < NX; x++)
         grid[y * NX + x] = stb_perlin_noise3(x * 0.31f, y * 0.27f, 0.5f, 0, 0, 0);
   float s = 0;
   for (int i = 0; i < NX * NY; i++)
      s += grid[i];
   CORPUS_STOP;
   corpus_close();
   printf("%f\n", s);
   return 0;
}
