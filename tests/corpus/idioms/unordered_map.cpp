// Item: a std::unordered_map built before the region and searched in it.
// Its bucket array and its nodes are held by the map object (the bucket
// array, the first node) and by each other (the nodes' links): all are
// `m`, one row.
#include "corpus.h"
#include <unordered_map>

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   std::unordered_map<int, double> m;
   m.reserve(64);
   for (int k = 0; k < 40; k++)
      m.emplace(k * 7, k * 0.25);
   // Each node (libstdc++'s iterator shows it: `_M_cur`), link and value.
   for (auto it = m.begin(); it != m.end(); ++it)
      corpus_array("m", it._M_cur, sizeof *it._M_cur);
   CORPUS_START;
   double s = 0;
   for (int k = 0; k < 80; k += 3) {
      auto it = m.find(k);
      if (it != m.end())
         s += it->second;
   }
   CORPUS_STOP;
   corpus_close();
   printf("%g\n", s);
   return 0;
}
