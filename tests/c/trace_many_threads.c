/* More threads alive at once than the 1024 the tool once kept per-thread
 * state for: each thread touches a local on its own stack inside the pins.
 * Run with valgrind --max-threads above T + 1. */
#include <pthread.h>
#include "gleipnir.h"
#define T 1040

static pthread_barrier_t all_started;

static void *work(void *arg)
{
    volatile long mine = (long) arg;
    pthread_barrier_wait(&all_started);
    mine = mine + 1; /* MINE */
    return 0;
}

int main(void)
{
    static pthread_t t[T];
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 65536);
    pthread_barrier_init(&all_started, 0, T + 1);
    GL_START;
    for (long i = 0; i < T; i++)
        pthread_create(&t[i], &attr, work, (void *) i);
    pthread_barrier_wait(&all_started);
    for (int i = 0; i < T; i++)
        pthread_join(t[i], 0);
    GL_STOP;
    return 0;
}
