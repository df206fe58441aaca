/* A hostile traced program, for tests/hostile.rs.
   No argument: inside the pins, writes junk to every descriptor from 3 to
   4095 that is open on a regular file (as a program that fills "all" its
   files does; the tool's trace is one, unless kept out of reach), then
   stores 100 ints into a heap array `a`. Pipes and sockets the test
   harness may have left open are not written to.
   Argument "cut": truncates .mapvis/trace.mvt by name and exits before
   any region. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "gleipnir.h"

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "cut") == 0) {
        return truncate(".mapvis/trace.mvt", 0) == 0 ? 3 : 4;
    }
    int *a = malloc(100 * sizeof *a);
    GL_START;
    for (int fd = 3; fd < 4096; fd++) {
        struct stat st;
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
            (void)!write(fd, "junk junk junk junk", 19);
    }
    for (int i = 0; i < 100; i++) {
        a[i] = i;
    }
    GL_STOP;
    free(a);
    return 0;
}
