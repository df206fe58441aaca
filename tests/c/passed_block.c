/* A heap block whose address is passed to a function, not stored: the
 * statement cannot name it, and the note says why. The pins header comes
 * from compile_exe's include path, not from this folder. */
#include <stdlib.h>
#include "gleipnir.h"

static long use(char *p) { p[0] = 1; return (long)p; }

int main(void) {
    GL_START;
    long k = use(malloc(64)); /* passed */
    GL_STOP;
    return (int)(k & 1);
}
