/* Stores 100 ints into a heap array inside the region, then calls exec:
   of /bin/true with the region still open; with the argument "fail", of
   a program that does not exist, so that the exec fails and the program
   goes on to GL_STOP; with "after", of /bin/true after GL_STOP. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gleipnir.h"
int main(int argc, char **argv)
{
    int i, *a = (int *) malloc(100 * sizeof(int));
    int fail = argc > 1 && strcmp(argv[1], "fail") == 0;
    int after = argc > 1 && strcmp(argv[1], "after") == 0;
    const char *prog = fail ? "/nonexistent/mapvis-no-such-program" : "/bin/true";
    GL_START;
    for (i = 0; i < 100; i++)
        a[i] = i;
    if (after)
        GL_STOP;
    execl(prog, prog, (char *) 0);
    if (!after)
        GL_STOP;
    free(a);
    return 0;
}
