/* libdeflate (the sources bundled in the libdeflate-sys crate): a
 * compressor and a decompressor that the library allocates, run on heap
 * buffers. */
#include "corpus.h"
#include <libdeflate.h>
#include <string.h>

#define LEN 1800

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   unsigned char *src = malloc(LEN);
   for (int i = 0; i < LEN; i++)
      src[i] = (unsigned char)("deflate me, deflate "[i % 20] ^ (i / 600));
   size_t cap = LEN + 256;
   unsigned char *packed = malloc(cap);
   unsigned char *back = malloc(LEN);
   corpus_array("src", src, LEN);
   corpus_array("packed", packed, cap);
   corpus_array("back", back, LEN);
   size_t got = 0;
   CORPUS_START;
   struct libdeflate_compressor *c = libdeflate_alloc_compressor(1);
   size_t n = libdeflate_deflate_compress(c, src, LEN, packed, cap);
   struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
   int r = libdeflate_deflate_decompress(d, packed, n, back, LEN, &got);
   CORPUS_STOP;
   corpus_close();
   printf("%zu %d %zu %d\n", n, r, got, memcmp(src, back, LEN));
   return 0;
}
