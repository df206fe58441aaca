/* A global array and a file-level static. */
#include "gleipnir.h"
int garr[64];
static double scale = 2.0;
int main(void)
{
    int i;
    GL_START;
    for (i = 0; i < 64; i++)
        garr[i] = (int) (i * scale);    /* garr: 64 stores of 4, scale: 64 loads of 8 */
    GL_STOP;
    return garr[63] > 0 ? 0 : 1;
}
