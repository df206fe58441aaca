/* Non-PIE and static executables: stack, static and global arrays are
 * named from DWARF at the executable's link address; a static
 * executable's heap, which Valgrind cannot record, is said to be so. */
#include "corpus.h"

double g[32];

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   static int s[16];
   int a[24];
   double *h = malloc(20 * sizeof *h);
   corpus_array("g", g, sizeof g);
   corpus_array("s", s, sizeof s);
   corpus_array("a", a, sizeof a);
   corpus_array("h", h, 20 * sizeof *h);
   CORPUS_START;
   for (int i = 0; i < 24; i++)
      a[i] = i * 3;
   for (int i = 0; i < 16; i++)
      s[i] = a[i] + a[i + 8];
   for (int i = 0; i < 20; i++)
      h[i] = s[i % 16] * 0.5;
   for (int i = 0; i < 32; i++)
      g[i] = h[i % 20] + a[i % 24];
   CORPUS_STOP;
   corpus_close();
   printf("%g\n", g[31]);
   return 0;
}
