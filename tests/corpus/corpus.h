/*
 * corpus.h: what every harness of tests/corpus.rs shares.
 *
 * A harness runs real library calls between CORPUS_START and CORPUS_STOP
 * and writes a manifest (the file named by argv[1]) that says where the
 * arrays it knows lie and what mapvis should call them:
 *
 *   marker 0x...                      the region marker's address
 *   array NAME[|ALT...] 0x... BYTES   an array, its start and size
 *
 * The region is also marked by two stores to corpus_marker (1 at the
 * start, 2 at the end), so that an oracle that knows nothing of the pins
 * (Valgrind's Lackey, which prints every access) finds it in its output.
 * Compiler barriers keep the harness's own accesses on their side of the
 * markers at every optimisation level.
 */
#ifndef MAPVIS_CORPUS_H
#define MAPVIS_CORPUS_H

#include "gleipnir.h"
#include <stdio.h>
#include <stdlib.h>

static FILE *corpus_out;
static volatile int corpus_marker;

/* Opens the manifest named by argv[1] and writes the marker's address. */
static void corpus_open(int argc, char **argv)
{
   if (argc < 2 || !(corpus_out = fopen(argv[1], "w"))) {
      fprintf(stderr, "usage: %s MANIFEST\n", argv[0]);
      exit(2);
   }
   fprintf(corpus_out, "marker %p\n", (const void *)&corpus_marker);
}

/* An array of the region: `names` is the name mapvis should give it, or
 * several separated by '|' when more than one is right. */
static void corpus_array(const char *names, const void *p, size_t bytes)
{
   fprintf(corpus_out, "array %s %p %zu\n", names, p, bytes);
}

static void corpus_close(void)
{
   fclose(corpus_out);
}

#define CORPUS_START                                                           \
   do {                                                                        \
      GL_START;                                                                \
      corpus_marker = 1;                                                       \
      __asm__ volatile("" ::: "memory");                                       \
   } while (0)
#define CORPUS_STOP                                                            \
   do {                                                                        \
      __asm__ volatile("" ::: "memory");                                       \
      corpus_marker = 2;                                                       \
      GL_STOP;                                                                 \
   } while (0)

#endif
