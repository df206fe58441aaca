/* mimalloc (the allocator's sources bundled in the libmimalloc-sys crate,
 * its v2 line, built as one unit from src/static.c): inside the region
 * the harness allocates through mimalloc's own interface (mi_malloc,
 * mi_calloc, mi_malloc_aligned, a heap of its own with mi_heap_malloc),
 * builds a list, fills the blocks and computes on them, and frees
 * temporaries it does not track.
 *
 * The arrays are the blocks mimalloc returned, each held by a variable of
 * the harness (`vec`, `mat`, `counts`, `words`, the list's nodes from
 * `head`). mimalloc takes its memory from the system with mmap, in
 * segments it carves itself, and tells Valgrind nothing of its blocks. */
#include "corpus.h"
#include <mimalloc.h>

#define N 200
#define M 24
#define K 64
#define NODES 48

struct node {
   int key;
   double weight;
   struct node *next;
};

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   /* mimalloc sets itself up on its first call: outside the region. */
   mi_free(mi_malloc(16));
   struct node *made[NODES];
   CORPUS_START;
   double *vec = mi_malloc(N * sizeof *vec);
   double *mat = mi_malloc_aligned(M * M * sizeof *mat, 64);
   int *counts = mi_calloc(K, sizeof *counts);
   mi_heap_t *heap = mi_heap_new();
   char *words = mi_heap_malloc(heap, 16 * K);
   struct node *head = NULL;
   for (int i = 0; i < N; i++)
      vec[i] = (i * 29) % 113 * 0.5;
   for (int i = 0; i < M; i++)
      for (int j = 0; j < M; j++)
         mat[i * M + j] = vec[i] * vec[j + M];
   for (int i = 0; i < NODES; i++) {
      double *tmp = mi_malloc(8 * sizeof *tmp);
      for (int k = 0; k < 8; k++)
         tmp[k] = vec[(i + k) % N];
      struct node *n = mi_malloc(sizeof *n);
      n->key = (i * 13) % K;
      n->weight = tmp[0] + tmp[7];
      n->next = head;
      head = n;
      made[i] = n;
      mi_free(tmp);
   }
   for (struct node *n = head; n; n = n->next)
      counts[n->key]++;
   for (int k = 0; k < K; k++)
      for (int c = 0; c < 16; c++)
         words[k * 16 + c] = (char)('a' + (k + c * counts[k]) % 26);
   double sum = 0;
   for (int i = 0; i < M; i++)
      sum += mat[i * M + i];
   CORPUS_STOP;
   corpus_array("vec", vec, N * sizeof *vec);
   corpus_array("mat", mat, M * M * sizeof *mat);
   corpus_array("counts", counts, K * sizeof *counts);
   corpus_array("words", words, 16 * K);
   for (int i = 0; i < NODES; i++)
      corpus_array("head", made[i], sizeof *made[i]);
   corpus_close();
   printf("%g %d %c\n", sum, counts[0], words[5]);
   mi_heap_destroy(heap);
   return 0;
}
