/* uthash (Debian's uthash-dev): a hash map of structures, keyed by int,
 * built and searched inside the region. The table and its buckets are
 * allocated by the header's macros on the harness's own lines. */
#include "corpus.h"

/* uthash compares keys with memcmp unless told otherwise (a documented
 * hook). glibc's memcmp picks its loads by the page offset of its
 * arguments, which differ between the two runs the test compares (their
 * allocators differ), so a plain byte compare keeps the runs alike. */
static int corpus_keycmp(const void *a, const void *b, size_t n)
{
   const unsigned char *x = a, *y = b;
   for (size_t i = 0; i < n; i++)
      if (x[i] != y[i])
         return x[i] - y[i];
   return 0;
}
#define HASH_KEYCMP(a, b, n) corpus_keycmp(a, b, n)
#include <uthash.h>

#define N 48

struct item {
   int id;
   double value;
   UT_hash_handle hh;
};

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   struct item *items = NULL;
   struct item *made[N];
   int keys[N];
   for (int i = 0; i < N; i++)
      keys[i] = (i * 37) % 101;
   corpus_array("keys", keys, sizeof keys);
   CORPUS_START;
   for (int i = 0; i < N; i++) {
      struct item *it = malloc(sizeof *it);
      it->id = keys[i];
      it->value = i * 0.5;
      HASH_ADD_INT(items, id, it);
      made[i] = it;
   }
   double sum = 0;
   for (int i = 0; i < N; i += 3) {
      struct item *found;
      HASH_FIND_INT(items, &keys[i], found);
      if (found)
         sum += found->value;
   }
   CORPUS_STOP;
   for (int i = 0; i < N; i++)
      corpus_array("it", made[i], sizeof *made[i]);
   corpus_array("made", made, sizeof made);
   corpus_close();
   printf("%g %u\n", sum, HASH_COUNT(items));
   return 0;
}
