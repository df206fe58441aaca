/* Memory that is neither heap nor a fixed frame slot: an array mapped
   with mmap, and a signal handler's locals on an alternate signal stack
   that malloc allocated. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "gleipnir.h"

static volatile double sink;

static void handler(int sig)
{
   double local[32];
   for (int i = 0; i < 32; i++) local[i] = i * sig;
   double s = 0;
   for (int i = 0; i < 32; i++) s += local[i];
   sink = s;
}

int main(void)
{
   stack_t ss;
   ss.ss_sp = malloc(65536);
   ss.ss_size = 65536;
   ss.ss_flags = 0;
   sigaltstack(&ss, 0);
   struct sigaction sa;
   memset(&sa, 0, sizeof sa);
   sa.sa_handler = handler;
   sa.sa_flags = SA_ONSTACK;
   sigaction(SIGUSR1, &sa, 0);
   size_t n = 512;
   double *grid = mmap(NULL, n * sizeof(double), /* MAP */
                       PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
   GL_START;
   for (size_t i = 0; i < n; i++) grid[i] = i;
   raise(SIGUSR1);
   GL_STOP;
   munmap(grid, n * sizeof(double));
   return 0;
}
