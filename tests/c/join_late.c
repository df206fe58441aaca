/* A thread joined after another thread took its Valgrind slot: main
 * creates a (thread 2), waits until a has exited (the process is down to
 * one task in /proc/self/task), then creates b (thread 3), which Valgrind
 * gives a's freed slot, and joins a, then b. The trace's two joins must
 * name threads 2 and 3 (tests/heap_hpcmp.rs). */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

static int tasks(void)
{
   int n = 0;
   DIR *d = opendir("/proc/self/task");
   if (!d)
      return -1;
   for (struct dirent *e; (e = readdir(d));)
      n += e->d_name[0] != '.';
   closedir(d);
   return n;
}

static void *work(void *arg)
{
   return arg;
}

int main(void)
{
   pthread_t a, b;
   void *ra, *rb;
   pthread_create(&a, 0, work, (void *)1);
   for (int i = 0; i < 1000 && tasks() > 1; i++) {
      struct timespec d = {0, 10000000};
      nanosleep(&d, 0);
   }
   pthread_create(&b, 0, work, (void *)2);
   pthread_join(a, &ra);
   pthread_join(b, &rb);
   printf("%ld %ld\n", (long)ra, (long)rb);
   return 0;
}
