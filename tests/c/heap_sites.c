/* Allocation sites with known counts, for tests/heap_sites.rs. */
#include <stdlib.h>

#include "gleipnir.h"

/* Inlined into main even at -O0: its malloc's return address resolves to
 * two frames, make_buf [inlined] and main. */
static inline __attribute__((always_inline)) char *make_buf(size_t n)
{
   return malloc(n); /* SITE_INLINE_MALLOC */
}

static void *leaky(size_t n)
{
   return calloc(1, n); /* SITE_CALLOC */
}

int main(void)
{
   char *keep[3];
   for (int i = 0; i < 3; i++)
      keep[i] = malloc(100); /* SITE_KEEP */
   for (int i = 0; i < 5; i++) {
      char *t = make_buf(40); /* SITE_INLINE_CALL */
      t[0] = 1;
      free(t);
   }
   void *l = leaky(256); /* SITE_LEAKY_CALL */
   GL_START;
   char *r = malloc(10); /* SITE_SMALL */
   r[0] = 2;
   r = realloc(r, 1000); /* SITE_REALLOC */
   r[999] = 3;
   GL_STOP;
   free(r);
   for (int i = 0; i < 3; i++)
      free(keep[i]);
   return l == NULL;
}
