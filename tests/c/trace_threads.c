/* Two threads each fill their own heap array inside one region. */
#include <pthread.h>
#include <stdlib.h>
#include "gleipnir.h"
#define N 64
static void *fill(void *p)
{
    int i, *a = (int *) p;
    for (i = 0; i < N; i++) a[i] = i;
    return NULL;
}
int main(void)
{
    pthread_t t;
    int *mine = (int *) malloc(N * sizeof(int));
    int *theirs = (int *) malloc(N * sizeof(int));
    GL_START;
    pthread_create(&t, NULL, fill, theirs);
    fill(mine);
    pthread_join(t, NULL);
    GL_STOP;
    free(mine);
    free(theirs);
    return 0;
}
