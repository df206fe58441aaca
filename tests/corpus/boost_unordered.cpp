// Boost.Unordered (Debian's libboost1.74-dev): an unordered_map counting
// the values of a sequence, then looked up for every key of a range; the
// map's allocator records its blocks (bucket array and nodes) so that the
// harness can list them. It keeps each address complemented: a table of
// the blocks' addresses would hold them, and mapvis names a block by
// where the program keeps its address.
#include "corpus.h"
#include <boost/unordered_map.hpp>
#include <new>
#include <stdint.h>
#include <vector>

/* The blocks the map asked for: its bucket array and every node, each
 * address complemented (not a pointer to the block). */
static struct {
   uintptr_t notp;
   size_t bytes;
} blocks[4096];
static int nblocks, nfreed;

template <class T> struct Recording {
   typedef T value_type;
   Recording() {}
   template <class U> Recording(const Recording<U> &) {}
   T *allocate(size_t n)
   {
      T *p = static_cast<T *>(::operator new(n * sizeof(T)));
      if (nblocks < 4096)
         blocks[nblocks++] = {~(uintptr_t)p, n * sizeof(T)};
      return p;
   }
   void deallocate(T *p, size_t)
   {
      nfreed++;
      ::operator delete(p);
   }
   template <class U> bool operator==(const Recording<U> &) const { return true; }
   template <class U> bool operator!=(const Recording<U> &) const { return false; }
};

typedef boost::unordered_map<int, long, boost::hash<int>, std::equal_to<int>,
                             Recording<std::pair<const int, long> > > Counts;

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   std::vector<int> seq(3000);
   for (size_t i = 0; i < seq.size(); i++)
      seq[i] = (int)((i * 2654435761u) % 997) % 400;
   std::vector<long> found(500);
   Counts m;
   m.reserve(400);
   corpus_array("seq", seq.data(), sizeof(int) * seq.size());
   corpus_array("found", found.data(), sizeof(long) * found.size());
   CORPUS_START;
   for (size_t i = 0; i < seq.size(); i++)
      m[seq[i]]++;
   for (int k = 0; k < 500; k++) {
      Counts::const_iterator it = m.find(k);
      found[k] = it == m.end() ? -1 : it->second;
   }
   CORPUS_STOP;
   if (nfreed || nblocks >= 4096) {
      fprintf(stderr, "the map freed or allocated more than expected\n");
      return 1;
   }
   for (int b = 0; b < nblocks; b++)
      corpus_array("m", (void *)~blocks[b].notp, blocks[b].bytes);
   corpus_close();
   printf("%zu %ld\n", m.size(), found[7]);
   return 0;
}
