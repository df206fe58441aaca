/* Two heap blocks whose addresses are passed to a function, not stored:
 * one allocated and used before GL_START, which the region never
 * touches, and one inside the region. Only the second is about the
 * region. */
#include <stdlib.h>
#include "gleipnir.h"

static long use(char *p) { p[0] = 1; return (long)p; }

int main(void) {
    long k = use(malloc(64)); /* before */
    GL_START;
    k += use(malloc(64)); /* inside */
    GL_STOP;
    return (int)(k & 1);
}
