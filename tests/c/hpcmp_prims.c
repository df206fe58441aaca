/* Sync objects of every kind HPCMP's export covers, with counts known from
 * the source (tests/heap_hpcmp.rs checks them exactly):
 *   lock  mutex, PTHREAD_MUTEX_INITIALIZER: each of 2 workers locks it 4
 *         times: 8 acquires, 8 releases, 2 threads;
 *   rw    rwlock, pthread_rwlock_init: each worker takes 3 read locks and
 *         1 write lock: 8 acquires, 8 releases, 2 threads;
 *   done  semaphore, sem_init: each worker posts once (2 releases), main
 *         waits twice (2 acquires): 3 threads;
 *   cm    mutex, PTHREAD_MUTEX_INITIALIZER: main locks it (1), its
 *         condition wait releases it (1) and takes it again (1), main
 *         unlocks it (1); the signaller locks and unlocks it once: 3
 *         acquires, 3 releases, 2 threads;
 *   cv    condition variable, pthread_cond_init: the signaller signals
 *         (1 release), main's wait is woken (1 acquire): 2 threads.
 * main holds cm from before it creates the signaller until it waits, so
 * the wait always happens. */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>

pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
pthread_rwlock_t rw;
sem_t done;
pthread_mutex_t cm = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t cv;
int ready;
long counter, readsum;

static void *worker(void *arg)
{
   long id = (long)arg;
   for (int k = 0; k < 4; k++) {
      pthread_mutex_lock(&lock);
      counter++;
      pthread_mutex_unlock(&lock);
   }
   for (int k = 0; k < 3; k++) {
      pthread_rwlock_rdlock(&rw);
      readsum += counter;
      pthread_rwlock_unlock(&rw);
   }
   pthread_rwlock_wrlock(&rw);
   counter += id;
   pthread_rwlock_unlock(&rw);
   sem_post(&done);
   return 0;
}

static void *signaller(void *arg)
{
   (void)arg;
   pthread_mutex_lock(&cm);
   ready = 1;
   pthread_cond_signal(&cv);
   pthread_mutex_unlock(&cm);
   return 0;
}

int main(void)
{
   pthread_t t[2], s;
   pthread_rwlock_init(&rw, 0);
   sem_init(&done, 0, 0);
   pthread_cond_init(&cv, 0);
   for (long i = 0; i < 2; i++)
      pthread_create(&t[i], 0, worker, (void *)i);
   sem_wait(&done);
   sem_wait(&done);
   for (int i = 0; i < 2; i++)
      pthread_join(t[i], 0);
   pthread_mutex_lock(&cm);
   pthread_create(&s, 0, signaller, 0);
   while (!ready)
      pthread_cond_wait(&cv, &cm);
   pthread_mutex_unlock(&cm);
   pthread_join(s, 0);
   pthread_cond_destroy(&cv);
   pthread_rwlock_destroy(&rw);
   sem_destroy(&done);
   printf("%ld %ld\n", counter, readsum);
   return 0;
}
