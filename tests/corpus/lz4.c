/* LZ4 (the sources bundled in the lz4-sys crate): a buffer compressed and
 * decompressed, and again through a stream the library allocates. */
#include "corpus.h"
#include <lz4.h>
#include <string.h>

#define LEN 2048

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   char *src = malloc(LEN);
   for (int i = 0; i < LEN; i++)
      src[i] = "mapvis names memory "[i % 20] + (i / 512);
   int cap = LZ4_compressBound(LEN);
   char *packed = malloc(cap);
   char *back = malloc(LEN);
   corpus_array("src", src, LEN);
   corpus_array("packed", packed, cap);
   corpus_array("back", back, LEN);
   CORPUS_START;
   int n = LZ4_compress_default(src, packed, LEN, cap);
   int m = LZ4_decompress_safe(packed, back, n, LEN);
   LZ4_stream_t *stream = LZ4_createStream();
   int k = LZ4_compress_fast_continue(stream, src, packed, LEN, cap, 1);
   CORPUS_STOP;
   corpus_array("stream", stream, sizeof *stream);
   corpus_close();
   printf("%d %d %d %d\n", n, m, k, memcmp(src, back, LEN));
   return 0;
}
