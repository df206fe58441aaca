/* Two threads, one mutex, one heap block of 6 longs, for
   tests/heap_hpcmp.rs.  No pins: HPCMP's scope is the whole run.
   Reads and writes of the block, by thread and sync interval:
     main:   w shared[0] (8)                             -> Fork
             lock; w shared[2] (8); unlock               -> Acquire, Release
             join                                        -> Join
             r shared[1], shared[2] (16); w shared[3] (8) -> Free
     worker: lock; spin N; r shared[0] (8); w shared[1] (8); unlock
                                                         -> Acquire, Release
   The worker's spin is 2 N + 1 instructions (mov, then dec and jnz N
   times), N from the command line (default 1000), so its Release's
   instruction count grows by exactly 2 per unit of N. */
#include <pthread.h>
#include <stdlib.h>

static pthread_mutex_t m;
static long *shared;
static long spins = 1000;

static void *worker(void *p)
{
   pthread_mutex_lock(&m);
   __asm__ volatile("mov %0, %%rcx\n1:\tdec %%rcx\n\tjnz 1b" : : "r"(spins) : "rcx", "cc");
   shared[1] = shared[0] + 1;
   pthread_mutex_unlock(&m);
   return NULL;
}

int main(int argc, char **argv)
{
   pthread_t t;
   if (argc > 1) spins = atol(argv[1]);
   pthread_mutex_init(&m, NULL);
   shared = malloc(6 * sizeof(long));
   shared[0] = 41;
   pthread_create(&t, NULL, worker, NULL);
   pthread_mutex_lock(&m);
   shared[2] = 7;
   pthread_mutex_unlock(&m);
   pthread_join(t, NULL);
   shared[3] = shared[1] + shared[2];
   free(shared);
   pthread_mutex_destroy(&m);
   return 0;
}
