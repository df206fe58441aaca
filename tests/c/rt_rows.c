/* Rows built by a helper (issue: names from where the program keeps its
   pointers). alloc_2d's local `new` holds each pointer table until it is
   stored into net->w1 or net->w2; alloc_1d's local `p` holds each row
   until it is stored into new[i]. The rows of w1 and of w2 must be told
   apart: net->w1[i] and net->w2[i]. */
#include <stdlib.h>
#include "gleipnir.h"

struct net {
   int n;
   float **w1;
   float **w2;
};

static float *alloc_1d(int n)
{
   float *p = malloc(n * sizeof *p);
   return p;
}

static float **alloc_2d(int m, int n)
{
   float **new = malloc(m * sizeof *new);
   int i;
   for (i = 0; i < m; i++)
      new[i] = alloc_1d(n);
   return new;
}

int main(void)
{
   struct net *net;
   int i, j;
   GL_START;
   net = malloc(sizeof *net);
   net->n = 4;
   net->w1 = alloc_2d(4, 3);
   net->w2 = alloc_2d(4, 3);
   for (i = 0; i < 4; i++)
      for (j = 0; j < 3; j++)
         net->w1[i][j] = 1.0f;
   for (i = 0; i < 4; i++)
      for (j = 0; j < 3; j++)
         net->w2[i][j] = net->w1[i][j];
   GL_STOP;
   return (int)net->w2[3][2] - 1;
}
