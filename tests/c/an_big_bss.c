/* Static arrays far larger than a page: the loader maps most of a large
 * .bss as anonymous memory past the file's last page, which holds only
 * its start. */
#include "gleipnir.h"
#define N (1 << 22) /* 32 MB of doubles each */
static double big[N];
static double big2[N];
int small = 3;
int main(void)
{
    GL_START;
    big[0] = small;    /* big: 8 bytes stored, small: 4 loaded */
    big[N - 1] = 2.0;  /* big: 8 bytes stored, 32 MB on */
    big2[0] = 1.0;     /* big2: 8 bytes stored */
    big2[N - 1] = 2.0; /* big2: 8 bytes stored, 64 MB past the start */
    GL_STOP;
    return big[0] > 0 ? 0 : 1;
}
