/* Four threads each call work() once on their own part of one heap
 * array: thread k (0..3, numbered k + 2 in the trace, the main thread
 * being 1) stores (k + 1) * 10 doubles into data. Before and after the
 * call each thread stores 8 bytes into scratch, outside the function.
 * Inside work() each thread first spins on registers long enough for
 * Valgrind to switch threads, so that the threads are inside at the same
 * time. Under set_region function work the trace holds exactly those
 * stores into data, per thread, and nothing of scratch. */
#include <pthread.h>
#include <stdlib.h>

#define T 4
#define PART 64

static double *data;
static char *scratch;

__attribute__((noinline)) static void work(double *p, int n)
{
    register unsigned long x = 1;
    register long i;
    for (i = 0; i < 3000000; i++)
        x = x * 6364136223846793005UL + 1442695040888963407UL;
    for (i = 0; i < n; i++)
        p[i] = (double) (x & 7) + i;
}

static void *run(void *arg)
{
    long k = (long) arg;
    int i;
    for (i = 0; i < 8; i++)
        scratch[k * 100 + i] = (char) i;
    work(data + k * PART, (int) (k + 1) * 10);
    for (i = 0; i < 8; i++)
        scratch[k * 100 + 50 + i] = (char) i;
    return NULL;
}

int main(void)
{
    pthread_t t[T];
    long k;
    data = malloc(T * PART * sizeof *data);
    scratch = malloc(777);
    for (k = 0; k < T; k++)
        pthread_create(&t[k], NULL, run, (void *) k);
    for (k = 0; k < T; k++)
        pthread_join(t[k], NULL);
    k = (long) data[3] + scratch[3];
    free(data);
    free(scratch);
    return k < 0;
}
