/* Item: a helper of another file that LTO inlines into its caller. */
#include <stdlib.h>

double *make_row(int n)
{
   double *row = malloc(n * sizeof *row);
   return row;
}
