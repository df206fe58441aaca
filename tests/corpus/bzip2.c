/* bzip2 (the sources bundled in the bzip2-sys crate): a buffer compressed
 * and decompressed through the one-call interface, which allocates its
 * state for itself. */
#include "corpus.h"
#include <bzlib.h>
#include <string.h>

#define LEN 1200

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   char *src = malloc(LEN);
   for (int i = 0; i < LEN; i++)
      src[i] = "the quick brown fox "[i % 20] + (i / 400);
   unsigned int cap = LEN + LEN / 100 + 600;
   char *packed = malloc(cap);
   char *back = malloc(LEN);
   corpus_array("src", src, LEN);
   corpus_array("packed", packed, cap);
   corpus_array("back", back, LEN);
   unsigned int plen = cap, blen = LEN;
   CORPUS_START;
   int r1 = BZ2_bzBuffToBuffCompress(packed, &plen, src, LEN, 1, 0, 30);
   int r2 = BZ2_bzBuffToBuffDecompress(back, &blen, packed, plen, 1, 0);
   CORPUS_STOP;
   corpus_close();
   printf("%d %d %u %d\n", r1, r2, plen, memcmp(src, back, LEN));
   return 0;
}
