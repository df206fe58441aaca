/* Six heap blocks whose addresses are passed to a function, not stored:
 * the statements cannot name them, so the analysis makes six notes of
 * one kind, one per allocating line. */
#include <stdlib.h>
#include "gleipnir.h"

static long use(char *p) { p[0] = 1; return (long)p; }

int main(void) {
    long k = 0;
    GL_START;
    k += use(malloc(64)); /* passed 1 */
    k += use(malloc(64)); /* passed 2 */
    k += use(malloc(64)); /* passed 3 */
    k += use(malloc(64)); /* passed 4 */
    k += use(malloc(64)); /* passed 5 */
    k += use(malloc(64)); /* passed 6 */
    GL_STOP;
    return (int)(k & 1);
}
