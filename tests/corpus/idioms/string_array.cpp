// Item: an array of std::string filled by assignment (`sect[s] = line`),
// each string longer than the small-string buffer so that it owns a heap
// buffer. The buffers are held by the array's elements: `sect[i]`, one
// row, as the rows of a table of pointers are `rows[i]`.
#include "corpus.h"
#include <string>

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   std::string sect[4];
   std::string line;
   line.reserve(64);
   for (int s = 0; s < 4; s++) {
      line.assign(40 + s, (char)('a' + s));
      sect[s] = line;
   }
   for (int s = 0; s < 4; s++)
      corpus_array("sect[i]|sect", sect[s].data(), sect[s].size() + 1);
   corpus_array("line", line.data(), line.capacity() + 1);
   CORPUS_START;
   unsigned long sum = 0;
   for (int s = 0; s < 4; s++)
      for (size_t k = 0; k < sect[s].size(); k++)
         sum += (unsigned char)sect[s][k];
   for (int s = 0; s < 4; s++)
      sect[s][0] = 'Z';
   CORPUS_STOP;
   corpus_close();
   printf("%lu %s\n", sum, sect[3].c_str());
   return 0;
}
