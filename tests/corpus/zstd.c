/* zstd (the sources bundled in the zstd-sys crate): a buffer compressed
 * at level 3 with a checksum and decompressed, through a compression and
 * a decompression context that zstd allocates with the harness's own
 * allocation hooks (ZSTD_customMem): a bump arena over one block that the
 * harness keeps in `ar.base`. Every table, window and workspace zstd
 * makes lies inside that block, so the user's name for all of it is the
 * arena's.
 *
 * The buffers are aligned to pages: zstd copies with memcpy, and glibc's
 * memcpy picks its moves by the destination's alignment, so the two runs
 * the test compares (whose allocators differ) see the same moves only
 * when the buffers lie at the same offsets in their pages. */
#define ZSTD_STATIC_LINKING_ONLY
#include "corpus.h"
#include <string.h>
#include <zstd.h>

#define LEN 6000
#define ARENA (1u << 20)

struct arena {
   unsigned char *base;
   size_t used, cap;
   int calls;
};

static void *arena_alloc(void *opaque, size_t n)
{
   struct arena *a = opaque;
   size_t at = (a->used + 63) & ~(size_t)63;
   if (at + n > a->cap)
      return NULL;
   a->used = at + n;
   a->calls++;
   return a->base + at;
}

static void arena_free(void *opaque, void *p)
{
   (void)opaque;
   (void)p;
}

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   unsigned char *src = aligned_alloc(4096, LEN);
   for (int i = 0; i < LEN; i++)
      src[i] = (unsigned char)("zstd packs this text, "[i % 22] + (i / 700) + (i % 131 == 0));
   size_t cap = ZSTD_compressBound(LEN);
   unsigned char *packed = aligned_alloc(4096, (cap + 4095) & ~(size_t)4095);
   unsigned char *back = aligned_alloc(4096, LEN + 4096 - LEN % 4096);
   struct arena ar = {aligned_alloc(4096, ARENA), 0, ARENA, 0};
   ZSTD_customMem mem = {arena_alloc, arena_free, &ar};
   corpus_array("src", src, LEN);
   corpus_array("packed", packed, cap);
   corpus_array("back", back, LEN);
   corpus_array("ar.base", ar.base, ARENA);
   size_t n, got;
   CORPUS_START;
   ZSTD_CCtx *cctx = ZSTD_createCCtx_advanced(mem);
   ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 3);
   ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
   n = ZSTD_compress2(cctx, packed, cap, src, LEN);
   ZSTD_DCtx *dctx = ZSTD_createDCtx_advanced(mem);
   got = ZSTD_decompressDCtx(dctx, back, LEN, packed, n);
   CORPUS_STOP;
   corpus_close();
   printf("%zu %zu %d %zu %d\n", n, got, memcmp(src, back, LEN), ar.used, ar.calls);
   return 0;
}
