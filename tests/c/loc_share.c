/* Two threads increment their own field of one struct. Without PAD the
 * fields share a cache line (false sharing); with -DPAD each field has a
 * line of its own. The threads meet at a barrier first, so both are alive
 * together: Valgrind gives a finished thread's id to the next new thread. */
#include <pthread.h>
#include "gleipnir.h"
#define ROUNDS 20000
struct counters {
    long a;
#ifdef PAD
    char pad_a[64 - sizeof(long)];
#endif
    long b;
} __attribute__((aligned(64)));
static struct counters hits;
static pthread_barrier_t both;
static void *bump_a(void *unused)
{
    int i;
    pthread_barrier_wait(&both);
    for (i = 0; i < ROUNDS; i++)
        hits.a++; /* a line */
    return unused;
}
static void *bump_b(void *unused)
{
    int i;
    pthread_barrier_wait(&both);
    for (i = 0; i < ROUNDS; i++)
        hits.b++; /* b line */
    return unused;
}
int main(void)
{
    pthread_t t1, t2;
    pthread_barrier_init(&both, NULL, 2);
    GL_START;
    pthread_create(&t1, NULL, bump_a, NULL);
    pthread_create(&t2, NULL, bump_b, NULL);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    GL_STOP;
    return hits.a != hits.b;
}
