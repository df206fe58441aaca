/* zlib (the sources bundled in the libz-sys crate): compress2 and
 * uncompress on heap buffers; zlib allocates its state for itself. */
#include "corpus.h"
#include <zlib.h>
#include <string.h>

#define LEN 1500

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   unsigned char *src = malloc(LEN);
   for (int i = 0; i < LEN; i++)
      src[i] = (unsigned char)("abcabcabd"[i % 9] + i / 300);
   uLongf cap = compressBound(LEN);
   unsigned char *packed = malloc(cap);
   unsigned char *back = malloc(LEN);
   corpus_array("src", src, LEN);
   corpus_array("packed", packed, cap);
   corpus_array("back", back, LEN);
   uLongf plen = cap, blen = LEN;
   CORPUS_START;
   int r1 = compress2(packed, &plen, src, LEN, 6);
   int r2 = uncompress(back, &blen, packed, plen);
   CORPUS_STOP;
   corpus_close();
   printf("%d %d %lu %d\n", r1, r2, (unsigned long)plen, memcmp(src, back, LEN));
   return 0;
}
