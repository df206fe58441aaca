/* Two heap blocks touched in a known order, for tests/heap_exports.rs. */
#include <stdlib.h>

#include "gleipnir.h"

int main(void)
{
   int *a = malloc(16);
   int *b = malloc(8);
   GL_START;
   a[0] = 1;
   b[0] = 2;
   b[1] = 3;
   b[0] = 4;
   GL_STOP;
   free(a);
   free(b);
   return 0;
}
