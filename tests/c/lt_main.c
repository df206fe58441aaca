/* Link-time optimisation (-flto): gcc writes this program's code and
 * locations in a link-time unit whose DIEs name nothing; the names and
 * types stay in the compile-time units of lt_main.c and lt_work.c.
 * Built as cc -g -O2 -flto lt_main.c lt_work.c. */
#include <stdlib.h>
#include "gleipnir.h"
#include "lt_work.h"

double table[64];

int main(void) {
    struct arena ar;
    ar.base = malloc(32 * sizeof(double));
    ar.cap = 32;
    ar.used = 0;
    for (int i = 0; i < 64; i++)
        table[i] = i;
    GL_START;
    double s = fill(&ar, table, 32);
    GL_STOP;
    free(ar.base);
    return s > 0 ? 0 : 1;
}
