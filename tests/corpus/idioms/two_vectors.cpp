// Two containers declared on one line: each buffer is named by its own
// container or by its site with a note, never by the other container.
#include "corpus.h"
#include <vector>

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   std::vector<double> first(40), second(60);
   corpus_array("first", first.data(), 40 * sizeof(double));
   corpus_array("second", second.data(), 60 * sizeof(double));
   CORPUS_START;
   for (int i = 0; i < 40; i++)
      first[i] = i;
   for (int i = 0; i < 60; i++)
      second[i] = first[i % 40] * 2;
   CORPUS_STOP;
   corpus_close();
   printf("%g\n", second[59]);
   return 0;
}
