/* Stores 100 ints into a heap array inside the region, then calls exec
   with the region still open: of /bin/true, or (with the argument "fail")
   of a program that does not exist, in which case the exec fails and the
   program goes on to GL_STOP. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gleipnir.h"
int main(int argc, char **argv)
{
    int i, *a = (int *) malloc(100 * sizeof(int));
    const char *prog = argc > 1 && strcmp(argv[1], "fail") == 0
        ? "/nonexistent/mapvis-no-such-program" : "/bin/true";
    GL_START;
    for (i = 0; i < 100; i++)
        a[i] = i;
    execl(prog, prog, (char *) 0);
    GL_STOP;
    free(a);
    return 0;
}
