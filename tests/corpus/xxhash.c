/* xxHash (Debian's libxxhash-dev), inlined from its header: one-shot and
 * streaming hashes of a heap buffer; the streaming state comes from the
 * header's own allocating helper. */
#include "corpus.h"
#define XXH_INLINE_ALL
#include <xxhash.h>
#include <string.h>

#define LEN 3000

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   unsigned char *data = malloc(LEN);
   for (int i = 0; i < LEN; i++)
      data[i] = (unsigned char)(i * 131 + 7);
   unsigned long long digests[4];
   corpus_array("data", data, LEN);
   corpus_array("digests", digests, sizeof digests);
   CORPUS_START;
   digests[0] = XXH64(data, LEN, 1);
   digests[1] = XXH3_64bits(data, LEN);
   XXH3_state_t *state = XXH3_createState();
   XXH3_64bits_reset(state);
   for (int off = 0; off < LEN; off += 700)
      XXH3_64bits_update(state, data + off, LEN - off < 700 ? LEN - off : 700);
   digests[2] = XXH3_64bits_digest(state);
   digests[3] = XXH32(data, 100, 0);
   CORPUS_STOP;
   corpus_array("state", state, sizeof *state);
   corpus_close();
   printf("%llx %llx %llx %llx\n", digests[0], digests[1], digests[2], digests[3]);
   return 0;
}
