/* A helper that returns through a conditional: the statement reader
   named all three buffers after the helper's local `p`. */
#include <stdlib.h>
#include <string.h>
#include "gleipnir.h"

static void *xbuf(size_t n)
{
   void *p = NULL;
   return posix_memalign(&p, 64, n) == 0 ? p : NULL;
}

int main(void)
{
   size_t n = 256, i;
   unsigned char *src, *dst, *back;
   GL_START;
   src = xbuf(n), dst = xbuf(n), back = xbuf(n);
   for (i = 0; i < n; i++) src[i] = (unsigned char)i;
   for (i = 0; i < n; i++) dst[i] = src[i] ^ 0x5a;
   for (i = 0; i < n; i++) back[i] = dst[i] ^ 0x5a;
   GL_STOP;
   return back[7] != 7;
}
