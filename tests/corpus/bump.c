/*
 * bump.c: an allocator that never reuses memory, preloaded into the
 * programs that tests/corpus.rs runs under Lackey.
 *
 * Under mapvis's tool, Valgrind's own allocator serves malloc: it zeroes
 * calloc's blocks and copies realloc's outside the program, so those
 * stores are not the program's. glibc's allocator does the same work
 * inside the program, writes its free lists into freed blocks, and hands
 * a freed block's memory to the next request, so that one address range
 * means two arrays in one region. This allocator does no work in a block:
 * memory comes from fresh anonymous mappings (zero already, so calloc
 * writes nothing), a free block is never reused, and only realloc copies.
 * Each block is preceded by a 16-byte header holding its size.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#define CHUNK (64UL << 20)

static char *next, *end;

static void *grab(size_t n, size_t align)
{
   if (align < 16)
      align = 16;
   if (n > CHUNK / 2)
      return NULL;
   for (;;) {
      uintptr_t p = ((uintptr_t)next + 16 + align - 1) & ~(uintptr_t)(align - 1);
      if (next && p + n <= (uintptr_t)end) {
         ((size_t *)p)[-1] = n;
         next = (char *)(p + n);
         return (void *)p;
      }
      void *m = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (m == MAP_FAILED)
         return NULL;
      next = m;
      end = (char *)m + CHUNK;
   }
}

void *malloc(size_t n) { return grab(n, 16); }
void free(void *p) { (void)p; }

void *calloc(size_t a, size_t b)
{
   if (b && a > SIZE_MAX / b)
      return NULL;
   return grab(a * b, 16);
}

void *realloc(void *p, size_t n)
{
   void *q = grab(n, 16);
   if (p && q) {
      size_t old = ((size_t *)p)[-1];
      memcpy(q, p, old < n ? old : n);
   }
   return q;
}

void *memalign(size_t align, size_t n) { return grab(n, align); }
void *aligned_alloc(size_t align, size_t n) { return grab(n, align); }
void *valloc(size_t n) { return grab(n, 4096); }
void *pvalloc(size_t n) { return grab((n + 4095) & ~(size_t)4095, 4096); }

int posix_memalign(void **out, size_t align, size_t n)
{
   void *p = grab(n, align);
   if (!p)
      return ENOMEM;
   *out = p;
   return 0;
}

size_t malloc_usable_size(void *p) { return p ? ((size_t *)p)[-1] : 0; }
