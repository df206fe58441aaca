/* roots.c: the programs of `scripts/bench.sh roots`, which times the
   tracer's naming evidence (trace format 6: the root snapshot at GL_START
   and the pointer stores of blocks allocated in the region).

     roots tree N   the region builds a binary search tree of N nodes (N
                    allocations, each node's address stored into its
                    parent) and sums its keys
     roots foot N   N blocks of 512 bytes held by a table and two 64 MB
                    arrays are allocated before the region, which the
                    snapshot scans; the region sums a few of them */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gleipnir.h"

struct node {
   long key;
   struct node *left, *right;
};

static struct node *insert(struct node *t, long key)
{
   struct node **at = &t;
   while (*at)
      at = key < (*at)->key ? &(*at)->left : &(*at)->right;
   *at = calloc(1, sizeof **at);
   (*at)->key = key;
   return t;
}

static long sum(const struct node *t)
{
   return t ? t->key + sum(t->left) + sum(t->right) : 0;
}

static long tree(long n)
{
   struct node *root = NULL;
   unsigned long x = 88172645463325252ul;
   long s;
   GL_START;
   for (long i = 0; i < n; i++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      root = insert(root, (long)(x % 1000000007ul));
   }
   s = sum(root);
   GL_STOP;
   return s;
}

static long foot(long n)
{
   char **table = malloc(n * sizeof *table);
   size_t big = 64u << 20;
   char *a = malloc(big), *b = malloc(big);
   long s = 0;
   for (long i = 0; i < n; i++) {
      table[i] = malloc(512);
      memset(table[i], (int)i, 512);
   }
   memset(a, 1, big);
   memset(b, 2, big);
   GL_START;
   for (long i = 0; i < n; i += 997)
      s += table[i][i % 512] + a[i] + b[i];
   GL_STOP;
   return s;
}

int main(int argc, char **argv)
{
   long n = argc > 2 ? atol(argv[2]) : 100000;
   if (argc < 2 || (strcmp(argv[1], "tree") && strcmp(argv[1], "foot"))) {
      fprintf(stderr, "usage: roots tree|foot N\n");
      return 2;
   }
   printf("%ld\n", strcmp(argv[1], "tree") ? foot(n) : tree(n));
   return 0;
}
