/* Item: cross-file inlining (-O2 -flto): the block that make_row, of
 * lto_helper.c, allocates is named by the statement here that stores it. */
#include "corpus.h"

double *make_row(int n);

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   double *vals = make_row(50);
   corpus_array("vals", vals, 50 * sizeof(double));
   CORPUS_START;
   for (int i = 0; i < 50; i++)
      vals[i] = i * 1.5;
   double s = 0;
   for (int i = 0; i < 50; i++)
      s += vals[i];
   CORPUS_STOP;
   corpus_close();
   printf("%g\n", s);
   return 0;
}
