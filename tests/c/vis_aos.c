/* An array of structures, global and on the heap, for the field-column
 * view of 2d_memory_access_pattern. Field `m` of ps is never touched. */
#include <stdlib.h>
#include "gleipnir.h"

struct particle {
    double x, y;
    int id;
    float m;
};

struct particle ps[16];

int main(void) {
    struct particle *hp = malloc(8 * sizeof *hp);
    GL_START;
    for (int i = 0; i < 16; i++) {
        ps[i].x = i;
        ps[i].y = ps[i].x * 2;
        ps[i].id = i;
    }
    for (int i = 0; i < 8; i++) {
        hp[i].m = 1.0f;
        hp[i].id = ps[i].id;
    }
    GL_STOP;
    free(hp);
    return 0;
}
