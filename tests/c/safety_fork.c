/* Forks inside the region: the parent and the child each write their own
   trace. Before the fork: 64 stores to a. Child: 32 stores to b, then exit.
   Parent: waits, then 16 more stores to a. */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "gleipnir.h"
int main(void)
{
    int i, *a = (int *) malloc(64 * sizeof(int));
    int *b = (int *) malloc(32 * sizeof(int));
    pid_t child;
    GL_START;
    for (i = 0; i < 64; i++) a[i] = i;
    child = fork();
    if (child == 0) {
        for (i = 0; i < 32; i++) b[i] = i;
        GL_STOP;
        _exit(0);
    }
    waitpid(child, NULL, 0);
    for (i = 0; i < 16; i++) a[i] = -i;
    GL_STOP;
    free(a);
    free(b);
    return 0;
}
