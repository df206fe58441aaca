/* LZ4 traced by function (set_region function LZ4_decompress_safe, the
 * pins ignored): a buffer is compressed before the region, and the
 * markers enclose exactly the one call of LZ4_decompress_safe, so that
 * Lackey's bytes between them are the call's. */
#include "corpus.h"
#include <lz4.h>
#include <string.h>

#define LEN 4096

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   char *src = malloc(LEN);
   for (int i = 0; i < LEN; i++)
      src[i] = "traced by its name "[i % 19] + (i / 700);
   int cap = LZ4_compressBound(LEN);
   char *packed = malloc(cap);
   char *back = malloc(LEN);
   int n = LZ4_compress_default(src, packed, LEN, cap);
   corpus_array("src", src, LEN);
   corpus_array("packed", packed, cap);
   corpus_array("back", back, LEN);
   CORPUS_START;
   int m = LZ4_decompress_safe(packed, back, n, LEN);
   CORPUS_STOP;
   corpus_close();
   printf("%d %d %d\n", n, m, memcmp(src, back, LEN));
   return 0;
}
