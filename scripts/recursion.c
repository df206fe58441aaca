/*
 * recursion.c: a recursion N frames deep, two locals per frame, for the
 * naming of many instances of one variable (scripts/bench.sh recursion,
 * tests/one_naming.rs).
 *
 *   recursion [N]     default: 1000
 *
 * Inside GL_START ... GL_STOP, down() calls itself N times. Compiled
 * -g -O0, each frame stores x (from the global depth) and loads it twice,
 * stores y, adds the callee's result into y (all frames but the innermost)
 * and loads it once: per frame x takes 8 bytes stored and 16 loaded, y 8
 * stored and 8 loaded plus 8 loaded and stored by the addition. The stack
 * must hold N frames of about 32 bytes: the default 8 MB stack takes more
 * than 200 000.
 */
#include <stdlib.h>
#include "gleipnir.h"

static long depth;

static long down(void)
{
    long x = depth;
    long y = x * 2;
    if (--depth > 0)
        y += down();
    return x + y;
}

int main(int argc, char **argv)
{
    depth = argc > 1 ? atol(argv[1]) : 1000;
    if (depth <= 0)
        return 1;
    GL_START;
    long r = down();
    GL_STOP;
    return r == 0;
}
