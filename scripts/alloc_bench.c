/*
 * alloc_bench.c: an allocation-dense program for the heap profiler
 * benchmark (scripts/bench.sh heap) and the heap commands.
 *
 *   alloc_bench [THREADS [OPS]]     default 4 threads, 5000000 ops each
 *
 * Each thread does OPS malloc/free pairs of mixed sizes (16 B to 4 KiB,
 * mostly small) on a live set of 64 blocks, so the heap stays small and the
 * allocator, not the memory, is what is measured. The region pins mark the
 * threads' work.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "gleipnir.h"

#define LIVE 64

static long ops = 5000000;

static const size_t sizes[16] = {16, 16, 24, 32, 32, 48, 64, 64, 96, 128, 160, 256, 512, 1024, 2048, 4096};

static void *worker(void *arg)
{
   uint64_t x = 0x9e3779b97f4a7c15ull * ((uintptr_t)arg + 1);
   char *live[LIVE] = {0};
   unsigned long sum = 0;
   for (long i = 0; i < ops; i++) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      unsigned slot = (unsigned)(x % LIVE);
      free(live[slot]);
      char *p = malloc(sizes[(x >> 8) & 15]);
      p[0] = (char)i;
      sum += (unsigned char)p[0];
      live[slot] = p;
   }
   for (int i = 0; i < LIVE; i++)
      free(live[i]);
   return (void *)sum;
}

int main(int argc, char **argv)
{
   int threads = argc > 1 ? atoi(argv[1]) : 4;
   if (argc > 2)
      ops = atol(argv[2]);
   if (threads < 1 || threads > 256 || ops < 0) {
      fprintf(stderr, "usage: alloc_bench [THREADS (1-256) [OPS]]\n");
      return 2;
   }
   pthread_t th[256];
   GL_START;
   for (int t = 0; t < threads; t++)
      pthread_create(&th[t], NULL, worker, (void *)(uintptr_t)t);
   unsigned long total = 0;
   for (int t = 0; t < threads; t++) {
      void *r;
      pthread_join(th[t], &r);
      total += (unsigned long)r;
   }
   GL_STOP;
   printf("%d threads x %ld malloc/free: checksum %lu\n", threads, ops, total);
   return 0;
}
