/* Structure members on the stack and in a global: every location of the
 * lookup table is named down to its member. */
#include "gleipnir.h"
struct point { double x, y, z; };
struct view { int id; struct point data[4]; };
struct view gview;
int main(void)
{
    struct hist { int nbins; int counts[4]; } h;
    struct point pts[3];
    int i;
    GL_START;
    h.nbins = 4;                    /* h.nbins: one store of 4 */
    for (i = 0; i < 4; i++)
        h.counts[i] = i;            /* h.counts[0..3]: one store of 4 each */
    pts[2].z = 1.5;                 /* pts[2].z: one store of 8 */
    gview.data[1].y = pts[2].z;     /* gview.data[1].y: one store of 8 */
    GL_STOP;
    return h.counts[3] + (int) gview.data[1].y == 4 ? 0 : 1;
}
