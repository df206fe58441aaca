/* zlib traced on one call of a function called five times (set_region
 * function adler32 3, the pins ignored): five buffers are checksummed in
 * turn, and the markers enclose only the third call, so that Lackey's
 * bytes between them are that call's: the third buffer read whole, the
 * others untouched. */
#include "corpus.h"
#include <zlib.h>

#define LEN 3000

static void fill(unsigned char *p, int n, int k)
{
   for (int i = 0; i < n; i++)
      p[i] = (unsigned char)(i * 7 + k);
}

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   unsigned char *b0 = malloc(LEN);
   unsigned char *b1 = malloc(LEN + 1);
   unsigned char *b2 = malloc(LEN + 2);
   unsigned char *b3 = malloc(LEN + 3);
   unsigned char *b4 = malloc(LEN + 4);
   fill(b0, LEN, 0);
   fill(b1, LEN + 1, 1);
   fill(b2, LEN + 2, 2);
   fill(b3, LEN + 3, 3);
   fill(b4, LEN + 4, 4);
   corpus_array("b0", b0, LEN);
   corpus_array("b1", b1, LEN + 1);
   corpus_array("b2", b2, LEN + 2);
   corpus_array("b3", b3, LEN + 3);
   corpus_array("b4", b4, LEN + 4);
   uLong sum = adler32(1, b0, LEN);
   sum = adler32(sum, b1, LEN + 1);
   CORPUS_START;
   sum = adler32(sum, b2, LEN + 2);
   CORPUS_STOP;
   sum = adler32(sum, b3, LEN + 3);
   sum = adler32(sum, b4, LEN + 4);
   corpus_close();
   printf("%lu\n", (unsigned long)sum);
   return 0;
}
