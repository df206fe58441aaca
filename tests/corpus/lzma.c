/* liblzma (xz 5.2, the sources bundled in the lzma-sys crate): a buffer
 * of text compressed into an .xz stream through the streaming interface
 * (lzma_stream_encoder and lzma_code, fed in pieces and drained into the
 * output in pieces, as a program that streams a file does), then the
 * stream decoded in one call (lzma_stream_buffer_decode).
 *
 * The encoder takes its memory (its state, the price tables, the match
 * finder's window and hash chains) from the harness's lzma_allocator, as
 * a program that limits or accounts for liblzma's memory does: a bump
 * allocator over one block that the harness keeps in `pool.base`. Every
 * piece of the encoder lies in that block, carved by the harness's own
 * allocator, so the name a user gives all of it is the pool's. The
 * decoder allocates its state and dictionary with liblzma's default
 * allocator (malloc); those blocks are liblzma's own, listed by no one.
 *
 * `src`, `packed` and `back` are the harness's buffers: the text, the
 * .xz stream and the decoded copy. The harness's blocks are aligned to
 * pages: liblzma copies with memcpy, and glibc's memcpy picks its moves
 * by the destination's alignment, so the two runs the test compares
 * (whose allocators differ) see the same moves only when the buffers lie
 * at the same offsets in their pages. */
/* aligned_alloc is C11: the test builds liblzma as the crate does, with
 * -std=c99. */
#define _GNU_SOURCE
#include "corpus.h"
#include <lzma.h>
#include <string.h>

#define LEN 12000
#define PIECE 1500
#define POOL (2u << 20)

struct pool {
   unsigned char *base;
   size_t used, cap;
   int calls;
};

static void *pool_alloc(void *opaque, size_t nmemb, size_t size)
{
   struct pool *p = opaque;
   size_t at = (p->used + 63) & ~(size_t)63;
   if (nmemb != 0 && size > (p->cap - at) / nmemb)
      return NULL;
   p->used = at + nmemb * size;
   p->calls++;
   return p->base + at;
}

static void pool_free(void *opaque, void *ptr)
{
   (void)opaque;
   (void)ptr;
}

static size_t page_round(size_t n)
{
   return (n + 4095) & ~(size_t)4095;
}

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   unsigned char *src = aligned_alloc(4096, page_round(LEN));
   for (int i = 0; i < LEN; i++)
      src[i] = (unsigned char)("liblzma models every bit of this; "[i % 34] + (i / 1000) +
                               (i % 97 == 0));
   size_t cap = lzma_stream_buffer_bound(LEN);
   unsigned char *packed = aligned_alloc(4096, page_round(cap));
   unsigned char *back = aligned_alloc(4096, page_round(LEN));
   struct pool pool = {aligned_alloc(4096, POOL), 0, POOL, 0};
   lzma_allocator al = {pool_alloc, pool_free, &pool};

   /* Level 1 (the fast mode, hash chains of four bytes) with a 64 KiB
    * dictionary: the text fits in it, and the match finder's tables stay
    * small enough for a short region. */
   lzma_options_lzma opt;
   lzma_lzma_preset(&opt, 1);
   opt.dict_size = 1u << 16;
   lzma_filter filters[] = {{LZMA_FILTER_LZMA2, &opt}, {LZMA_VLI_UNKNOWN, NULL}};

   corpus_array("src", src, LEN);
   corpus_array("packed", packed, cap);
   corpus_array("back", back, LEN);
   corpus_array("pool.base", pool.base, POOL);

   lzma_stream strm = LZMA_STREAM_INIT;
   strm.allocator = &al;
   uint64_t memlimit = UINT64_MAX;
   size_t in_pos = 0, out_pos = 0;
   lzma_ret r1, r2;
   CORPUS_START;
   r1 = lzma_stream_encoder(&strm, filters, LZMA_CHECK_CRC64);
   size_t fed = 0;
   while (r1 == LZMA_OK) {
      if (strm.avail_in == 0 && fed < LEN) {
         strm.next_in = src + fed;
         strm.avail_in = LEN - fed < PIECE ? LEN - fed : PIECE;
         fed += strm.avail_in;
      }
      if (strm.avail_out == 0) {
         size_t at = (size_t)strm.total_out;
         strm.next_out = packed + at;
         strm.avail_out = cap - at < PIECE ? cap - at : PIECE;
      }
      r1 = lzma_code(&strm, fed < LEN ? LZMA_RUN : LZMA_FINISH);
   }
   size_t n = (size_t)strm.total_out;
   lzma_end(&strm);
   r2 = lzma_stream_buffer_decode(&memlimit, 0, NULL, packed, &in_pos, n, back, &out_pos,
                                  LEN);
   CORPUS_STOP;
   corpus_close();
   printf("%d %d %zu %zu %d %zu %d\n", r1, r2, n, out_pos, memcmp(src, back, LEN),
          pool.used, pool.calls);
   return 0;
}
