/*
 * heap_summary.c: allocation patterns whose counts are known from the
 * source, for the heap profiler's summary (kept while recording) against
 * the reader's pass over the calls.
 *
 *   - A producer thread allocates ROUNDS blocks of 64 bytes (the site marked MADE)
 *     and hands them through a mutex-protected ring to a consumer thread,
 *     which frees them: every free is another thread's block.
 *   - The main thread, inside GL_START/GL_STOP, grows one block by realloc
 *     from 16 bytes in GROWS steps of 16 (GROW: the first call is a
 *     realloc(NULL, 16)), then frees it.
 *   - It then allocates LEAKS blocks of 100 bytes with calloc (LEAK)
 *     and keeps them: they are never freed.
 *   - And TEMPS pairs of posix_memalign(64, 48) + free (TEMP): each
 *     a temporary allocation.
 *
 * No output, so the C library makes no allocation of its own beyond the
 * threads' own.
 */
#include <pthread.h>
#include <stdlib.h>

#include "gleipnir.h"

#define ROUNDS 20000
#define GROWS 300
#define LEAKS 7
#define TEMPS 500
#define SLOTS 64

static void *ring[SLOTS];
static unsigned head, tail;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static void *kept[LEAKS];
static volatile char sink;

static void *producer(void *arg)
{
   (void)arg;
   for (int i = 0; i < ROUNDS; i++) {
      char *p = malloc(64); /* SITE_MADE */
      p[0] = (char)i;
      pthread_mutex_lock(&lock);
      while (head - tail == SLOTS)
         pthread_cond_wait(&changed, &lock);
      ring[head++ % SLOTS] = p;
      pthread_cond_broadcast(&changed);
      pthread_mutex_unlock(&lock);
   }
   return NULL;
}

static void *consumer(void *arg)
{
   (void)arg;
   for (int i = 0; i < ROUNDS; i++) {
      pthread_mutex_lock(&lock);
      while (head == tail)
         pthread_cond_wait(&changed, &lock);
      char *p = ring[tail++ % SLOTS];
      pthread_cond_broadcast(&changed);
      pthread_mutex_unlock(&lock);
      sink += p[0];
      free(p);
   }
   return NULL;
}

int main(void)
{
   pthread_t a, b;
   if (pthread_create(&a, NULL, producer, NULL) || pthread_create(&b, NULL, consumer, NULL))
      return 1;
   GL_START;
   char *g = NULL;
   for (int i = 1; i <= GROWS; i++) {
      g = realloc(g, (size_t)i * 16); /* SITE_GROW */
      g[0] = (char)i;
   }
   free(g);
   GL_STOP;
   for (int i = 0; i < LEAKS; i++)
      kept[i] = calloc(1, 100); /* SITE_LEAK */
   for (int i = 0; i < TEMPS; i++) {
      void *t;
      if (posix_memalign(&t, 64, 48)) /* SITE_TEMP */
         return 1;
      sink += ((char *)t)[0];
      free(t);
   }
   pthread_join(a, NULL);
   pthread_join(b, NULL);
   return 0;
}
