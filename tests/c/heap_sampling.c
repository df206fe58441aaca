/*
 * heap_sampling.c: exactly N malloc/free pairs in the main thread (sizes
 * 24 to 80 bytes), then N/2 in a second thread, alternating malloc and
 * free, so the heap profiler's sampled durations can be checked against
 * counts known from the source: 2N calls in thread 1, N in thread 2. No
 * output, so the C library makes no allocation of its own.
 */
#include <pthread.h>
#include <stdlib.h>

#define N 40000

static volatile char sink;

static void pairs(int n)
{
   for (int i = 0; i < n; i++) {
      char *p = malloc(24 + (size_t)(i & 7) * 8); /* SITE_PAIR */
      p[0] = (char)i;
      sink += p[0];
      free(p);
   }
}

static void *worker(void *arg)
{
   (void)arg;
   pairs(N / 2);
   return NULL;
}

int main(void)
{
   pairs(N);
   pthread_t t;
   if (pthread_create(&t, NULL, worker, NULL) != 0)
      return 1;
   pthread_join(t, NULL);
   return 0;
}
