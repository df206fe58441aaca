/* Item: a 3D array built by nested helpers: alloc_3d makes the table of
   planes and fills it with alloc_2d, which makes each plane's table of
   rows and fills it with alloc_1d. Each level is held by the level above:
   `grid` (the planes' table), `grid[i]` (the rows' tables), `grid[i][j]`
   (the rows). */
#include "corpus.h"

static double *alloc_1d(int n)
{
   double *row = malloc(n * sizeof *row);
   return row;
}

static double **alloc_2d(int m, int n)
{
   double **t = malloc(m * sizeof *t);
   for (int i = 0; i < m; i++)
      t[i] = alloc_1d(n);
   return t;
}

static double ***alloc_3d(int l, int m, int n)
{
   double ***t = malloc(l * sizeof *t);
   for (int i = 0; i < l; i++)
      t[i] = alloc_2d(m, n);
   return t;
}

#define L 3
#define M 4
#define N 5

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   double ***grid = alloc_3d(L, M, N);
   corpus_array("grid", grid, L * sizeof *grid);
   for (int i = 0; i < L; i++) {
      corpus_array("grid[i]", grid[i], M * sizeof **grid);
      for (int j = 0; j < M; j++)
         corpus_array("grid[i][j]", grid[i][j], N * sizeof ***grid);
   }
   CORPUS_START;
   for (int i = 0; i < L; i++)
      for (int j = 0; j < M; j++)
         for (int k = 0; k < N; k++)
            grid[i][j][k] = i * 100 + j * 10 + k;
   double s = 0;
   for (int k = 0; k < N; k++)
      for (int j = 0; j < M; j++)
         for (int i = 0; i < L; i++)
            s += grid[i][j][k];
   CORPUS_STOP;
   corpus_close();
   printf("%g\n", s);
   return 0;
}
