/*
 * heap_killed.c: a program that dies by a signal, for the heap profiler's
 * checkpoints (a profile without calls keeps the summary of the last one).
 *
 *   - KEPT blocks of 100 bytes (the site marked KEPT), then FREED of them freed;
 *   - it sleeps 2.5 s, so the collector's checkpoints (about every second)
 *     take those calls;
 *   - LATE blocks of 4000 bytes (the site marked LATE), and at once SIGKILL: no
 *     exit(), no destructor, no summary at exit.
 *
 * The last checkpoint therefore holds KEPT allocations (10 000 bytes),
 * FREED frees, (KEPT - FREED) * 100 live bytes, and nothing of the LATE site.
 * No output, so the C library makes no allocation of its own.
 */
#include <signal.h>
#include <stdlib.h>
#include <time.h>

#define KEPT 100
#define FREED 30
#define LATE 5

static void *blocks[KEPT + LATE];

int main(void)
{
   for (int i = 0; i < KEPT; i++)
      blocks[i] = malloc(100); /* SITE_KEPT */
   for (int i = 0; i < FREED; i++)
      free(blocks[i]);
   struct timespec d = {2, 500000000};
   nanosleep(&d, NULL);
   for (int i = KEPT; i < KEPT + LATE; i++)
      blocks[i] = malloc(4000); /* SITE_LATE */
   raise(SIGKILL);
   return 0;
}
