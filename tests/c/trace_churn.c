/* Churn inside the pins: N blocks allocated, written and freed one at a
 * time, then M maps of this program's own file made and unmapped, each
 * turn with a varying number of stores (so the 64 KiB flush point falls at
 * every place within a turn's records, not at one). Free records carry a
 * call stack and map records the file's name, so the trace is mostly such
 * records, and its blocks' boundaries fall inside them again and again. */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "gleipnir.h"
#define N 200000
#define M 20000

static char pad[16];

int main(int argc, char **argv)
{
    int fd = open(argv[0], O_RDONLY);
    if (fd < 0)
        return 2;
    (void) argc;
    GL_START;
    for (int i = 0; i < N; i++) {
        char *volatile p = malloc(16 + i % 64);
        for (int j = 0; j < i % 13; j++)
            p[j] = 1;
        free(p);
    }
    for (int i = 0; i < M; i++) {
        void *m = mmap(0, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED)
            return 3;
        for (int j = 0; j < i % 13; j++)
            pad[j] = 1;
        munmap(m, 4096);
    }
    GL_STOP;
    close(fd);
    return 0;
}
