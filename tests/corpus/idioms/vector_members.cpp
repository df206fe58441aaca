// Item: a class's std::vector members, sized in a method the constructor
// calls (inlined at -O2), are named as members, never after the object.
#include "corpus.h"
#include <vector>

class Domain {
 public:
   explicit Domain(int n) { AllocateNodes(n); }
   void AllocateNodes(int n)
   {
      m_x.resize(n);
      m_y.resize(n);
      m_nodelist.resize(4 * n);
   }
   std::vector<double> m_x;
   std::vector<double> m_y;
   std::vector<int> m_nodelist;
};

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   Domain *locDom = new Domain(100);
   corpus_array("m_x|locDom.m_x|locDom->m_x", locDom->m_x.data(), 100 * sizeof(double));
   corpus_array("m_y|locDom.m_y|locDom->m_y", locDom->m_y.data(), 100 * sizeof(double));
   corpus_array("m_nodelist|locDom.m_nodelist|locDom->m_nodelist", locDom->m_nodelist.data(),
                400 * sizeof(int));
   corpus_array("locDom", locDom, sizeof *locDom);
   CORPUS_START;
   for (int i = 0; i < 100; i++) {
      locDom->m_x[i] = i;
      locDom->m_y[i] = 2.0 * i;
   }
   for (int i = 0; i < 400; i++)
      locDom->m_nodelist[i] = i / 4;
   double s = 0;
   for (int i = 0; i < 400; i++)
      s += locDom->m_x[locDom->m_nodelist[i]];
   CORPUS_STOP;
   corpus_close();
   printf("%g\n", s);
   return 0;
}
