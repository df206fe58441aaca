/* Four threads each call work() once on their own part of one heap
 * array: thread k (0..3, numbered k + 2 in the trace, the main thread
 * being 1) stores (k + 1) * 10 doubles into data. Before and after the
 * call each thread stores 8 bytes into scratch, outside the function.
 * Inside work() each thread first waits at a barrier for the other
 * three, so that all four are inside at the same time whatever the
 * scheduler does (the barrier's own accesses are libc's, into the
 * barrier). Under set_region function work the trace holds exactly those
 * stores into data, per thread, and nothing of scratch. */
#include <pthread.h>
#include <stdlib.h>

#define T 4
#define PART 64

static double *data;
static char *scratch;
static pthread_barrier_t inside;

__attribute__((noinline)) static void work(double *p, int n)
{
    register long i;
    pthread_barrier_wait(&inside);
    for (i = 0; i < n; i++)
        p[i] = (double) i;
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
    pthread_barrier_init(&inside, NULL, T);
    for (k = 0; k < T; k++)
        pthread_create(&t[k], NULL, run, (void *) k);
    for (k = 0; k < T; k++)
        pthread_join(t[k], NULL);
    k = (long) data[3] + scratch[3];
    free(data);
    free(scratch);
    return k < 0;
}
